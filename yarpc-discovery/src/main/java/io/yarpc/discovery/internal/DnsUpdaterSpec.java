package io.yarpc.discovery.internal;

import io.netty.util.NetUtil;
import io.yarpc.config.spi.ConfigContext;
import io.yarpc.config.spi.ConfigSection;
import io.yarpc.config.spi.PeerListUpdaterSpec;
import io.yarpc.discovery.DnsPeerListUpdater;
import io.yarpc.discovery.DnsPeerListUpdater.RecordType;
import io.yarpc.internal.GoDurations;
import io.yarpc.internal.GoStrings;
import io.yarpc.peer.PeerList;
import io.yarpc.peer.PeerListUpdater;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * The {@code dns} block of a peer list: a {@link DnsPeerListUpdater}. Keys: {@code name} (required),
 * {@code record} ({@code A}, {@code AAAA} or {@code SRV}; default {@code A}, as yarpc-go's documentation
 * spells it), {@code port} (required with A and AAAA, refused with SRV), {@code server} (an IP address,
 * port 53 unless given: {@code 10.96.0.10}, {@code 127.0.0.1:5353}, {@code [::1]:53}), {@code timeout},
 * {@code minInterval}, {@code maxInterval} and {@code resolveTargets} (SRV only). Registered through
 * {@code META-INF/services}.
 */
public final class DnsUpdaterSpec implements PeerListUpdaterSpec {
  /** For {@link java.util.ServiceLoader}. */
  public DnsUpdaterSpec() {}

  @Override
  public String name() {
    return DnsPeerListUpdater.KIND;
  }

  @Override
  public Function<PeerList, PeerListUpdater> buildUpdater(
      ConfigSection c, UnaryOperator<String> identify, ConfigContext context) {
    String name = c.requireString("name");
    RecordType record = c.enumValue("record", RecordType.class);
    Integer port = c.integer("port");
    String server = c.string("server");
    Duration timeout = c.duration("timeout");
    Duration minInterval = c.duration("minInterval");
    Duration maxInterval = c.duration("maxInterval");
    Boolean resolveTargets = c.bool("resolveTargets");
    if (name == null) {
      return null;
    }
    DnsPeerListUpdater.Builder[] holder = new DnsPeerListUpdater.Builder[1];
    c.apply("name", () -> holder[0] = DnsPeerListUpdater.builder(name));
    DnsPeerListUpdater.Builder b = holder[0];
    if (b == null) {
      return null;
    }
    RecordType type = record != null ? record : c.has("record") ? null : RecordType.A;
    if (type != null) {
      c.apply("record", () -> b.record(type));
      if (type != RecordType.SRV && port == null && !c.has("port")) {
        c.problem("port", "missing required key (" + type + " records give addresses only)");
      }
      if (type == RecordType.SRV && port != null) {
        c.problem("port", "not with SRV records: each record gives its own port");
      }
      if (type != RecordType.SRV && resolveTargets != null) {
        c.problem("resolveTargets", "only with record: SRV");
      }
    }
    if (port != null && type != RecordType.SRV) {
      c.apply("port", () -> b.port(port));
    }
    if (server != null) {
      c.apply("server", () -> b.server(server(server)));
    }
    if (timeout != null) {
      c.apply("timeout", () -> b.timeout(timeout));
    }
    if (minInterval != null) {
      c.apply("minInterval", () -> b.minInterval(minInterval));
    }
    if (maxInterval != null) {
      c.apply("maxInterval", () -> b.maxInterval(maxInterval));
    }
    Duration min = minInterval != null ? minInterval : DnsPeerListUpdater.DEFAULT_MIN_INTERVAL;
    Duration max = maxInterval != null ? maxInterval : DnsPeerListUpdater.DEFAULT_MAX_INTERVAL;
    if (min.compareTo(max) > 0 && !min.isZero() && !max.isZero()) {
      c.problem(
          minInterval != null ? "minInterval" : "maxInterval",
          GoDurations.format(min)
              + " is longer than "
              + (maxInterval != null ? "maxInterval " : "the default maxInterval ")
              + GoDurations.format(max));
    }
    if (resolveTargets != null && type == RecordType.SRV) {
      b.resolveTargets(resolveTargets);
    }
    b.identify(identify);
    if (c.hasProblems()) {
      return null;
    }
    return b::build;
  }

  /**
   * A DNS server's address: an IP address, with a port (53 when it has none).
   *
   * @throws IllegalArgumentException {@code not an IP address: "..."}
   */
  static InetSocketAddress server(String text) {
    String s = text.trim();
    String host = s;
    int port = 53;
    if (s.startsWith("[")) {
      int close = s.indexOf(']');
      if (close < 0) {
        throw badServer(text);
      }
      host = s.substring(1, close);
      String rest = s.substring(close + 1);
      if (!rest.isEmpty()) {
        if (!rest.startsWith(":")) {
          throw badServer(text);
        }
        port = port(rest.substring(1), text);
      }
    } else if (s.indexOf(':') >= 0 && s.indexOf(':') == s.lastIndexOf(':')) {
      host = s.substring(0, s.indexOf(':'));
      port = port(s.substring(s.indexOf(':') + 1), text);
    }
    byte[] ip = NetUtil.createByteArrayFromIpAddressString(host);
    if (ip == null) {
      throw badServer(text);
    }
    try {
      return new InetSocketAddress(InetAddress.getByAddress(ip), port);
    } catch (UnknownHostException e) {
      throw badServer(text);
    }
  }

  private static int port(String digits, String text) {
    if (digits.isEmpty()
        || digits.length() > 5
        || !digits.chars().allMatch(ch -> ch >= '0' && ch <= '9')
        || Integer.parseInt(digits) < 1
        || Integer.parseInt(digits) > 65535) {
      throw new IllegalArgumentException("not a port from 1 to 65535 in " + GoStrings.quote(text));
    }
    return Integer.parseInt(digits);
  }

  private static IllegalArgumentException badServer(String text) {
    return new IllegalArgumentException(
        "not an IP address with an optional port: "
            + GoStrings.quote(text)
            + " (e.g. 10.96.0.10, 127.0.0.1:5353, [::1]:53)");
  }
}
