package io.yarpc.transport.http;

import io.yarpc.Outbounds;
import io.yarpc.testing.TransportConformanceSuite;
import io.yarpc.testing.TransportUnderTest;
import io.yarpc.transport.Inbound;
import java.util.List;

/** The conformance kit over HTTP/1.1: a real Netty inbound and outbound on loopback. */
class HttpConformanceTest extends TransportConformanceSuite {
  @Override
  protected TransportUnderTest newTransport() {
    return new HttpUnderTest(false);
  }

  /**
   * Two transports per test, as two processes would have: the server's with its inbound on a free port,
   * the client's with an outbound to it.
   */
  static final class HttpUnderTest implements TransportUnderTest {
    private final boolean http2;
    private final HttpTransport serverTransport = HttpTransport.builder().eventLoopThreads(2).build();
    private final HttpTransport clientTransport = HttpTransport.builder().eventLoopThreads(2).build();
    private final HttpInbound inbound = serverTransport.inbound();

    HttpUnderTest(boolean http2) {
      this.http2 = http2;
    }

    @Override
    public List<Inbound> serverInbounds() {
      return List.of(inbound);
    }

    @Override
    public Outbounds clientOutbounds() {
      HttpOutbound out = clientTransport.singleOutboundBuilder(inbound.hostPort()).http2(http2).build();
      return Outbounds.builder().unary(out).oneway(out).build();
    }

    @Override
    public boolean supportsStreaming() {
      return false;
    }

    @Override
    public void close() {
      clientTransport.stop();
      serverTransport.stop();
    }
  }
}
