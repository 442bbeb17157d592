package io.yarpc.transport.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.Dispatcher;
import io.yarpc.transport.Body;
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Response;
import java.io.ByteArrayOutputStream;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * h2c bodies larger than one piece with a {@code content-length} are received into one array made for the
 * message ({@code ReceivedContent}), which counts in the pending-byte budget in full from the first byte,
 * and only while the budget has room for it; other bodies are received into pieces as before. A raw h2c
 * client orders the frames, so what the server holds at each point is known.
 */
class H2cWholeBodiesTest {
  private static final long PER_CONNECTION = 100_000;

  private HttpTransport transport;
  private HttpInbound inbound;
  private Dispatcher dispatcher;
  private final Map<Integer, Boolean> immutableByLength = new ConcurrentHashMap<>();

  @BeforeEach
  void start() {
    start(InboundLimits.builder().maxPendingBytesPerConnection(PER_CONNECTION).build());
  }

  private void start(InboundLimits limits) {
    if (dispatcher != null) {
      stop();
    }
    transport = HttpTransport.builder().eventLoopThreads(1).build();
    inbound = transport.inboundBuilder().limits(limits).build();
    dispatcher = Dispatcher.builder(YarpcTestService.NAME).inbound(inbound).build();
    dispatcher.register(
        Procedure.builder("probe")
            .unary(
                r -> {
                  Body body = r.body();
                  immutableByLength.put((int) body.length(), body.isImmutable());
                  return CompletableFuture.completedFuture(Response.of(Body.empty()));
                })
            .build());
    dispatcher.start();
  }

  @AfterEach
  void stop() {
    dispatcher.stop();
    transport.stop();
  }

  @Test
  void aWholeArrayCountsInFullAndOnlyWhileTheBudgetHasRoom() throws Exception {
    int first = 60_000; // fits the connection's budget of 100,000: one array
    int second = 50_000; // 60,000 already counted: no room for another array, so pieces
    int third = 70_000; // after both: room again
    try (RawH2Client c =
        new RawH2Client(port(), RawH2Client.SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20)) {
      c.windowUpdate(0, 1 << 24);
      c.awaitConnectionWindow(200_000);
      c.headers(1, RawH2Client.call("probe", first), false);
      c.data(1, new byte[1_000], false);
      awaitPending(first);
      assertThat(inbound.pendingBytes())
          .as("1,000 bytes received, the whole array counted")
          .isEqualTo(first);

      c.headers(3, RawH2Client.call("probe", second), false);
      c.sendData(3, new byte[second], true); // within the stream's initial window
      awaitAnswer(c, 3);
      c.sendData(1, new byte[first - 1_000], true);
      awaitAnswer(c, 1);
      c.headers(5, RawH2Client.call("probe", third), false);
      c.sendData(5, new byte[third], true);
      awaitAnswer(c, 5);
    }
    assertThat(immutableByLength)
        .containsExactlyInAnyOrderEntriesOf(Map.of(first, true, second, false, third, true));
    awaitPending(0);
    for (int i = 0; i < 500 && inbound.activeRequests() > 0; i++) {
      Thread.sleep(10); // an exchange ends once its answer's write completed
    }
    assertThat(inbound.activeRequests()).isZero();
  }

  @Test
  void headersOfManyStreamsBeforeTheirFirstBytesGetOnlyTheArraysTheBudgetHolds() throws Exception {
    int streams = 6;
    int declared = 40_000; // two arrays fit the connection's 100,000; the others get pieces
    try (RawH2Client c =
        new RawH2Client(port(), RawH2Client.SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20)) {
      c.windowUpdate(0, 1 << 24);
      c.awaitConnectionWindow(200_000);
      ByteArrayOutputStream wire = new ByteArrayOutputStream();
      for (int i = 0; i < streams; i++) {
        byte[] block = c.encode(RawH2Client.call("probe", declared));
        wire.writeBytes(
            RawH2Client.frameBytes(RawH2Client.HEADERS, RawH2Client.END_HEADERS, 1 + 2 * i, block));
      }
      for (int i = 0; i < streams; i++) {
        wire.writeBytes(RawH2Client.frameBytes(RawH2Client.DATA, 0, 1 + 2 * i, new byte[] {7}));
      }
      c.writeInPieces(wire.toByteArray(), wire.size()); // every head before any first byte
      awaitPending(2L * declared + (streams - 2));
      for (int i = 0; i < streams; i++) {
        c.rst(1 + 2 * i, 8); // CANCEL
      }
      awaitPending(0);
      c.headers(101, RawH2Client.call("probe", declared), false);
      c.sendData(101, new byte[declared], true);
      awaitAnswer(c, 101);
    }
    assertThat(immutableByLength).containsExactly(Map.entry(declared, true));
  }

  @Test
  void arraysAheadOfTheirBytesReserveAtMostAQuarterOfTheInboundsBudget() throws Exception {
    start(InboundLimits.builder().maxPendingBytes(400_000).build()); // reservations: 100,000
    int declared = 40_000;
    try (RawH2Client c =
        new RawH2Client(port(), RawH2Client.SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20)) {
      c.windowUpdate(0, 1 << 24);
      c.awaitConnectionWindow(200_000);
      for (int i = 0; i < 6; i++) {
        c.headers(1 + 2 * i, RawH2Client.call("probe", declared), false);
        c.data(1 + 2 * i, new byte[] {7}, false);
      }
      // two arrays reserve 79,998 bytes not sent yet; a third would pass 100,000: pieces, though
      // the budget itself (400,000) has room
      awaitPending(2L * declared + 4);
      c.sendData(1, new byte[declared - 1], true);
      awaitAnswer(c, 1);
      awaitPending(declared + 4);
      // stream 1's bytes all came: 39,999 reserved ahead now, room for another array
      c.headers(13, RawH2Client.call("probe", declared), false);
      c.data(13, new byte[] {7}, false);
      awaitPending(2L * declared + 4);
      for (int stream : new int[] {3, 5, 7, 9, 11, 13}) {
        c.rst(stream, 8); // CANCEL
      }
      awaitPending(0);
    }
    assertThat(immutableByLength).containsExactly(Map.entry(declared, true));
  }

  private static void awaitAnswer(RawH2Client c, int stream) throws Exception {
    RawH2Client.Frame f = c.await(x -> x.stream() == stream && x.endStream());
    assertThat(f).as("stream %d answered", stream).isNotNull();
    assertThat(f.type()).isNotEqualTo(RawH2Client.RST_STREAM);
  }

  private void awaitPending(long n) throws InterruptedException {
    for (int i = 0; i < 500 && inbound.pendingBytes() != n; i++) {
      Thread.sleep(10);
    }
    assertThat(inbound.pendingBytes()).isEqualTo(n);
  }

  private int port() {
    return inbound.address().getPort();
  }
}
