package io.yarpc.encoding.protobuf;

import io.yarpc.Outbounds;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.tchannel.TChannelInbound;
import io.yarpc.transport.tchannel.TChannelTransport;
import java.util.List;

/**
 * The generated service and stubs over TChannel (unary only: TChannel does not stream). Error details
 * cross as the body of TChannel's application-error reply ({@code $rpc$-error-*} headers carry code and
 * message), from which the channel reads the google.rpc.Status back.
 */
class TChannelEndToEndTest extends EndToEndTestBase {
  private final TChannelTransport serverTransport = TChannelTransport.of("echo");
  private final TChannelTransport clientTransport = TChannelTransport.of("client");
  private TChannelInbound inbound;

  @Override
  List<Inbound> serverInbounds() {
    inbound = serverTransport.inbound();
    return List.of(inbound);
  }

  @Override
  Outbounds clientOutbounds() {
    return Outbounds.unary(clientTransport.singleOutbound(inbound.hostPort()));
  }

  @Override
  boolean supportsStreaming() {
    return false;
  }

  @Override
  void closeTransports() {
    clientTransport.stop();
    serverTransport.stop();
  }
}
