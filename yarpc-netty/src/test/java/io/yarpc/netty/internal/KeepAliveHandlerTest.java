package io.yarpc.netty.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;
import io.yarpc.transport.KeepAlive;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The keepalive schedule on an {@link EmbeddedChannel} whose clock the test moves: when pings go out,
 * what counts as an answer, and when the connection is given up. (The transports' tests run it over real
 * sockets, through a black-holing proxy.)
 */
class KeepAliveHandlerTest {
  private static final KeepAlive KEEPALIVE =
      KeepAlive.builder().time(Duration.ofMillis(200)).timeout(Duration.ofMillis(500)).build();

  /** Counts pings; says whether there are calls; answers elsewhere when given a stage. */
  private static final class TestPinger implements KeepAliveHandler.Pinger {
    boolean calls = true;
    int pings;
    CompletionStage<?> answer;

    @Override
    public boolean hasCalls() {
      return calls;
    }

    @Override
    public CompletionStage<?> ping(Channel channel) {
      pings++;
      return answer;
    }
  }

  private final TestPinger pinger = new TestPinger();

  private EmbeddedChannel channel(KeepAlive keepAlive) {
    EmbeddedChannel ch = new EmbeddedChannel();
    ch.freezeTime();
    KeepAliveHandler.install(ch.pipeline(), keepAlive, pinger);
    return ch;
  }

  private static void advance(EmbeddedChannel ch, long millis) {
    ch.advanceTimeBy(millis, TimeUnit.MILLISECONDS);
    ch.runScheduledPendingTasks();
  }

  private static void read(EmbeddedChannel ch) {
    ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {1}));
    ((io.netty.buffer.ByteBuf) ch.readInbound()).release(); // passed on to the next handler
  }

  @Test
  void pingsAfterTheTimeWithNothingReadAndAnAnswerKeepsTheConnection() {
    EmbeddedChannel ch = channel(KEEPALIVE);
    advance(ch, 199);
    assertThat(pinger.pings).isZero();
    advance(ch, 1);
    assertThat(pinger.pings).isOne();
    advance(ch, 100);
    read(ch); // the answer
    advance(ch, 199);
    assertThat(pinger.pings).isOne();
    advance(ch, 1); // 200 ms after the answer: the next ping
    assertThat(pinger.pings).isEqualTo(2);
    advance(ch, 400);
    read(ch);
    advance(ch, 1_000);
    assertThat(ch.isActive()).isTrue();
    assertThat(KeepAliveHandler.failure(ch)).isNull();
    ch.finishAndReleaseAll();
  }

  @Test
  void readsPostponeThePing() {
    EmbeddedChannel ch = channel(KEEPALIVE);
    for (int i = 0; i < 10; i++) {
      advance(ch, 150);
      read(ch);
    }
    assertThat(pinger.pings).isZero();
    advance(ch, 200);
    assertThat(pinger.pings).isOne();
    ch.finishAndReleaseAll();
  }

  @Test
  void noAnswerWithinTheTimeoutClosesTheConnectionAndSaysWhy() {
    EmbeddedChannel ch = channel(KEEPALIVE);
    advance(ch, 200);
    assertThat(pinger.pings).isOne();
    advance(ch, 499);
    assertThat(ch.isActive()).isTrue();
    advance(ch, 1);
    assertThat(ch.isActive()).isFalse();
    assertThat(KeepAliveHandler.failure(ch))
        .isEqualTo("no answer to a keepalive ping within 500ms");
    advance(ch, 10_000);
    assertThat(pinger.pings).isOne();
  }

  @Test
  void aConnectionWithoutCallsIsPingedOnlyWithWithoutCalls() {
    pinger.calls = false;
    EmbeddedChannel quiet = channel(KEEPALIVE);
    advance(quiet, 1_000);
    assertThat(pinger.pings).isZero();
    pinger.calls = true; // a call starts: pinged at the next look
    advance(quiet, 200);
    assertThat(pinger.pings).isOne();
    quiet.finishAndReleaseAll();

    pinger.calls = false;
    EmbeddedChannel pinged = channel(KEEPALIVE.toBuilder().withoutCalls(true).build());
    advance(pinged, 200);
    assertThat(pinger.pings).isEqualTo(2);
    advance(pinged, 500);
    assertThat(pinged.isActive()).isFalse();
  }

  @Test
  void aPingAnsweredElsewhereCountsAndOneThatCannotBeGivesUpAtOnce() {
    CompletableFuture<Void> answer = new CompletableFuture<>();
    pinger.answer = answer;
    EmbeddedChannel ch = channel(KEEPALIVE);
    advance(ch, 200);
    assertThat(pinger.pings).isOne();
    advance(ch, 100);
    answer.complete(null);
    ch.runPendingTasks();
    CompletableFuture<Void> failed = new CompletableFuture<>();
    pinger.answer = failed;
    advance(ch, 199);
    assertThat(pinger.pings).isOne();
    advance(ch, 1); // 200 ms after the answer
    assertThat(pinger.pings).isEqualTo(2);
    assertThat(ch.isActive()).isTrue();
    failed.completeExceptionally(new java.io.IOException("Connection refused"));
    ch.runPendingTasks();
    assertThat(ch.isActive()).isFalse();
    assertThat(KeepAliveHandler.failure(ch)).startsWith("no answer to a keepalive ping");
  }

  @Test
  void withoutKeepAliveNothingIsInstalled() {
    EmbeddedChannel ch = channel(null);
    assertThat(ch.pipeline().get(KeepAliveHandler.NAME)).isNull();
    advance(ch, 60_000);
    assertThat(pinger.pings).isZero();
    assertThat(ch.isActive()).isTrue();
    ch.finishAndReleaseAll();
  }
}
