package io.yarpc.transport.grpc.internal;

import io.yarpc.config.spi.ConfigContext;
import io.yarpc.config.spi.ConfigSection;
import io.yarpc.config.spi.TransportSpec;
import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.SinglePeerChooser;
import io.yarpc.tls.TlsConfig;
import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.RpcType;
import io.yarpc.transport.Transport;
import io.yarpc.transport.TransportComponent;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcOutbound;
import io.yarpc.transport.grpc.GrpcTransport;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Set;

/**
 * The {@code grpc} sections of a configuration file (yarpc-go's {@code transport/grpc} keys where
 * yarpc-java has the feature, the builders' names for the rest); registered through {@code
 * META-INF/services/io.yarpc.config.spi.TransportSpec}.
 *
 * <pre>
 * transports:
 *   grpc:
 *     maxReceiveMessageSize: 67108864   # or clientMaxRecvMsgSize
 *     maxSendMessageSize: 67108864
 *     shutdownTimeout: 5s
 *     tls: {caFile: ca.pem}             # every gRPC outbound then uses TLS
 *     keepalive: {time: 30s, timeout: 20s, withoutCalls: false}   # off without the section
 * inbounds:
 *   grpc:
 *     address: ":8081"
 *     tls: {certFile: server.pem, keyFile: server.key}   # yarpc-go's enabled: true also works
 *     limits: {maxRequestSize: 4194304}
 *     deadlinePolicy: {requireDeadline: true}
 *     maxSendMessageSize: 4194304
 *     gracePeriod: 5s
 *     defaultService: keyvalue
 *     healthService: true
 *     reflection: true
 * outbounds:
 *   users:
 *     grpc:
 *       address: 127.0.0.1:8081          # or peer, or a peer list
 *       compressor: gzip
 *       maxReceiveMessageSize: 4194304
 *       maxSendMessageSize: 4194304
 * </pre>
 */
public final class GrpcTransportSpec implements TransportSpec {
  private static final String TLS_ON_TRANSPORT =
      "set TLS for gRPC outbounds on the transport, transports.grpc.tls (yarpc-java's gRPC"
          + " transport has one client TLS setting for all its outbounds)";

  /** For {@link java.util.ServiceLoader}. */
  public GrpcTransportSpec() {}

  @Override
  public String name() {
    return GrpcTransport.NAME;
  }

  @Override
  public Transport buildTransport(ConfigSection c, ConfigContext context) {
    GrpcTransport.Builder b = GrpcTransport.builder();
    c.integer(c.alias("maxReceiveMessageSize", "clientMaxRecvMsgSize"), b::maxReceiveMessageSize);
    c.integer("maxSendMessageSize", b::maxSendMessageSize);
    c.duration("shutdownTimeout", b::shutdownTimeout);
    TlsConfig tls = context.clientTls(c.section("tls"));
    if (tls != null) {
      b.tls(tls);
    }
    b.keepAlive(context.keepAlive(c.section("keepalive")));
    c.unsupported(
        "serverMaxRecvMsgSize", "set inbounds.<name>.limits.maxRequestSize on each gRPC inbound");
    c.unsupported(
        "serverMaxSendMsgSize",
        "yarpc-java has one send limit for both sides, maxSendMessageSize (inbounds and outbounds"
            + " may override it)");
    c.unsupported(
        "clientMaxSendMsgSize",
        "yarpc-java has one send limit for both sides, maxSendMessageSize (inbounds and outbounds"
            + " may override it)");
    c.unsupported(
        "serverMaxHeaderListSize",
        "set inbounds.<name>.limits.maxHeaderBytes on each gRPC inbound");
    c.unsupported("serverHeaderTableSize", "yarpc-java keeps grpc-java's HPACK table size");
    c.unsupported(
        "clientMaxHeaderListSize", "yarpc-java keeps grpc-java's limit on response headers");
    c.unsupported("backoff", "yarpc-java keeps grpc-java's reconnect backoff");
    c.unsupported(
        "numStreamWorkers", "yarpc-java's gRPC handlers run on the dispatcher's executor");
    c.unsupported(
        "clientConnectionPool", "yarpc-java's gRPC outbounds use one connection per peer");
    return b.build();
  }

  @Override
  public boolean supportsInbound() {
    return true;
  }

  @Override
  public Inbound buildInbound(ConfigSection c, Transport transport, ConfigContext context) {
    InetSocketAddress address = c.address("address");
    if (address == null && !c.keys().contains("address")) {
      c.requireString("address");
    }
    InetSocketAddress[] resolved = {new InetSocketAddress(0)}; // read the other keys all the same
    if (address != null) {
      c.apply(
          "address",
          () -> resolved[0] = new InetSocketAddress(address.getHostString(), address.getPort()));
    }
    GrpcInbound.Builder b = ((GrpcTransport) transport).inboundBuilder(resolved[0]);
    b.limits(context.inboundLimits(c.section("limits"), null));
    b.deadlinePolicy(
        context.deadlinePolicy(
            c.section("deadlinePolicy"),
            DeadlinePolicy.withDefaultTimeout(
                Duration.ofSeconds(GrpcInbound.DEFAULT_TIMEOUT_SECONDS))));
    c.integer("maxSendMessageSize", b::maxSendMessageSize);
    c.duration("gracePeriod", b::gracePeriod);
    c.string("defaultService", b::defaultService);
    c.bool("healthService", b::healthService);
    c.bool("reflection", b::reflection);
    context.inboundTls(c.section("tls"), b::tls);
    return c.hasProblems() ? null : b.build();
  }

  @Override
  public Set<RpcType> outboundTypes() {
    return Set.of(RpcType.UNARY, RpcType.STREAMING);
  }

  @Override
  public TransportComponent buildOutbound(
      ConfigSection c, Transport transport, Set<RpcType> types, ConfigContext context) {
    GrpcTransport grpc = (GrpcTransport) transport;
    PeerChooser chooser = context.peerChooser(c, grpc, context::hostPort);
    String address = c.string("address");
    if (address != null) {
      if (chooser != null) {
        c.problem("address", "give either address or a peer chooser (peer, a peer list), not both");
        return null;
      }
      String[] id = new String[1];
      c.apply("address", () -> id[0] = context.hostPort(address));
      chooser = id[0] == null ? null : SinglePeerChooser.of(grpc, id[0]);
    }
    String compressor = c.string("compressor");
    Integer maxReceive = c.integer("maxReceiveMessageSize");
    Integer maxSend = c.integer("maxSendMessageSize");
    c.unsupported("tls", TLS_ON_TRANSPORT);
    c.unsupported(
        "grpc-keepalive",
        "set keepalive for gRPC outbounds on the transport: transports.grpc.keepalive takes this"
            + " block as it is (yarpc-java's gRPC transport has one channel per peer for all its"
            + " outbounds)");
    if (chooser == null) {
      if (!c.hasProblems()) {
        c.problem(
            null,
            "a gRPC outbound needs an address, a peer, or a peer list (e.g. round-robin: {peers:"
                + " [...]})");
      }
      return null;
    }
    GrpcOutbound.Builder b = grpc.outboundBuilder(chooser);
    if (compressor != null) {
      c.apply("compressor", () -> b.compressor(compressor));
    }
    if (maxReceive != null) {
      c.apply("maxReceiveMessageSize", () -> b.maxReceiveMessageSize(maxReceive));
    }
    if (maxSend != null) {
      c.apply("maxSendMessageSize", () -> b.maxSendMessageSize(maxSend));
    }
    return c.hasProblems() ? null : b.build();
  }
}
