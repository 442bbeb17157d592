package io.yarpc.config;

import io.yarpc.config.spi.ConfigContext;
import io.yarpc.config.spi.ConfigSection;
import io.yarpc.config.spi.TransportSpec;
import io.yarpc.testing.InMemoryTransport;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.RpcType;
import io.yarpc.transport.Transport;
import io.yarpc.transport.TransportComponent;
import java.util.Set;

/**
 * A third-party transport's spec, as a plug-in would ship it: yarpc-testing's in-memory transport under
 * the name {@code in-memory}, registered in {@code src/test/resources/plugin/META-INF/services}.
 */
public final class InMemoryTransportSpec implements TransportSpec {
  /** For {@link java.util.ServiceLoader}. */
  public InMemoryTransportSpec() {}

  @Override
  public String name() {
    return InMemoryTransport.NAME;
  }

  @Override
  public Transport buildTransport(ConfigSection config, ConfigContext context) {
    InMemoryTransport.Builder b = InMemoryTransport.builder();
    config.integer("streamWindow", b::streamWindow);
    config.integer("maxBufferSize", b::maxBufferSize);
    config.bool("directBuffers", b::directBuffers);
    return b.build();
  }

  @Override
  public boolean supportsInbound() {
    return true;
  }

  @Override
  public Inbound buildInbound(ConfigSection config, Transport transport, ConfigContext context) {
    return ((InMemoryTransport) transport).inbound();
  }

  @Override
  public Set<RpcType> outboundTypes() {
    return Set.of(RpcType.UNARY, RpcType.ONEWAY, RpcType.STREAMING);
  }

  @Override
  public TransportComponent buildOutbound(
      ConfigSection config, Transport transport, Set<RpcType> types, ConfigContext context) {
    return ((InMemoryTransport) transport).outbound();
  }
}
