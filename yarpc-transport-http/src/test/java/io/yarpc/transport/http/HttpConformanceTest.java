package io.yarpc.transport.http;

import io.yarpc.Outbounds;
import io.yarpc.testing.TransportConformanceSuite;
import io.yarpc.testing.TransportUnderTest;
import io.yarpc.tls.TlsConfig;
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
    private final boolean tls;
    private final HttpTransport serverTransport;
    private final HttpTransport clientTransport;
    private final HttpInbound inbound;

    HttpUnderTest(boolean http2) {
      this(http2, null, null);
    }

    /**
     * Over TLS when {@code serverTls} is given: the inbound enforces it with that config, and the client
     * calls {@code https://} with {@code clientTls}.
     */
    HttpUnderTest(boolean http2, TlsConfig serverTls, TlsConfig clientTls) {
      this.http2 = http2;
      this.tls = serverTls != null;
      this.serverTransport = HttpTransport.builder().eventLoopThreads(2).build();
      HttpTransport.Builder client = HttpTransport.builder().eventLoopThreads(2);
      if (clientTls != null) {
        client.tls(clientTls);
      }
      this.clientTransport = client.build();
      HttpInbound.Builder ib = serverTransport.inboundBuilder();
      if (serverTls != null) {
        ib.tls(serverTls);
      }
      this.inbound = ib.build();
    }

    @Override
    public List<Inbound> serverInbounds() {
      return List.of(inbound);
    }

    @Override
    public Outbounds clientOutbounds() {
      HttpOutbound out =
          clientTransport
              .singleOutboundBuilder((tls ? "https://" : "") + inbound.hostPort())
              .http2(http2)
              .build();
      return Outbounds.builder().unary(out).oneway(out).build();
    }

    @Override
    public boolean supportsStreaming() {
      return false;
    }

    /** Header values, where error texts travel too, in the form HTTP fields can carry (see {@link #fieldValue}). */
    @Override
    public String expectedErrorText(String sent) {
      return fieldValue(sent);
    }

    @Override
    public boolean cutsLongErrorTexts() {
      return false; // header blocks of up to 1 MiB on both sides (Go's default is as large)
    }

    @Override
    public String expectedResponseHeaderValue(String sent) {
      return fieldValue(sent);
    }

    /** Go's HTTP client refuses a request header value with a control character other than tab. */
    @Override
    public String expectedRequestHeaderValue(String sent) {
      for (int i = 0; i < sent.length(); i++) {
        if (isControl(sent.charAt(i))) {
          return null;
        }
      }
      return trimSpaceAndTab(sent);
    }

    @Override
    public void close() {
      clientTransport.stop();
      serverTransport.stop();
    }
  }

  /**
   * What arrives of a text sent in an HTTP field value: every control character but tab (CR and LF
   * included) and DEL replaced by a space, then spaces and tabs at either end removed — Go's HTTP/1.1
   * server turns line breaks into spaces and trims; RFC 9110 lets a recipient replace CR, LF and NUL with
   * spaces. Non-ASCII text travels as its UTF-8 bytes, whole.
   */
  static String fieldValue(String sent) {
    StringBuilder sb = new StringBuilder(sent.length());
    for (int i = 0; i < sent.length(); i++) {
      char c = sent.charAt(i);
      sb.append(isControl(c) ? ' ' : c);
    }
    return trimSpaceAndTab(sb.toString());
  }

  private static boolean isControl(char c) {
    return c < 0x20 && c != '\t' || c == 0x7f;
  }

  private static String trimSpaceAndTab(String s) {
    int start = 0;
    int end = s.length();
    while (start < end && (s.charAt(start) == ' ' || s.charAt(start) == '\t')) {
      start++;
    }
    while (end > start && (s.charAt(end - 1) == ' ' || s.charAt(end - 1) == '\t')) {
      end--;
    }
    return s.substring(start, end);
  }
}
