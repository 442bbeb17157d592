package io.yarpc.discovery.internal;

import io.netty.util.NetUtil;
import io.yarpc.internal.GoStrings;
import java.net.Inet6Address;
import java.net.InetAddress;

/** {@code host:port} text: checked as a peers file gives it, and made from what DNS answers. */
public final class HostPorts {
  private HostPorts() {}

  /**
   * Checks that {@code text} is {@code host:port} (an IPv6 host in brackets, port 1 to 65535) and
   * returns it trimmed.
   *
   * @throws IllegalArgumentException {@code not host:port: "..."}, with what is wrong
   */
  public static String check(String text) {
    String s = text.trim();
    int colon = s.lastIndexOf(':');
    if (colon < 0) {
      throw bad(text, "no port");
    }
    String host = s.substring(0, colon);
    String port = s.substring(colon + 1);
    if (host.startsWith("[")) {
      if (!host.endsWith("]") || host.length() < 3) {
        throw bad(text, "an IPv6 host needs its closing bracket");
      }
    } else if (host.contains(":")) {
      throw bad(text, "an IPv6 host goes in brackets, [::1]:8080");
    }
    if (host.isEmpty()) {
      throw bad(text, "no host");
    }
    if (host.chars().anyMatch(c -> c <= ' ' || c == '/' || c == '@')) {
      throw bad(text, "the host has a space, '/' or '@'");
    }
    if (port.isEmpty() || port.length() > 5 || !port.chars().allMatch(c -> c >= '0' && c <= '9')) {
      throw bad(text, "the port is not a number");
    }
    int p = Integer.parseInt(port);
    if (p < 1 || p > 65535) {
      throw bad(text, "the port must be 1 to 65535");
    }
    return s;
  }

  /** {@code address:port}, an IPv6 address in brackets. */
  public static String of(InetAddress address, int port) {
    String host = NetUtil.toAddressString(address); // IPv6 compressed: ::1, 2001:db8::1
    return (address instanceof Inet6Address ? "[" + host + "]" : host) + ":" + port;
  }

  /** {@code name:port}, without the trailing dot of a fully qualified name. */
  public static String of(String name, int port) {
    return (name.endsWith(".") ? name.substring(0, name.length() - 1) : name) + ":" + port;
  }

  private static IllegalArgumentException bad(String text, String why) {
    return new IllegalArgumentException(
        "not host:port: " + GoStrings.quote(text) + " (" + why + ")");
  }
}
