package io.yarpc.transport.http.internal;

import io.yarpc.config.spi.ConfigContext;
import io.yarpc.config.spi.ConfigSection;
import io.yarpc.config.spi.TransportSpec;
import io.yarpc.peer.PeerChooser;
import io.yarpc.tls.TlsMode;
import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.RpcType;
import io.yarpc.transport.Transport;
import io.yarpc.transport.TransportComponent;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpOutbound;
import io.yarpc.transport.http.HttpTransport;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The {@code http} sections of a configuration file (yarpc-go's {@code transport/http} keys where
 * yarpc-java has the feature, the builders' names for what only yarpc-java has); registered through
 * {@code META-INF/services/io.yarpc.config.spi.TransportSpec}.
 *
 * <pre>
 * transports:
 *   http:
 *     connectTimeout: 30s          # opening a connection for a call
 *     connTimeout: 500ms           # a peer's probe (yarpc-go's)
 *     connBackoff: {exponential: {first: 10ms, max: 1m}}
 *     maxIdleConnsPerHost: 16      # or maxIdleConnectionsPerPeer
 *     idleConnTimeout: 15m         # or idleConnectionTimeout
 *     eventLoopThreads: 0
 *     receiveIntoHeap: true
 *     maxResponseHeaderSize: 1048576
 *     tls: {caFile: ca.pem}        # for https peers
 *     keepalive: {time: 30s, timeout: 20s}   # pings; off without the section
 * inbounds:
 *   http:
 *     address: ":8080"
 *     http2: true                  # or disableHTTP2: false
 *     shutdownTimeout: 6s
 *     healthPath: /health          # health: false turns it off
 *     readTimeout: 60s             # writeTimeout, idleTimeout: shortcuts for limits.*
 *     limits: {maxConnections: 10000}
 *     deadlinePolicy: {defaultTimeout: 5s}
 *     tls: {mode: enforced, certFile: server.pem, keyFile: server.key}
 * outbounds:
 *   users:
 *     http:
 *       url: http://127.0.0.1:8080/yarpc   # the one peer; with a peer list, the scheme and path
 *       addHeaders: {X-Token: abc}
 *       http2: false
 *       maxResponseBodySize: 67108864
 *       tls: {mode: enforced}               # https to every peer
 * </pre>
 */
public final class HttpTransportSpec implements TransportSpec {
  private static final String NAME = "http";
  // HttpTransport.Builder.peerProbe's defaults, for the keys of the three a file leaves out.
  private static final Duration DEFAULT_PROBE_TIMEOUT = Duration.ofMillis(500);
  private static final Duration DEFAULT_BACKOFF_FIRST = Duration.ofMillis(10);
  private static final Duration DEFAULT_BACKOFF_MAX = Duration.ofMinutes(1);

  /** For {@link java.util.ServiceLoader}. */
  public HttpTransportSpec() {}

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Transport buildTransport(ConfigSection c, ConfigContext context) {
    HttpTransport.Builder b = HttpTransport.builder();
    c.integer("eventLoopThreads", b::eventLoopThreads);
    c.bool("receiveIntoHeap", b::receiveIntoHeap);
    c.duration("connectTimeout", b::connectTimeout);
    c.integer(
        c.alias("maxIdleConnectionsPerPeer", "maxIdleConnsPerHost"), b::maxIdleConnectionsPerPeer);
    c.duration(c.alias("idleConnectionTimeout", "idleConnTimeout"), b::idleConnectionTimeout);
    c.integer("maxResponseHeaderSize", b::maxResponseHeaderSize);
    Duration probe = c.duration("connTimeout");
    Duration first = null;
    Duration max = null;
    ConfigSection backoff = c.section("connBackoff");
    if (backoff != null) {
      ConfigSection exponential = backoff.section("exponential");
      if (exponential != null) {
        first = exponential.duration("first");
        max = exponential.duration("max");
      }
    }
    if (probe != null || first != null || max != null) {
      Duration t = probe != null ? probe : DEFAULT_PROBE_TIMEOUT;
      Duration f = first != null ? first : DEFAULT_BACKOFF_FIRST;
      Duration m = max != null ? max : DEFAULT_BACKOFF_MAX;
      c.apply(probe != null ? "connTimeout" : "connBackoff", () -> b.peerProbe(t, f, m));
    }
    ConfigSection tls = c.section("tls");
    if (tls != null) {
      io.yarpc.tls.TlsConfig config = context.clientTls(tls);
      if (config != null) {
        b.tls(config);
      }
    }
    b.keepAlive(context.keepAlive(c.section("keepalive")));
    c.unsupported(
        "keepAlive",
        "yarpc-java's HTTP transport sets no TCP keep-alive period (remove the key; keepalive"
            + " pings are the keepalive section)");
    c.unsupported(
        "maxIdleConns", "yarpc-java limits idle connections per peer only: maxIdleConnsPerHost");
    c.unsupported("disableKeepAlives", "yarpc-java's HTTP outbounds always reuse connections");
    c.unsupported(
        "disableCompression", "yarpc-java's HTTP outbounds never ask for compressed responses");
    c.unsupported(
        "responseHeaderTimeout",
        "calls end at their deadline; yarpc-java has no separate response-header timeout");
    return b.build();
  }

  @Override
  public boolean supportsInbound() {
    return true;
  }

  @Override
  public Inbound buildInbound(ConfigSection c, Transport transport, ConfigContext context) {
    HttpInbound.Builder b = ((HttpTransport) transport).inboundBuilder();
    InetSocketAddress address = c.address("address");
    if (address != null) {
      c.apply("address", () -> b.address(address.getHostString(), address.getPort()));
    } else if (!c.keys().contains("address")) {
      c.requireString("address");
    }
    String http2Key = c.alias("http2", "disableHTTP2");
    Boolean http2 = c.bool(http2Key);
    if (http2 != null) {
      b.http2(http2Key.equals("http2") == http2);
    }
    c.duration("shutdownTimeout", b::shutdownTimeout);
    c.string("healthPath", b::healthPath);
    Boolean health = c.bool("health");
    if (Boolean.FALSE.equals(health)) {
      if (c.has("healthPath")) {
        c.problem("health", "false contradicts healthPath");
      }
      b.disableHealth();
    }
    InboundLimits limits = context.inboundLimits(c.section("limits"), null);
    InboundLimits.Builder lb = limits.toBuilder();
    boolean shortcut = false;
    for (String key : new String[] {"readTimeout", "writeTimeout", "idleTimeout"}) {
      Duration d = c.duration(key);
      if (d == null) {
        continue;
      }
      ConfigSection ls = c.section("limits");
      if (ls != null && ls.has(key)) {
        c.problem(key, "also set as limits." + key + ": give one of them");
        continue;
      }
      shortcut = true;
      switch (key) {
        case "readTimeout":
          c.apply(key, () -> lb.readTimeout(d));
          break;
        case "writeTimeout":
          c.apply(key, () -> lb.writeTimeout(d));
          break;
        default:
          c.apply(key, () -> lb.idleTimeout(d));
          break;
      }
    }
    b.limits(shortcut ? lb.build() : limits);
    b.deadlinePolicy(context.deadlinePolicy(c.section("deadlinePolicy"), DeadlinePolicy.strict()));
    context.inboundTls(c.section("tls"), b::tls);
    c.unsupported(
        "grabHeaders",
        "yarpc-java's HTTP inbound passes on only Rpc-Header-* headers (remove the key)");
    c.unsupported(
        "readHeaderTimeout",
        "use limits.handshakeTimeout (first request) and readTimeout (each request)");
    c.unsupported(
        "canonicalizeHeaderKeys", "yarpc-java's headers are always case-insensitive, lower case");
    c.unsupported(
        "headerCaseMapping", "yarpc-java's headers are always case-insensitive, lower case");
    return c.hasProblems() ? null : b.build();
  }

  @Override
  public Set<RpcType> outboundTypes() {
    return Set.of(RpcType.UNARY, RpcType.ONEWAY);
  }

  @Override
  public TransportComponent buildOutbound(
      ConfigSection c, Transport transport, Set<RpcType> types, ConfigContext context) {
    HttpTransport http = (HttpTransport) transport;
    boolean tls = false;
    ConfigSection tlsSection = c.section("tls");
    if (tlsSection != null) {
      TlsMode mode = tlsSection.enumValue("mode", TlsMode.class);
      if (mode == TlsMode.PERMISSIVE) {
        tlsSection.problem(
            "mode", "outbounds do not support permissive TLS (enforced or disabled)");
      }
      tls = mode == TlsMode.ENFORCED;
      tlsSection.unsupported(
          "spiffe-ids",
          "yarpc-java verifies a server's certificate against transports.http.tls.caFile and the"
              + " host name (or serverName)");
    }
    URI url = c.url("url");
    if (url != null) {
      String scheme = url.getScheme().toLowerCase(Locale.ROOT);
      if (!scheme.equals("http") && !scheme.equals("https")) {
        c.problem("url", "only http and https URLs are supported: " + quote(url.toString()));
        url = null;
      } else if (scheme.equals("https")) {
        tls = true;
      }
    }
    boolean https = tls;
    PeerChooser chooser =
        context.peerChooser(
            c, http, peer -> (https ? "https://" : "") + context.hostPort(stripScheme(peer)));
    Map<String, String> headers = c.stringMap("addHeaders");
    Boolean http2 = c.bool("http2");
    Integer maxResponseBodySize = c.integer("maxResponseBodySize");
    HttpOutbound.Builder[] holder = new HttpOutbound.Builder[1];
    if (chooser != null) {
      holder[0] = http.outboundBuilder(chooser);
      if (url != null && url.getRawPath() != null && !url.getRawPath().isEmpty()) {
        String path = url.getRawPath();
        c.apply("url", () -> holder[0].path(path));
      }
    } else if (url != null) {
      int port = url.getPort() >= 0 ? url.getPort() : https ? 443 : 80;
      String single =
          (https ? "https" : "http")
              + "://"
              + url.getRawAuthority().replaceFirst(":[0-9]*$", "")
              + ":"
              + port
              + (url.getRawPath() == null ? "" : url.getRawPath());
      c.apply("url", () -> holder[0] = http.singleOutboundBuilder(single));
    } else if (!c.hasProblems()) {
      c.problem(
          null,
          "an HTTP outbound needs a url, a peer, or a peer list (e.g. round-robin: {peers: [...]})");
    }
    HttpOutbound.Builder b = holder[0];
    if (b == null) {
      return null;
    }
    if (headers != null) {
      headers.forEach((k, v) -> c.apply("addHeaders." + k, () -> b.header(k, v)));
    }
    if (http2 != null) {
      b.http2(http2);
    }
    if (maxResponseBodySize != null) {
      c.apply("maxResponseBodySize", () -> b.maxResponseBodySize(maxResponseBodySize));
    }
    return c.hasProblems() ? null : b.build();
  }

  /** A peer written as a URL in a list: its {@code host:port}. */
  private static String stripScheme(String peer) {
    String p = peer.trim();
    String lower = p.toLowerCase(Locale.ROOT);
    if (lower.startsWith("http://")) {
      return p.substring(7);
    }
    if (lower.startsWith("https://")) {
      throw new IllegalArgumentException(
          "write the peer as host:port and the scheme in the url (or tls: {mode: enforced}): "
              + quote(peer));
    }
    return p;
  }

  private static String quote(String s) {
    return "\"" + s + "\"";
  }
}
