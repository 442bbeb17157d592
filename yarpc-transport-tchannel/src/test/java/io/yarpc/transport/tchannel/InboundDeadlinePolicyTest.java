package io.yarpc.transport.tchannel;

import static io.yarpc.transport.tchannel.Wire.bytes;
import static io.yarpc.transport.tchannel.Wire.callReq;
import static io.yarpc.transport.tchannel.Wire.callReqWithChecksum;
import static io.yarpc.transport.tchannel.Wire.noHeaders;
import static io.yarpc.transport.tchannel.Wire.rawHeaders;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.Call;
import io.yarpc.Dispatcher;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.transport.DeadlinePolicy;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The inbound's {@link DeadlinePolicy}: by default (strict) a ttl of 0 is a bad request; a default timeout
 * serves such calls; a cap brings far deadlines in, for the handler and for a message still arriving.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class InboundDeadlinePolicyTest {
  private static final String SERVICE = "deadline-svc";
  private Dispatcher dispatcher;
  private TChannelInbound inbound;

  private void start(DeadlinePolicy policy) {
    TChannelTransport transport = TChannelTransport.of(SERVICE);
    TChannelInbound.Builder b = transport.inboundBuilder();
    if (policy != null) {
      b.deadlinePolicy(policy);
    }
    inbound = b.build();
    dispatcher = Dispatcher.builder(SERVICE).inbound(inbound).build();
    dispatcher.register(
        Raw.procedure(
            "remaining",
            body ->
                ByteBuffer.allocate(8)
                    .putLong(Call.current().deadline().remainingMillis())
                    .array()));
    dispatcher.start();
  }

  @AfterEach
  void stop() {
    if (dispatcher != null) {
      dispatcher.stop();
    }
  }

  /** A call with {@code ttl}; returns the deadline its handler saw, in ms from then. */
  private long remainingSeenByTheHandler(SocketPeer p, int id, long ttl) throws Exception {
    p.write(callReq(id, 0, ttl, SERVICE, rawHeaders(), bytes("remaining"), noHeaders(), bytes("")));
    SocketPeer.Frame f = p.read();
    assertThat(f.type()).as("call res, got %s", f).isEqualTo(0x04);
    byte[] payload = f.payload();
    return ByteBuffer.wrap(payload, payload.length - 8, 8).getLong();
  }

  @Test
  void strictByDefault() throws Exception {
    start(null);
    assertThat(inbound.deadlinePolicy()).isSameAs(DeadlinePolicy.strict());
    try (SocketPeer p = SocketPeer.connectAndInit(inbound.address())) {
      p.write(callReq(2, 0, 0, SERVICE, rawHeaders(), bytes("remaining"), noHeaders(), bytes("")));
      p.expectError(2, 0x06, "timeout required");
      assertThat(remainingSeenByTheHandler(p, 3, 5000)).isBetween(1L, 5000L);
    }
  }

  @Test
  void aDefaultTimeoutServesCallsWithATtlOfZero() throws Exception {
    start(DeadlinePolicy.withDefaultTimeout(Duration.ofSeconds(2)));
    try (SocketPeer p = SocketPeer.connectAndInit(inbound.address())) {
      assertThat(remainingSeenByTheHandler(p, 2, 0)).isBetween(1L, 2000L);
    }
  }

  @Test
  void aCapBringsFarDeadlinesIn() throws Exception {
    start(DeadlinePolicy.builder().maxTimeout(Duration.ofMillis(300)).build());
    try (SocketPeer p = SocketPeer.connectAndInit(inbound.address())) {
      assertThat(remainingSeenByTheHandler(p, 2, 60_000)).isBetween(1L, 300L);
      // a message still arriving ends at the capped deadline, not at its ttl
      p.write(
          callReqWithChecksum(
              3,
              0x01,
              60_000,
              SERVICE,
              rawHeaders(),
              0,
              0,
              bytes("remaining"),
              noHeaders(),
              "partial".getBytes(UTF_8)));
      p.expectError(3, 0x01, "call req message 3 still incomplete at its deadline (300 ms)");
    }
  }
}
