package io.yarpc.config.spi;

import io.yarpc.transport.Inbound;
import io.yarpc.transport.RpcType;
import io.yarpc.transport.Transport;
import io.yarpc.transport.TransportComponent;
import java.util.Set;

/**
 * How one transport is configured: the section {@code transports.<name>} builds the shared {@link
 * Transport}, a section {@code inbounds.<name>} (or one whose {@code type} is the name) builds an {@link
 * Inbound}, and a section {@code <name>} under an outbound builds its outbound. yarpc-go's {@code
 * yarpcconfig.TransportSpec}, without the unary/oneway/stream triplication: one {@link #buildOutbound}
 * call builds an object that implements every RPC type asked for.
 *
 * <p>Implementations are found with {@link java.util.ServiceLoader} (list the class in {@code
 * META-INF/services/io.yarpc.config.spi.TransportSpec}; it needs a public no-argument constructor) or
 * registered by hand with the loader. A new instance may be made for every file loaded; an instance MUST
 * NOT keep state between calls.
 *
 * <p>Contract for every {@code build} method: read the section with its getters (each key read counts as
 * known; keys nobody read are reported as unknown), report what is wrong with {@link
 * ConfigSection#problem(String, String)} rather than throwing, and return {@code null} when a problem
 * leaves nothing to build. An exception thrown anyway (a builder's {@link IllegalArgumentException}) is
 * reported as a problem at the section's path with its message. Build, never start: nothing may open a
 * socket or start a thread before the dispatcher starts.
 */
public interface TransportSpec {
  /**
   * The transport's name as the configuration spells it: the key under {@code transports} and {@code
   * inbounds}, and the transport key of an outbound ({@code http}, {@code grpc}, {@code tchannel}). Not
   * {@code unary}, {@code oneway}, {@code stream}, {@code service}, {@code type} or {@code disabled}.
   */
  String name();

  /**
   * Builds the transport shared by every inbound and outbound of this name from {@code
   * transports.<name>}; called once per load when the transport is used or its section is present (an
   * empty section when the file has none).
   */
  Transport buildTransport(ConfigSection config, ConfigContext context);

  /** Whether {@link #buildInbound} is supported; default false. */
  default boolean supportsInbound() {
    return false;
  }

  /**
   * Builds an inbound from {@code inbounds.<name>} ({@code type} and {@code disabled} are already
   * read); only called when {@link #supportsInbound()} is true.
   */
  default Inbound buildInbound(ConfigSection config, Transport transport, ConfigContext context) {
    throw new UnsupportedOperationException(name() + " has no inbounds");
  }

  /** The RPC types this transport's outbounds can serve; default none. */
  default Set<RpcType> outboundTypes() {
    return Set.of();
  }

  /**
   * Builds an outbound from an outbound section ({@code outbounds.<key>.<name>} or {@code
   * outbounds.<key>.unary.<name>}...) that implements every type of {@code types} (a non-empty subset of
   * {@link #outboundTypes()}): {@link io.yarpc.transport.UnaryOutbound}, {@link
   * io.yarpc.transport.OnewayOutbound}, {@link io.yarpc.transport.StreamOutbound}. The peer chooser
   * comes from {@link ConfigContext#peerChooser}.
   */
  default TransportComponent buildOutbound(
      ConfigSection config, Transport transport, Set<RpcType> types, ConfigContext context) {
    throw new UnsupportedOperationException(name() + " has no outbounds");
  }
}
