package io.yarpc.transport.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Which requests ask for the health status, and the answers, with no channel. */
class HealthCheckAnswerTest {
  private static HttpRequest req(HttpMethod method, String uri) {
    return new DefaultHttpRequest(HttpVersion.HTTP_1_1, method, uri);
  }

  @Test
  void getOrHeadOfExactlyThePathQueryIgnored() {
    assertThat(HealthCheck.matches(req(HttpMethod.GET, "/health"), "/health")).isTrue();
    assertThat(HealthCheck.matches(req(HttpMethod.HEAD, "/health"), "/health")).isTrue();
    assertThat(HealthCheck.matches(req(HttpMethod.GET, "/health?probe=ready"), "/health")).isTrue();
    assertThat(HealthCheck.matches(req(HttpMethod.GET, "/health/"), "/health")).isFalse();
    assertThat(HealthCheck.matches(req(HttpMethod.GET, "/healthz"), "/health")).isFalse();
    assertThat(HealthCheck.matches(req(HttpMethod.GET, "/healthz?x"), "/health")).isFalse();
    assertThat(HealthCheck.matches(req(HttpMethod.POST, "/health"), "/health")).isFalse();
    assertThat(HealthCheck.matches(req(HttpMethod.GET, "/health"), null)).as("check off").isFalse();
  }

  @Test
  void servingAndNotServing() {
    FullHttpResponse ok = HealthCheck.response(HttpVersion.HTTP_1_0, HttpMethod.GET, true);
    assertThat(ok.status().code()).isEqualTo(200);
    assertThat(ok.protocolVersion()).isEqualTo(HttpVersion.HTTP_1_0);
    assertThat(ok.content().toString(StandardCharsets.US_ASCII)).isEqualTo("SERVING\n");
    assertThat(ok.headers().get("content-type")).isEqualTo("text/plain; charset=utf-8");
    assertThat(ok.headers().get("cache-control")).isEqualTo("no-store");
    ok.release();

    FullHttpResponse down = HealthCheck.response(HttpVersion.HTTP_1_1, HttpMethod.GET, false);
    assertThat(down.status().code()).isEqualTo(503);
    assertThat(ByteBufUtil.getBytes(down.content()))
        .isEqualTo("NOT_SERVING\n".getBytes(StandardCharsets.US_ASCII));
    down.release();
  }

  @Test
  void headGetsTheLengthButNoBody() {
    FullHttpResponse head = HealthCheck.response(HttpVersion.HTTP_1_1, HttpMethod.HEAD, true);
    assertThat(head.content().readableBytes()).isZero();
    assertThat(head.headers().getInt("content-length")).isEqualTo(8);
    head.release();
  }
}
