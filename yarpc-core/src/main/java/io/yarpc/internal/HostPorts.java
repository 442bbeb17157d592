package io.yarpc.internal;

import java.net.InetSocketAddress;

/**
 * {@code host:port} text, checked in one place for every module that reads it: peers (configuration
 * files, peers files, command-line flags) and listen addresses. An IPv6 host goes in brackets ({@code
 * [::1]:8080}). A rejected text gives {@code not host:port: "<text>" (<what is wrong>)}, the text quoted as
 * Go's {@code %q} does.
 */
public final class HostPorts {
  private HostPorts() {}

  /**
   * Checks that {@code text} is a peer's {@code host:port}: a host, and a port from 1 to 65535. Returns
   * it trimmed.
   *
   * @throws IllegalArgumentException {@code not host:port: "..." (...)}, naming what is wrong
   */
  public static String checkPeer(String text) {
    return checkPeer(text, null);
  }

  /**
   * As {@link #checkPeer(String)}, but {@code :port} is {@code hostWhenMissing:port} when {@code
   * hostWhenMissing} is not null (Go dials {@code :port} on this host).
   */
  public static String checkPeer(String text, String hostWhenMissing) {
    String s = text.trim();
    if (hostWhenMissing != null && s.startsWith(":")) {
      s = hostWhenMissing + s;
    }
    int colon = s.lastIndexOf(':');
    if (colon == 0) {
      throw bad(text, "no host");
    }
    checkHost(text, colon < 0 ? s : s.substring(0, colon));
    int port = port(text, colon < 0 ? null : s.substring(colon + 1));
    if (port < 1 || port > 65535) {
      throw bad(text, "the port must be 1 to 65535");
    }
    return s;
  }

  /**
   * Parses a listen address: {@code host:port}, {@code [v6]:port}, or {@code :port} (all interfaces,
   * 0.0.0.0); port 0 asks for any free port. The address is unresolved.
   *
   * @throws IllegalArgumentException {@code not host:port: "..." (...)}, naming what is wrong
   */
  public static InetSocketAddress parseListen(String text) {
    String s = text.trim();
    int colon = s.lastIndexOf(':');
    String host = colon < 0 ? s : s.substring(0, colon);
    checkHost(text, host);
    int port = port(text, colon < 0 ? null : s.substring(colon + 1));
    if (port > 65535) {
      throw bad(text, "the port must be 0 to 65535");
    }
    if (host.isEmpty()) {
      host = "0.0.0.0";
    } else if (host.startsWith("[")) {
      host = host.substring(1, host.length() - 1);
    }
    return InetSocketAddress.createUnresolved(host, port);
  }

  private static void checkHost(String text, String host) {
    if (host.chars().anyMatch(c -> c <= ' ' || c == '/' || c == '@')) {
      throw bad(text, "the host has a space, '/' or '@'");
    }
    if (host.startsWith("[")) {
      if (!host.endsWith("]") || host.length() < 3) {
        throw bad(text, "an IPv6 host needs its closing bracket");
      }
    } else if (host.contains(":")) {
      throw bad(text, "an IPv6 host goes in brackets, [::1]:8080");
    }
  }

  private static int port(String text, String port) {
    if (port == null) {
      throw bad(text, "no port");
    }
    if (port.isEmpty() || port.length() > 5 || !port.chars().allMatch(c -> c >= '0' && c <= '9')) {
      throw bad(text, "the port is not a number");
    }
    return Integer.parseInt(port);
  }

  private static IllegalArgumentException bad(String text, String why) {
    return new IllegalArgumentException(
        "not host:port: " + GoStrings.quote(text) + " (" + why + ")");
  }
}
