package io.yarpc.transport.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.util.AsciiString;
import io.yarpc.transport.Headers;
import org.junit.jupiter.api.Test;

/** How a received request's header fields split into application and propagation headers. */
class WireHeadersTest {
  private static HttpHeaders http1(CharSequence... namesAndValues) {
    HttpHeaders h = new DefaultHttpHeaders();
    for (int i = 0; i < namesAndValues.length; i += 2) {
      h.add(namesAndValues[i], namesAndValues[i + 1]);
    }
    return h;
  }

  @Test
  void transportFieldsAreNeitherApplicationNorPropagationHeaders() {
    WireHeaders.RequestHeaders r =
        WireHeaders.requestHeaders(
            http1(
                "Host", "127.0.0.1",
                "Rpc-Caller", "c",
                "RPC-SERVICE", "s",
                "Context-TTL-MS", "100",
                "Content-Type", "application/x-protobuf",
                "content-length", "3",
                "Accept", "*/*"));
    assertThat(r.application().isEmpty()).isTrue();
    assertThat(r.propagation().isEmpty()).isTrue();
  }

  @Test
  void prefixedHeadersInAnyCasingAreStrippedAndWinOverUnprefixedOnes() {
    WireHeaders.RequestHeaders r =
        WireHeaders.requestHeaders(
            http1(
                new AsciiString("rpc-header-Foo"),
                "1",
                "RPC-HEADER-BAR",
                "2",
                "User-Agent",
                "wrk",
                "Rpc-Header-user-agent",
                "mine",
                "X-Forwarded-For",
                "10.0.0.1",
                "Rpc-Header-",
                "no key"));
    Headers app = r.application();
    assertThat(app.asMap())
        .containsEntry("foo", "1")
        .containsEntry("bar", "2")
        .containsEntry("user-agent", "mine")
        .containsEntry("x-forwarded-for", "10.0.0.1")
        .hasSize(4);
    assertThat(r.propagation().isEmpty()).isTrue();
  }

  @Test
  void tracingKeysInAnyCasingArePropagationHeaders() {
    WireHeaders.RequestHeaders r =
        WireHeaders.requestHeaders(
            http1(
                "Uber-Trace-Id",
                "abc:1:0:1",
                "UBERCTX-tenant",
                "t1",
                new AsciiString("traceparent"),
                "00-1-2-01",
                "X-B3-TraceId",
                "7"));
    assertThat(r.propagation().asMap())
        .containsEntry("uber-trace-id", "abc:1:0:1")
        .containsEntry("uberctx-tenant", "t1")
        .containsEntry("traceparent", "00-1-2-01")
        .containsEntry("x-b3-traceid", "7")
        .hasSize(4);
    assertThat(r.application().isEmpty()).isTrue();
  }

  @Test
  void anHttp2BlockReadsLikeAnHttp1Head() {
    DefaultHttp2Headers block = new DefaultHttp2Headers();
    block.method("POST").path("/").scheme("http");
    block.add("rpc-caller", "c").add("rpc-header-k", "v").add("user-agent", "h2load");
    WireHeaders.RequestHeaders r = WireHeaders.requestHeaders(new Http2HeadersView(block));
    assertThat(r.application().asMap())
        .containsEntry("k", "v")
        .containsEntry("user-agent", "h2load")
        .hasSize(2);
  }
}
