package io.yarpc.encoding.protobuf;

import io.yarpc.Outbounds;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcOutbound;
import io.yarpc.transport.grpc.GrpcTransport;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * The generated service and stubs over the gRPC transport: unary and all three stream shapes. JSON error
 * details cannot cross gRPC (it carries {@code grpc-status-details-bin} as a binary {@code
 * google.rpc.Status} only, as yarpc-go's gRPC transport does), so for JSON only code and message are
 * checked. Leaked Netty buffers fail the test through yarpc-testing's leak detection extension.
 */
class GrpcEndToEndTest extends EndToEndTestBase {
  private final GrpcTransport serverTransport = GrpcTransport.create();
  private final GrpcTransport clientTransport = GrpcTransport.create();
  private GrpcInbound inbound;

  @Override
  List<Inbound> serverInbounds() {
    inbound = serverTransport.inbound(new InetSocketAddress("127.0.0.1", 0));
    return List.of(inbound);
  }

  @Override
  Outbounds clientOutbounds() {
    GrpcOutbound out = clientTransport.singleOutbound("127.0.0.1:" + inbound.port());
    return Outbounds.builder().unary(out).stream(out).build();
  }

  @Override
  boolean supportsStreaming() {
    return true;
  }

  @Override
  boolean carriesJsonErrorDetails() {
    return false;
  }

  @Override
  void closeTransports() {
    clientTransport.stop();
    serverTransport.stop();
  }
}
