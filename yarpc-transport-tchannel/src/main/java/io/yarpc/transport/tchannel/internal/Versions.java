package io.yarpc.transport.tchannel.internal;

/** Version strings this transport puts in its init frames. */
final class Versions {
  /** The {@code tchannel_version} init header: this library's version. */
  public static final String LIBRARY = versionOf(Versions.class.getPackage());

  private Versions() {}

  private static String versionOf(Package p) {
    String v = p == null ? null : p.getImplementationVersion();
    return v == null ? "yarpc-java-0.1.0" : "yarpc-java-" + v;
  }
}
