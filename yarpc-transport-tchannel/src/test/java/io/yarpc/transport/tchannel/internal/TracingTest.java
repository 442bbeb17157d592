package io.yarpc.transport.tchannel.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.transport.Headers;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class TracingTest {
  private static long[] fields(byte[] tracing) {
    ByteBuffer b = ByteBuffer.wrap(tracing);
    return new long[] {b.getLong(), b.getLong(), b.getLong(), b.get()};
  }

  @Test
  void withoutPropagationHeadersANewUnsampledRoot() {
    long[] f = fields(Tracing.forRequest(Headers.empty()));
    assertThat(f[0]).as("span").isEqualTo(f[2]).as("trace = span");
    assertThat(f[1]).as("parent").isZero();
    assertThat(f[3]).as("flags").isZero();
  }

  @Test
  void a64BitJaegerTraceGoesInTheFieldToo() {
    long[] f =
        fields(
            Tracing.forRequest(
                Headers.of("uber-trace-id", "00000000000000000000000000abcdef:1234:5678:1")));
    assertThat(f).containsExactly(0x1234, 0x5678, 0xabcdef, 1);
    // 16-hex trace ids (jaeger-client-go's 64-bit ids) and URL-encoded values
    assertThat(fields(Tracing.forRequest(Headers.of("uber-trace-id", "abcdef%3A1234%3A0%3A0"))))
        .containsExactly(0x1234, 0, 0xabcdef, 0);
  }

  @Test
  void a64BitW3cTraceGoesInTheField() {
    long[] f =
        fields(
            Tracing.forRequest(
                Headers.of(
                    "traceparent", "00-0000000000000000ffffffffffffffff-00000000000000aa-01")));
    assertThat(f).containsExactly(0xaa, 0, -1, 1);
  }

  @Test
  void a128BitTraceLeavesTheFieldZeroSoJaegerReadsTheHeaders() {
    byte[] t =
        Tracing.forRequest(
            Headers.of(
                "traceparent",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                "uber-trace-id",
                "4bf92f3577b34da6a3ce929d0e0e4736:00f067aa0ba902b7:0:1"));
    assertThat(t).hasSize(25).containsOnly(0);
  }

  @Test
  void malformedOrForeignHeadersLeaveTheFieldZero() {
    for (String v :
        new String[] {"", "x", "1:2:3", "zz:1:0:1", "0:1:0:1", "1:0:0:1", "1:1:0:123"}) {
      assertThat(Tracing.forRequest(Headers.of("uber-trace-id", v))).as(v).containsOnly(0);
    }
    assertThat(Tracing.forRequest(Headers.of("baggage", "a=b"))).containsOnly(0);
    assertThat(Tracing.forRequest(Headers.of("traceparent", "00-short-01"))).containsOnly(0);
  }
}
