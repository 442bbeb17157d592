package io.yarpc.examples;

import io.yarpc.examples.FlagSet.Flag;
import io.yarpc.tls.ClientAuth;
import io.yarpc.tls.TlsConfig;
import io.yarpc.tls.TlsMode;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The TLS flags of {@code serve} and {@code call}, turned into a {@link TlsConfig}.
 *
 * <ul>
 *   <li>{@code serve}: {@code --tls-cert FILE --tls-key FILE} (the server's chain and PKCS#8 key),
 *       {@code --tls-ca FILE} (roots for client certificates; clients are then asked for one, see {@code
 *       --tls-client-auth}), {@code --tls-mode disabled|permissive|enforced} (default enforced), {@code
 *       --tls-client-auth none|optional|require} (default optional with {@code --tls-ca}, else none).
 *   <li>{@code call}: {@code --tls-ca FILE} (roots for the server; without it the JDK's), {@code
 *       --tls-cert FILE --tls-key FILE} (a client certificate for mutual TLS), {@code --tls-server-name
 *       NAME} (the name to verify instead of the peer's host). Any of them turns TLS on; {@link
 *       #clientSection} gives them to a configuration document as {@code transports.<name>.tls}.
 * </ul>
 */
final class TlsFlags {
  /** The group title of the TLS flags in a command's usage. */
  static final String GROUP = "TLS";

  static final List<Flag> SERVE =
      List.of(
          new Flag("tls-cert", "FILE", null, "the server's certificate chain (PEM); turns TLS on"),
          new Flag("tls-key", "FILE", null, "its private key (PKCS#8 PEM)"),
          new Flag("tls-ca", "FILE", null, "roots for client certificates (PEM)"),
          new Flag(
              "tls-mode",
              "MODE",
              "enforced with --tls-cert, else disabled",
              "disabled, permissive (TLS and plaintext on one port) or enforced"),
          new Flag(
              "tls-client-auth",
              "AUTH",
              "optional with --tls-ca, else none",
              "none, optional or require: whether clients must show a certificate"));

  static final List<Flag> CALL =
      List.of(
          new Flag("tls-ca", "FILE", "the JDK's roots", "roots for the server's certificate (PEM)"),
          new Flag("tls-cert", "FILE", null, "a client certificate chain for mutual TLS (PEM)"),
          new Flag("tls-key", "FILE", null, "its private key (PKCS#8 PEM)"),
          new Flag("tls-server-name", "NAME", "the peer's host", "the name to verify"));

  private TlsFlags() {}

  /** The mode {@code serve} runs its inbounds in. */
  static TlsMode mode(Flags flags) throws Flags.UsageException {
    String mode = flags.get("tls-mode", null);
    boolean hasCertificate = flags.get("tls-cert", null) != null;
    if (mode == null) {
      return hasCertificate ? TlsMode.ENFORCED : TlsMode.DISABLED;
    }
    TlsMode m = parse(TlsMode.class, mode, "--tls-mode", "disabled, permissive or enforced");
    if (m != TlsMode.DISABLED && !hasCertificate) {
      throw new Flags.UsageException("--tls-mode " + mode + " needs --tls-cert and --tls-key");
    }
    return m;
  }

  /** The server's config, or {@code null} without {@code --tls-cert}. */
  static TlsConfig server(Flags flags) throws Flags.UsageException {
    String cert = flags.get("tls-cert", null);
    String key = flags.get("tls-key", null);
    String ca = flags.get("tls-ca", null);
    if (cert == null && key == null) {
      if (ca != null || flags.get("tls-client-auth", null) != null) {
        throw new Flags.UsageException(
            "--tls-ca and --tls-client-auth need --tls-cert and --tls-key");
      }
      return null;
    }
    TlsConfig.Builder b = TlsConfig.builder();
    keyPair(b, cert, key);
    if (ca != null) {
      b.trustedCertificates(Path.of(ca));
    }
    String auth = flags.get("tls-client-auth", null);
    b.clientAuth(
        auth != null
            ? parse(ClientAuth.class, auth, "--tls-client-auth", "none, optional or require")
            : ca != null ? ClientAuth.OPTIONAL : ClientAuth.NONE);
    return build(b);
  }

  /** The client's config, or {@code null} when no TLS flag is given. */
  static TlsConfig client(Flags flags) throws Flags.UsageException {
    String cert = flags.get("tls-cert", null);
    String key = flags.get("tls-key", null);
    String ca = flags.get("tls-ca", null);
    String serverName = flags.get("tls-server-name", null);
    if (cert == null && key == null && ca == null && serverName == null) {
      return null;
    }
    TlsConfig.Builder b = TlsConfig.builder();
    if (cert != null || key != null) {
      keyPair(b, cert, key);
    }
    if (ca != null) {
      b.trustedCertificates(Path.of(ca));
    }
    b.serverName(serverName);
    return build(b);
  }

  /**
   * The client's flags as the {@code tls} block of a configuration document's transport section
   * ({@code caFile}, {@code certFile}, {@code keyFile}, {@code serverName}), or null when none is
   * given. The flags are checked first as {@link #client} checks them, so that a bad one is reported
   * by its flag's name.
   */
  static Map<String, Object> clientSection(Flags flags) throws Flags.UsageException {
    if (client(flags) == null) {
      return null;
    }
    Map<String, Object> tls = new LinkedHashMap<>();
    putIfGiven(tls, "caFile", flags.get("tls-ca", null));
    putIfGiven(tls, "certFile", flags.get("tls-cert", null));
    putIfGiven(tls, "keyFile", flags.get("tls-key", null));
    putIfGiven(tls, "serverName", flags.get("tls-server-name", null));
    return tls;
  }

  private static void putIfGiven(Map<String, Object> section, String key, String value) {
    if (value != null) {
      section.put(key, value);
    }
  }

  private static void keyPair(TlsConfig.Builder b, String cert, String key)
      throws Flags.UsageException {
    if (cert == null || key == null) {
      throw new Flags.UsageException("--tls-cert and --tls-key go together");
    }
    b.keyCertChain(Path.of(cert), Path.of(key));
  }

  private static TlsConfig build(TlsConfig.Builder b) throws Flags.UsageException {
    try {
      return b.build();
    } catch (IllegalArgumentException e) {
      throw new Flags.UsageException(e.getMessage());
    }
  }

  private static <E extends Enum<E>> E parse(
      Class<E> type, String text, String flag, String allowed) throws Flags.UsageException {
    try {
      return Enum.valueOf(type, text.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new Flags.UsageException(flag + " must be " + allowed + ", got \"" + text + "\"");
    }
  }
}
