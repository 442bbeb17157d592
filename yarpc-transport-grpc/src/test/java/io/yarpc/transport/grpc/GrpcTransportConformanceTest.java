package io.yarpc.transport.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.Outbounds;
import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.testing.TransportConformanceSuite;
import io.yarpc.testing.TransportUnderTest;
import io.yarpc.transport.Inbound;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * The transport conformance kit over gRPC: a server transport with an inbound on loopback and a separate
 * client transport with a single-peer outbound to it. Oneway calls are not part of the gRPC protocol.
 */
class GrpcTransportConformanceTest extends TransportConformanceSuite {
  @Override
  protected TransportUnderTest newTransport() {
    return transportUnderTest(GrpcTransport.create(), GrpcTransport.create(), b -> b);
  }

  /**
   * The kit's view of an inbound of {@code serverTransport} (made with {@code inboundOptions}) on loopback
   * and a single-peer outbound of {@code clientTransport} to it; closing it stops both transports.
   */
  static TransportUnderTest transportUnderTest(
      GrpcTransport serverTransport,
      GrpcTransport clientTransport,
      UnaryOperator<GrpcInbound.Builder> inboundOptions) {
    GrpcInbound inbound =
        inboundOptions
            .apply(serverTransport.inboundBuilder(new InetSocketAddress("127.0.0.1", 0)))
            .build();
    return new TransportUnderTest() {
      @Override
      public List<Inbound> serverInbounds() {
        return List.of(inbound);
      }

      @Override
      public Outbounds clientOutbounds() {
        GrpcOutbound outbound = clientTransport.singleOutbound("127.0.0.1:" + inbound.port());
        return Outbounds.builder().unary(outbound).stream(outbound).build();
      }

      @Override
      public boolean supportsOneway() {
        return false;
      }

      @Override
      public boolean sendsEmptyHeaderValues() {
        return false; // yarpc-go sends no metadata for empty values
      }

      @Override
      public ApplicationErrorMeta expectedApplicationErrorMeta(ApplicationErrorMeta sent) {
        // the code travels as the gRPC status, not with the application error
        return new ApplicationErrorMeta(null, sent.name(), sent.details());
      }

      @Override
      public int maxBufferedStreamMessages() {
        // grpc-java's flow control: a stream window of at most 8 MiB (auto-tuned from 1 MiB), plus
        // the one message queued past the sender's on-ready threshold.
        return 8 * 1024 * 1024 / (64 * 1024) + 2;
      }

      @Override
      public void assertNoLeaks() {
        for (GrpcTransport t : List.of(serverTransport, clientTransport)) {
          assertThat(t.receiveStats().outstanding())
              .as("detached receive buffers not released: %s", t.receiveStats())
              .isZero();
        }
      }

      @Override
      public void close() {
        serverTransport.stop();
        clientTransport.stop();
      }
    };
  }
}
