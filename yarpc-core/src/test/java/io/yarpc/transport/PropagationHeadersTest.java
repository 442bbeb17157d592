package io.yarpc.transport;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PropagationHeadersTest {
  @Test
  void recognisesTheKeysOfW3cJaegerAndB3InAnyCasing() {
    for (String key :
        new String[] {
          "traceparent",
          "Traceparent",
          "tracestate",
          "baggage",
          "uber-trace-id",
          "Uber-Trace-Id",
          "uberctx-tenant",
          "Uberctx-Tenant",
          "jaeger-debug-id",
          "jaeger-baggage",
          "b3",
          "X-B3-TraceId",
          "x-b3-spanid",
          "x-b3-parentspanid",
          "x-b3-sampled",
          "x-b3-flags"
        }) {
      assertThat(PropagationHeaders.isPropagationKey(key)).as(key).isTrue();
    }
  }

  @Test
  void leavesEverythingElseToTheApplication() {
    for (String key :
        new String[] {
          "",
          "t",
          "trace",
          "traceparents",
          "uberctx-",
          "uber-trace",
          "x-b3-",
          "x-b3-other",
          "x-request-id",
          "rpc-caller",
          "b",
          "b33",
          "jaeger",
          "user-agent"
        }) {
      assertThat(PropagationHeaders.isPropagationKey(key)).as(key).isFalse();
    }
  }

  @Test
  void requestMetaKeepsPropagationHeadersApartFromApplicationHeaders() {
    RequestMeta meta =
        RequestMeta.builder()
            .headers(Headers.of("a", "1"))
            .propagationHeaders(Headers.of("traceparent", "tp"))
            .build();
    assertThat(meta.headers().asMap()).containsOnlyKeys("a");
    assertThat(meta.propagationHeaders().get("traceparent")).isEqualTo("tp");
    assertThat(meta.toBuilder().build().propagationHeaders()).isEqualTo(meta.propagationHeaders());
    assertThat(RequestMeta.builder().build().propagationHeaders().isEmpty()).isTrue();
    assertThat(meta.toString()).doesNotContain("tp");
  }
}
