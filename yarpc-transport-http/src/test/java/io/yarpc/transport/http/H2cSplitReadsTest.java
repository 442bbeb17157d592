package io.yarpc.transport.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.Dispatcher;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * h2c requests whose frames are written in pieces of 1 byte to 30 KB, each sent on its own, so that the
 * server's reads end inside frame headers and DATA payloads, hold the end of one frame and the start of
 * others, with streams interleaved (where the reads really end is up to the kernel; {@code
 * FrameCumulatorTest} covers each cumulation path deterministically). The server's frame decoder keeps the
 * partial frame of each read until the next completes it (see {@code FrameCumulator}): every body must
 * arrive whole and in order, and nothing may be held or leaked after (the paranoid leak detector runs for
 * every test).
 */
class H2cSplitReadsTest {
  private final Random random = new Random(11);
  private HttpTransport transport;
  private HttpInbound inbound;
  private Dispatcher dispatcher;

  @BeforeEach
  void start() {
    transport = HttpTransport.builder().eventLoopThreads(2).build();
    inbound = transport.inbound();
    dispatcher = Dispatcher.builder(YarpcTestService.NAME).inbound(inbound).build();
    dispatcher.register(Raw.procedure("echo", body -> body));
    dispatcher.start();
  }

  @AfterEach
  void stop() {
    dispatcher.stop();
    transport.stop();
  }

  @Test
  void interleavedBodiesCutAtEveryKindOfPointArriveWhole() throws Exception {
    Map<Integer, byte[]> bodies = new LinkedHashMap<>();
    bodies.put(1, bytes(60_000));
    bodies.put(3, bytes(7_001));
    bodies.put(5, bytes(1));
    bodies.put(7, bytes(33_000));
    bodies.put(9, new byte[0]);
    try (RawH2Client c =
        new RawH2Client(port(), RawH2Client.SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20)) {
      c.windowUpdate(0, 1 << 24); // room for the answers
      c.awaitConnectionWindow(200_000); // the server's connection credit (its streams get 64 KiB+)
      ByteArrayOutputStream wire = new ByteArrayOutputStream();
      for (Map.Entry<Integer, byte[]> e : bodies.entrySet()) {
        byte[] block = c.encode(RawH2Client.call("echo", e.getValue().length));
        int flags =
            RawH2Client.END_HEADERS | (e.getValue().length == 0 ? RawH2Client.END_STREAM : 0);
        wire.writeBytes(RawH2Client.frameBytes(RawH2Client.HEADERS, flags, e.getKey(), block));
      }
      // DATA frames round robin, of sizes that put frame ends anywhere in the cuts below
      int[] frameSizes = {16_384, 100, 9_000, 1, 16_384, 4_095};
      Map<Integer, Integer> sent = new HashMap<>();
      for (int turn = 0, left = 1; left > 0; turn++) {
        left = 0;
        for (Map.Entry<Integer, byte[]> e : bodies.entrySet()) {
          byte[] body = e.getValue();
          int at = sent.getOrDefault(e.getKey(), 0);
          if (at == body.length) {
            continue;
          }
          int n = Math.min(frameSizes[(turn + e.getKey()) % frameSizes.length], body.length - at);
          boolean last = at + n == body.length;
          wire.writeBytes(
              RawH2Client.frameBytes(
                  RawH2Client.DATA,
                  last ? RawH2Client.END_STREAM : 0,
                  e.getKey(),
                  Arrays.copyOfRange(body, at, at + n)));
          sent.put(e.getKey(), at + n);
          left += last ? 0 : 1;
        }
      }
      c.writeInPieces(
          wire.toByteArray(), 1, 9, 5_000, 3, 20_000, 700, 4_096, 4_095, 12, 8_192, 30_000, 17);

      Map<Integer, ByteArrayOutputStream> answers = new HashMap<>();
      Map<Integer, Integer> statuses = new HashMap<>();
      int ended = 0;
      while (ended < bodies.size()) {
        RawH2Client.Frame f = c.read();
        assertThat(f).as("the server closed the connection").isNotNull();
        if (f.type() == RawH2Client.HEADERS && f.status() != 0) {
          statuses.put(f.stream(), f.status());
        } else if (f.type() == RawH2Client.DATA) {
          answers
              .computeIfAbsent(f.stream(), s -> new ByteArrayOutputStream())
              .writeBytes(f.payload());
        }
        assertThat(f.type())
            .as("no reset or goaway: %s", f)
            .isNotIn(RawH2Client.RST_STREAM, RawH2Client.GOAWAY);
        if (f.endStream()) {
          ended++;
        }
      }
      for (Map.Entry<Integer, byte[]> e : bodies.entrySet()) {
        assertThat(statuses.get(e.getKey())).as("stream %d", e.getKey()).isEqualTo(200);
        byte[] answer = answers.getOrDefault(e.getKey(), new ByteArrayOutputStream()).toByteArray();
        assertThat(answer).as("stream %d's body, echoed", e.getKey()).isEqualTo(e.getValue());
      }
    }
    // a normal call after, over YARPC's own h2c outbound, with a body of many frames
    HttpOutbound out = transport.singleOutboundBuilder(inbound.hostPort()).http2(true).build();
    out.start();
    try {
      byte[] big = bytes(300_000);
      RequestMeta meta =
          RequestMeta.builder()
              .caller("test")
              .service(YarpcTestService.NAME)
              .procedure("echo")
              .encoding("raw")
              .deadline(Deadline.after(Duration.ofSeconds(10)))
              .build();
      Response r = out.call(Request.of(meta, Body.of(big))).get(10, TimeUnit.SECONDS);
      try {
        assertThat(r.body().toByteArray()).isEqualTo(big);
      } finally {
        r.body().release();
      }
    } finally {
      out.stop();
    }
    for (int i = 0; i < 500 && (inbound.activeRequests() > 0 || inbound.pendingBytes() > 0); i++) {
      Thread.sleep(10);
    }
    assertThat(inbound.activeRequests()).as("requests in flight").isZero();
    assertThat(inbound.pendingBytes()).as("request bytes held").isZero();
  }

  private int port() {
    return inbound.address().getPort();
  }

  private byte[] bytes(int n) {
    byte[] b = new byte[n];
    random.nextBytes(b);
    return b;
  }
}
