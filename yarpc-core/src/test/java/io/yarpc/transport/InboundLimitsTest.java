package io.yarpc.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class InboundLimitsTest {
  @Test
  void defaultsAreTheDocumentedOnes() {
    InboundLimits l = InboundLimits.defaults();
    assertEquals(10_000, l.maxConnections());
    assertEquals(250, l.maxConcurrentCallsPerConnection());
    assertEquals(512, l.maxConcurrentCallsPerConnectionOr(512));
    assertEquals(
        100,
        l.toBuilder()
            .maxConcurrentCallsPerConnection(100)
            .build()
            .maxConcurrentCallsPerConnectionOr(512));
    assertEquals(64 << 20, l.maxRequestSize());
    assertEquals(64L << 20, l.maxPendingBytesPerConnection());
    assertEquals(256L << 20, l.maxPendingBytes());
    assertEquals(256, l.maxHeaderCount());
    assertEquals(64 << 10, l.maxHeaderBytes());
    assertEquals(8 << 10, l.maxRequestLineLength());
    assertEquals(200, l.maxRstFramesPerWindow());
    assertEquals(Duration.ofSeconds(30), l.rstFramesWindow());
    assertEquals(Duration.ofSeconds(60), l.readTimeout());
    assertEquals(Duration.ofSeconds(60), l.writeTimeout());
    assertEquals(Duration.ofMinutes(5), l.idleTimeout());
    assertNull(l.maxConnectionAge());
    assertNull(l.maxConnectionAgeGrace());
    assertEquals(Duration.ofSeconds(20), l.handshakeTimeout());
    assertEquals(Duration.ofMinutes(5), l.permitKeepAliveTime());
    assertEquals(false, l.permitKeepAliveWithoutCalls());
  }

  @Test
  void toBuilderKeepsEveryValueAndChangesOnlyWhatIsSet() {
    InboundLimits custom =
        InboundLimits.builder()
            .maxConnections(3)
            .maxConcurrentCallsPerConnection(100)
            .maxRequestSize(1000)
            .maxPendingBytesPerConnection(2000)
            .maxPendingBytes(3000)
            .maxHeaderCount(10)
            .maxHeaderBytes(2048)
            .maxRequestLineLength(512)
            .maxRstFramesPerWindow(5, Duration.ofSeconds(1))
            .readTimeout(Duration.ofSeconds(1))
            .writeTimeout(Duration.ofSeconds(2))
            .idleTimeout(Duration.ofSeconds(3))
            .maxConnectionAge(Duration.ofSeconds(4), Duration.ofSeconds(5))
            .handshakeTimeout(Duration.ofSeconds(6))
            .permitKeepAliveTime(Duration.ofSeconds(7))
            .permitKeepAliveWithoutCalls(true)
            .build();
    InboundLimits copy = custom.toBuilder().maxConnections(4).build();
    assertEquals(
        custom.toString().replace("maxConnections=3", "maxConnections=4"), copy.toString());
    assertEquals(Duration.ofSeconds(5), copy.maxConnectionAgeGrace());
    assertEquals(custom, custom.toBuilder().build());
    assertEquals(custom.hashCode(), custom.toBuilder().build().hashCode());
    assertEquals(InboundLimits.defaults(), InboundLimits.builder().build());
    org.junit.jupiter.api.Assertions.assertNotEquals(custom, copy);
    assertEquals(true, copy.permitKeepAliveWithoutCalls());
    org.junit.jupiter.api.Assertions.assertNotEquals(
        custom, custom.toBuilder().permitKeepAliveWithoutCalls(false).build());
  }

  @Test
  void nonsenseIsRefusedWhenSet() {
    InboundLimits.Builder b = InboundLimits.builder();
    assertEquals(
        "maxConnections must be positive: 0",
        assertThrows(IllegalArgumentException.class, () -> b.maxConnections(0)).getMessage());
    assertEquals(
        "readTimeout must be positive: PT0S",
        assertThrows(IllegalArgumentException.class, () -> b.readTimeout(Duration.ZERO))
            .getMessage());
    assertThrows(IllegalArgumentException.class, () -> b.maxHeaderBytes(1023));
    assertThrows(IllegalArgumentException.class, () -> b.maxPendingBytes(-1));
    assertThrows(NullPointerException.class, () -> b.idleTimeout(null));
  }
}
