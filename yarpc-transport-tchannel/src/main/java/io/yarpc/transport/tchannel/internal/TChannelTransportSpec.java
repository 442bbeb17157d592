package io.yarpc.transport.tchannel.internal;

import io.yarpc.config.spi.ConfigContext;
import io.yarpc.config.spi.ConfigSection;
import io.yarpc.config.spi.TransportSpec;
import io.yarpc.peer.PeerChooser;
import io.yarpc.tls.TlsConfig;
import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.RpcType;
import io.yarpc.transport.Transport;
import io.yarpc.transport.TransportComponent;
import io.yarpc.transport.tchannel.ChecksumType;
import io.yarpc.transport.tchannel.TChannelInbound;
import io.yarpc.transport.tchannel.TChannelOutbound;
import io.yarpc.transport.tchannel.TChannelTransport;
import java.net.InetSocketAddress;
import java.util.Set;

/**
 * The {@code tchannel} sections of a configuration file (yarpc-go's {@code transport/tchannel} keys
 * where yarpc-java has the feature, the builders' names for the rest); registered through {@code
 * META-INF/services/io.yarpc.config.spi.TransportSpec}. The transport's service name is the
 * configuration's.
 *
 * <pre>
 * transports:
 *   tchannel:
 *     connTimeout: 2s               # or connectTimeout
 *     handshakeTimeout: 5s
 *     processName: keyvalue[1]
 *     eventLoopThreads: 4
 *     maxMessageSize: 16777216
 *     maxInFlightCalls: 4096
 *     receiveIntoHeap: true
 *     tls: {caFile: ca.pem}         # every TChannel outbound then uses TLS
 *     keepalive: {time: 30s, timeout: 20s, withoutCalls: true}   # pings, off without the section
 * inbounds:
 *   tchannel:
 *     address: ":4040"
 *     tls: {mode: permissive, certFile: server.pem, keyFile: server.key}
 *     limits: {maxConcurrentCallsPerConnection: 512}
 *     deadlinePolicy: {defaultTimeout: 1s}
 * outbounds:
 *   users:
 *     tchannel:
 *       peer: 127.0.0.1:4040        # or a peer list
 *       checksumType: crc32c
 * </pre>
 */
public final class TChannelTransportSpec implements TransportSpec {
  /** For {@link java.util.ServiceLoader}. */
  public TChannelTransportSpec() {}

  @Override
  public String name() {
    return "tchannel";
  }

  @Override
  public Transport buildTransport(ConfigSection c, ConfigContext context) {
    TChannelTransport.Builder b = TChannelTransport.builder();
    c.apply(null, () -> b.serviceName(context.serviceName()));
    c.string("processName", b::processName);
    c.integer("eventLoopThreads", b::eventLoopThreads);
    c.duration(c.alias("connectTimeout", "connTimeout"), b::connectTimeout);
    c.duration("handshakeTimeout", b::handshakeTimeout);
    c.longValue("maxMessageSize", b::maxMessageSize);
    c.integer("maxInFlightCalls", b::maxInFlightCalls);
    c.bool("receiveIntoHeap", b::receiveIntoHeap);
    TlsConfig tls = context.clientTls(c.section("tls"));
    if (tls != null) {
      b.tls(tls);
    }
    b.keepAlive(context.keepAlive(c.section("keepalive")));
    c.unsupported("connBackoff", "yarpc-java keeps its TChannel reconnect backoff");
    c.unsupported(
        "propagateCancel",
        "yarpc-java's TChannel outbounds always send a cancel for a cancelled call");
    c.unsupported(
        "sendCancelOnContextCanceled",
        "yarpc-java's TChannel outbounds always send a cancel for a cancelled call");
    return c.hasProblems() ? null : b.build();
  }

  @Override
  public boolean supportsInbound() {
    return true;
  }

  @Override
  public Inbound buildInbound(ConfigSection c, Transport transport, ConfigContext context) {
    InetSocketAddress address = c.address("address");
    TChannelInbound.Builder b = ((TChannelTransport) transport).inboundBuilder();
    if (address != null) {
      c.apply("address", () -> b.host(address.getHostString()).port(address.getPort()));
    } else if (!c.keys().contains("address")) {
      c.requireString("address");
    }
    b.limits(context.inboundLimits(c.section("limits"), null));
    b.deadlinePolicy(context.deadlinePolicy(c.section("deadlinePolicy"), DeadlinePolicy.strict()));
    context.inboundTls(c.section("tls"), b::tls);
    return c.hasProblems() ? null : b.build();
  }

  @Override
  public Set<RpcType> outboundTypes() {
    return Set.of(RpcType.UNARY);
  }

  @Override
  public TransportComponent buildOutbound(
      ConfigSection c, Transport transport, Set<RpcType> types, ConfigContext context) {
    TChannelTransport tchannel = (TChannelTransport) transport;
    PeerChooser chooser = context.peerChooser(c, tchannel, context::hostPort);
    ChecksumType checksum = c.enumValue("checksumType", ChecksumType.class);
    Boolean reuse = c.bool("enable-buffer-reuse");
    if (Boolean.FALSE.equals(reuse)) {
      c.problem(
          "enable-buffer-reuse",
          "not supported: yarpc-java always reads responses into pooled buffers (remove the key)");
    }
    c.unsupported(
        "tls",
        "set TLS for TChannel outbounds on the transport, transports.tchannel.tls (yarpc-java's"
            + " TChannel transport has one client TLS setting for all its outbounds)");
    if (chooser == null) {
      if (!c.hasProblems()) {
        c.problem(
            null,
            "a TChannel outbound needs a peer or a peer list (e.g. round-robin: {peers: [...]})");
      }
      return null;
    }
    TChannelOutbound.Builder b = tchannel.outboundBuilder(chooser);
    if (checksum != null) {
      c.apply("checksumType", () -> b.checksumType(checksum));
    }
    return c.hasProblems() ? null : b.build();
  }
}
