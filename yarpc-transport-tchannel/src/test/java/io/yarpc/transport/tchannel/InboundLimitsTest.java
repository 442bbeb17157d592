package io.yarpc.transport.tchannel;

import static io.yarpc.transport.tchannel.Wire.bytes;
import static io.yarpc.transport.tchannel.Wire.callReq;
import static io.yarpc.transport.tchannel.Wire.callReqContinue;
import static io.yarpc.transport.tchannel.Wire.callReqWithChecksum;
import static io.yarpc.transport.tchannel.Wire.noHeaders;
import static io.yarpc.transport.tchannel.Wire.rawHeaders;
import static io.yarpc.transport.tchannel.Wire.transportHeaders;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.PooledByteBufAllocator;
import io.yarpc.Dispatcher;
import io.yarpc.encoding.json.Json;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.testing.MemoryBaseline;
import io.yarpc.transport.InboundLimits;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Attacks on the TChannel inbound's {@link InboundLimits}, over real loopback sockets with frames written
 * by hand, with small limits so each runs in seconds. Each test checks that (a) the limit fired with the
 * protocol's answer (the error frame's code and message, or the connection closed where that is the
 * answer), (b) a normal call on a fresh connection succeeds afterwards, (c) the memory the attack made the
 * server hold is given back ({@link MemoryBaseline}; Netty's paranoid leak detection fails any leak), and
 * (d) the calls within the limits all completed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InboundLimitsTest {
  private static final String SERVICE = "limits-svc";
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final long SLACK = 16 << 20;
  private static final int TIMEOUT = 0x01;
  private static final int BUSY = 0x03;
  private static final int BAD_REQUEST = 0x06;

  private final List<Closeable> closeables = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private final CountDownLatch release = new CountDownLatch(1);
  private final Semaphore blockStarted = new Semaphore(0);
  private Dispatcher dispatcher;
  private TChannelInbound inbound;
  private MemoryBaseline baseline;

  private void start(InboundLimits limits) throws Exception {
    start(transport -> transport.inboundBuilder().limits(limits));
  }

  private void start(
      java.util.function.Function<TChannelTransport, TChannelInbound.Builder> builder)
      throws Exception {
    TChannelTransport transport = TChannelTransport.builder().serviceName(SERVICE).build();
    inbound = builder.apply(transport).build();
    dispatcher =
        Dispatcher.builder(SERVICE)
            .inbound(inbound)
            .shutdownGracePeriod(Duration.ofSeconds(1))
            .build();
    dispatcher.register(
        Raw.procedure("echo", body -> body),
        Json.procedure("json-echo", Map.class, request -> request),
        Raw.procedure(
            "block",
            body -> {
              blockStarted.release();
              release.await(20, TimeUnit.SECONDS);
              return body;
            }));
    dispatcher.start();
    normalCallOnAFreshConnection(); // warms the pools up before the baseline
    awaitTrue(() -> inbound.acceptedConnections() == 0, "the warm-up connection closed");
    baseline = MemoryBaseline.take();
  }

  @AfterEach
  void stop() throws Exception {
    release.countDown();
    for (Closeable c : closeables) {
      c.close();
    }
    for (Thread t : threads) {
      t.join(WAIT.toMillis());
    }
    if (dispatcher != null) {
      dispatcher.stop();
    }
  }

  // ---------------------------------------------------------------------------------------------------
  // Helpers

  private SocketPeer peer() throws IOException {
    SocketPeer p = SocketPeer.connectAndInit(inbound.address());
    closeables.add(p);
    return p;
  }

  private Thread background(String name, ThrowingRunnable task) {
    Thread t =
        new Thread(
            () -> {
              try {
                task.run();
              } catch (Exception e) {
                // the server closed the socket, or the test did: the test checks outcomes
              }
            },
            name);
    t.setDaemon(true);
    threads.add(t);
    t.start();
    return t;
  }

  interface ThrowingRunnable {
    void run() throws Exception;
  }

  private static void awaitTrue(BooleanSupplier condition, String what)
      throws InterruptedException {
    long giveUp = System.nanoTime() + WAIT.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - giveUp > 0) {
        throw new AssertionError("not within " + WAIT + ": " + what);
      }
      Thread.sleep(5);
    }
  }

  /** (b): a normal call on a fresh connection succeeds. */
  private void normalCallOnAFreshConnection() throws IOException {
    try (SocketPeer p = SocketPeer.connectAndInit(inbound.address())) {
      p.write(echoCall(2));
      expectEcho(p, 2);
    }
  }

  /** (c): once the attackers are gone, what the server held is given back. */
  private void assertMemoryReturned() throws Exception {
    for (Closeable c : closeables) {
      c.close();
    }
    awaitTrue(() -> inbound.acceptedConnections() == 0, "the attackers' connections closed");
    // a connection stops counting when its close future completes; its partial messages are
    // released just after, when its pipeline handles the close (see TChannelInbound#pendingBytes)
    awaitTrue(() -> inbound.pendingBytes() == 0, "the attackers' partial messages were released");
    baseline.awaitReturned(WAIT, SLACK);
  }

  private static byte[] echoCall(int id) {
    return callReq(id, 0, 5000, SERVICE, rawHeaders(), bytes("echo"), noHeaders(), bytes("hello"));
  }

  private static void expectEcho(SocketPeer p, int id) throws IOException {
    SocketPeer.Frame f = p.read();
    assertThat(f.type()).as("call res, got %s", f).isEqualTo(0x04);
    assertThat(f.id()).isEqualTo(id);
    assertThat(f.responseCode()).isZero();
  }

  /** The first frame of a call req whose arg3 goes on in frames that never come. */
  private static byte[] unfinishedCall(int id, long ttl, int bodyBytes) {
    return callReqWithChecksum(
        id,
        0x01,
        ttl,
        SERVICE,
        rawHeaders(),
        0,
        0,
        bytes("echo"),
        noHeaders(),
        new byte[bodyBytes]);
  }

  private static byte[] pings(int count) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(count * 16);
    for (int i = 0; i < count; i++) {
      out.writeBytes(Wire.frame(0xD0, 1000 + i, new byte[0]));
    }
    return out.toByteArray();
  }

  /** Reads {@code count} frames and returns them by message id. */
  private static Map<Integer, SocketPeer.Frame> readById(SocketPeer p, int count)
      throws IOException {
    Map<Integer, SocketPeer.Frame> byId = new HashMap<>();
    for (int i = 0; i < count; i++) {
      SocketPeer.Frame f = p.read();
      assertThat(byId.put(f.id(), f)).as("a second answer for %s", f).isNull();
    }
    return byId;
  }

  // ---------------------------------------------------------------------------------------------------
  // Unfinished fragmented messages

  /**
   * The attack, scaled down: two connections each start 100 fragmented calls of 16 KiB with a
   * ttl of 1 s and never finish them. Each connection takes 64 (its in-flight limit; the others are busy)
   * and ends every one of them at its ttl with a timeout error frame, releasing the fragments; later
   * fragments of an ended message are ignored and the connection goes on.
   */
  @Test
  void unfinishedFragmentedCallsEndAtTheirTtl() throws Exception {
    start(InboundLimits.builder().maxConcurrentCallsPerConnection(64).build());
    List<SocketPeer> attackers = List.of(peer(), peer());
    for (SocketPeer p : attackers) {
      ByteArrayOutputStream first = new ByteArrayOutputStream();
      for (int id = 2; id < 52; id++) {
        first.writeBytes(unfinishedCall(id, 1000, 16 << 10));
      }
      first.writeBytes(echoCall(52)); // (d) a call within the limits, while 50 are unfinished
      p.write(first.toByteArray());
    }
    for (SocketPeer p : attackers) {
      expectEcho(p, 52);
      ByteArrayOutputStream more = new ByteArrayOutputStream();
      for (int id = 53; id < 103; id++) {
        more.writeBytes(unfinishedCall(id, 1000, 16 << 10));
      }
      p.write(more.toByteArray());
    }
    for (SocketPeer p : attackers) {
      Map<Integer, SocketPeer.Frame> answers = readById(p, 100);
      for (int id = 2; id < 103; id++) {
        if (id == 52) {
          continue;
        }
        SocketPeer.Frame f = answers.get(id);
        assertThat(f).as("answer for message %d", id).isNotNull();
        assertThat(f.type()).as("%s", f).isEqualTo(0xFF);
        if (id < 67) { // 50 + 14 more fit under the limit of 64
          assertThat(f.errorCode()).as("%s", f).isEqualTo(TIMEOUT);
          assertThat(f.errorMessage())
              .isEqualTo(
                  "call req message " + id + " still incomplete at its deadline (ttl 1000 ms)");
        } else {
          assertThat(f.errorCode()).as("%s", f).isEqualTo(BUSY);
          assertThat(f.errorMessage())
              .isEqualTo("too many in-flight calls on this connection (the limit is 64)");
        }
      }
      // the ended messages' last fragments are ignored; the connection goes on
      p.write(callReqContinue(2, 0, 0, 0, new byte[100]), callReqContinue(3, 0, 0, 0, new byte[1]));
      p.assertOpen(7000);
      p.write(echoCall(200));
      expectEcho(p, 200);
    }
    awaitTrue(() -> inbound.pendingBytes() == 0, "the fragments were released");
    normalCallOnAFreshConnection();
    assertMemoryReturned();
  }

  /** A message whose ttl is far away still ends at the read timeout. */
  @Test
  void unfinishedCallsEndAtTheReadTimeout() throws Exception {
    start(InboundLimits.builder().readTimeout(Duration.ofMillis(300)).build());
    SocketPeer p = peer();
    p.write(unfinishedCall(2, 60_000, 1000), unfinishedCall(3, 60_000, 1000));
    Map<Integer, SocketPeer.Frame> answers = readById(p, 2);
    for (int id = 2; id <= 3; id++) {
      SocketPeer.Frame f = answers.get(id);
      assertThat(f.errorCode()).as("%s", f).isEqualTo(TIMEOUT);
      assertThat(f.errorMessage())
          .isEqualTo(
              "call req message " + id + " still incomplete after the read timeout of 300 ms");
    }
    p.write(echoCall(4));
    expectEcho(p, 4);
    normalCallOnAFreshConnection();
    assertMemoryReturned();
  }

  // ---------------------------------------------------------------------------------------------------
  // Bytes held for messages still arriving

  /**
   * One connection sends 64 unfinished calls of 16 KiB (1 MiB and more pinned) against a budget of 256
   * KiB: it is read on (its oldest message could go on), but the messages that would take the others
   * past the budget are refused with busy, so what the server holds stays near the budget; the held ones
   * end at their ttl, and every message is answered.
   */
  @Test
  void aConnectionPastItsPendingBudgetRefusesItsNewerMessages() throws Exception {
    long budget = 256 << 10;
    start(InboundLimits.builder().maxPendingBytesPerConnection(budget).build());
    SocketPeer p = peer();
    int messages = 64;
    AtomicLong maxHeld = new AtomicLong();
    AtomicBoolean done = new AtomicBoolean();
    background(
        "held-sampler",
        () -> {
          while (!done.get()) {
            maxHeld.accumulateAndGet(inbound.pendingBytes(), Math::max);
            Thread.sleep(1);
          }
        });
    background(
        "attacker",
        () -> {
          for (int id = 2; id < 2 + messages; id++) {
            p.write(unfinishedCall(id, 300, 16 << 10));
          }
        });
    Map<Integer, SocketPeer.Frame> answers = readById(p, messages);
    done.set(true);
    assertThat(answers.values()).allSatisfy(f -> assertThat(f.errorCode()).isIn(TIMEOUT, BUSY));
    assertThat(answers.values()).anySatisfy(f -> assertThat(f.errorCode()).isEqualTo(BUSY));
    assertThat(maxHeld.get())
        .as("bytes held at most (the attacker sent %d KiB)", messages * 16)
        .isGreaterThan(budget / 2)
        .isLessThan(budget + (192 << 10)); // the oldest message and a frame past the budget
    p.write(echoCall(200));
    expectEcho(p, 200);
    normalCallOnAFreshConnection();
    assertMemoryReturned();
  }

  /**
   * Four connections send 512 KiB of unfinished calls each against a budget of 256 KiB for all of them:
   * every connection holding such bytes stops being read while the total is past the budget, but one
   * (exempt, to finish its oldest message), whose newer messages are refused with busy meanwhile.
   */
  @Test
  void connectionsPastTheSharedPendingBudgetStopBeingRead() throws Exception {
    long budget = 256 << 10;
    start(InboundLimits.builder().maxPendingBytes(budget).build());
    int connections = 4;
    int messages = 32;
    List<SocketPeer> attackers = new ArrayList<>();
    for (int i = 0; i < connections; i++) {
      attackers.add(peer());
    }
    AtomicLong maxHeld = new AtomicLong();
    AtomicBoolean done = new AtomicBoolean();
    background(
        "held-sampler",
        () -> {
          while (!done.get()) {
            maxHeld.accumulateAndGet(inbound.pendingBytes(), Math::max);
            Thread.sleep(1);
          }
        });
    for (SocketPeer p : attackers) {
      background(
          "attacker",
          () -> {
            for (int id = 2; id < 2 + messages; id++) {
              p.write(unfinishedCall(id, 300, 16 << 10));
            }
          });
    }
    for (SocketPeer p : attackers) {
      Map<Integer, SocketPeer.Frame> answers = readById(p, messages);
      // timeout at the ttl, or busy: a newer message read past the exhausted budget
      assertThat(answers.values()).allSatisfy(f -> assertThat(f.errorCode()).isIn(TIMEOUT, BUSY));
    }
    done.set(true);
    assertThat(maxHeld.get())
        .as("bytes held at most (the attackers sent %d KiB)", connections * messages * 16)
        .isGreaterThan(budget / 2)
        .isLessThan(budget + connections * (160L << 10));
    for (SocketPeer p : attackers) {
      p.write(echoCall(200));
      expectEcho(p, 200);
    }
    normalCallOnAFreshConnection();
    assertMemoryReturned();
  }

  /** The frames of a raw echo call whose body goes in {@code fragments} frames of {@code chunk} bytes. */
  private static List<byte[]> multiFrameCall(int id, long ttl, int fragments, int chunk) {
    List<byte[]> frames = new ArrayList<>();
    frames.add(
        callReqWithChecksum(
            id,
            0x01,
            ttl,
            SERVICE,
            rawHeaders(),
            0,
            0,
            bytes("echo"),
            noHeaders(),
            new byte[chunk]));
    for (int i = 1; i < fragments; i++) {
      frames.add(callReqContinue(id, i < fragments - 1 ? 0x01 : 0, 0, 0, new byte[chunk]));
    }
    return frames;
  }

  /** Reads frames until each of {@code ids} has a complete call res (no error frame), or fails. */
  private static void expectEchoes(SocketPeer p, Set<Integer> ids) throws IOException {
    Set<Integer> open = new HashSet<>(ids);
    while (!open.isEmpty()) {
      SocketPeer.Frame f = p.read();
      assertThat(f.type()).as("call res or continue, got %s", f).isIn(0x04, 0x14);
      assertThat(open).as("an answer for an open call: %s", f).contains(f.id());
      if (f.type() == 0x04) {
        assertThat(f.responseCode()).isZero();
      }
      if ((f.payload()[0] & 0x01) == 0) {
        open.remove(f.id());
      }
    }
  }

  /**
   * Stalled connections, one message each, hold the whole shared budget: a fresh connection's call
   * spanning frames still completes (long before its ttl), because one connection at a time may finish
   * its oldest message past the budget. The stalled connection that took the budget past its limit took
   * that exemption, for a message that ends at its ttl of 3 s: then the exemption passes on, though the
   * budget stays exhausted by the other stalled messages (one arrived while the budget was exhausted).
   */
  @Test
  void aFreshConnectionFinishesItsMessageWhileStalledConnectionsHoldTheSharedBudget()
      throws Exception {
    long budget = 128 << 10;
    start(InboundLimits.builder().maxPendingBytes(budget).build());
    // Each of these is charged 16 KiB or more (its chunk pins the one buffer of up to 32 KiB it was
    // merged into: frames under 16 KiB are never composed from reads), less than 48 KiB: none
    // crosses. A frame is charged chunk by chunk, the body last: only once the total grew by at
    // least the body is the whole frame counted (a smaller step is its arg1, and one stalled
    // connection too many would cross the budget and take the exemption for its 60 s message).
    while (inbound.pendingBytes() + (48 << 10) < budget) {
      long before = inbound.pendingBytes();
      peer().write(unfinishedCall(2, 60_000, 16 << 10));
      awaitTrue(() -> inbound.pendingBytes() > before + (16 << 10), "the stalled message was read");
    }
    // takes the budget past its limit (48 KiB or more), and the exemption
    SocketPeer exempt = peer();
    exempt.write(unfinishedCall(2, 3000, 48 << 10));
    awaitTrue(() -> inbound.pendingBytes() >= budget, "the budget exhausted");
    // still read past the budget: its ping is answered, so its call frame was handled before (the
    // exemption taken) and the next stalled message cannot take the exemption instead
    exempt.write(Wire.frame(0xD0, 100, new byte[0]));
    SocketPeer.Frame pong = exempt.read();
    assertThat(pong.type()).as("ping res, got %s", pong).isEqualTo(0xD1);
    long before = inbound.pendingBytes();
    // read, then waits for the budget; with the others (80 KiB or more) it exceeds the budget alone
    peer().write(unfinishedCall(2, 60_000, 56 << 10));
    awaitTrue(
        () -> inbound.pendingBytes() > before + (56 << 10), "the last stalled message was read");
    SocketPeer.Frame ended = exempt.read();
    assertThat(ended.errorCode()).as("%s", ended).isEqualTo(TIMEOUT);
    assertThat(inbound.pendingBytes()).as("the budget is still exhausted").isGreaterThan(budget);

    SocketPeer p = peer();
    List<byte[]> call = multiFrameCall(7, 20_000, 4, 4096);
    long held = inbound.pendingBytes();
    p.write(call.get(0)); // read alone: the budget is exhausted once it is held
    awaitTrue(() -> inbound.pendingBytes() > held, "the first frame was read");
    p.write(call.subList(1, call.size()).toArray(new byte[0][]));
    expectEchoes(p, Set.of(7));
    assertThat(inbound.pendingBytes()).as("the stalled messages still wait").isGreaterThan(budget);
    normalCallOnAFreshConnection();
    assertMemoryReturned();
  }

  /**
   * Two calls interleaved on one connection, 200 KiB each, against a connection budget of 256 KiB: the
   * connection keeps reading (its oldest message may always complete, the other holds less than the
   * budget), and both complete.
   */
  @Test
  void interleavedCallsOverTheConnectionBudgetBothComplete() throws Exception {
    start(InboundLimits.builder().maxPendingBytesPerConnection(256 << 10).build());
    SocketPeer p = peer();
    List<byte[]> a = multiFrameCall(3, 20_000, 50, 4096);
    List<byte[]> b = multiFrameCall(5, 20_000, 50, 4096);
    ByteArrayOutputStream both = new ByteArrayOutputStream();
    for (int i = 0; i < a.size(); i++) {
      both.writeBytes(a.get(i));
      both.writeBytes(b.get(i));
    }
    background("sender", () -> p.write(both.toByteArray()));
    expectEchoes(p, Set.of(3, 5));
    p.write(echoCall(9));
    expectEcho(p, 9);
    normalCallOnAFreshConnection();
    assertMemoryReturned();
  }

  // ---------------------------------------------------------------------------------------------------
  // Peers that do not read

  /**
   * A peer sends up to 2,000,000 pings and never reads the answers: the server stops reading once the
   * answers back up, so what it queues stays small, and when nothing it wrote moves for the write timeout
   * it closes the connection and releases what was queued.
   */
  @Test
  void pingFloodFromAPeerThatNeverReads() throws Exception {
    // The server's kernel send buffer is made small so that the answers back up within a few
    // thousand pings: with the system's (megabytes) and leak detection on every buffer, that takes
    // much longer.
    start(
        transport ->
            transport
                .inboundBuilder()
                .limits(InboundLimits.builder().writeTimeout(Duration.ofMillis(500)).build())
                .sendBufferSize(16 << 10));
    long pinnedBefore = pinned();
    Socket s = new Socket();
    closeables.add(s);
    s.setReceiveBufferSize(1); // the smallest the system allows
    s.connect(inbound.address(), 10_000);
    s.setSoTimeout(10_000);
    OutputStream out = s.getOutputStream();
    out.write(Wire.initReq(1));
    DataInputStream in = new DataInputStream(s.getInputStream());
    byte[] initRes = new byte[in.readUnsignedShort() - 2];
    in.readFully(initRes); // the last thing this peer reads
    int total = 2_000_000;
    int batch = 4096;
    byte[] pings = pings(batch);
    AtomicInteger sent = new AtomicInteger();
    AtomicReference<Exception> writeFailure = new AtomicReference<>();
    Thread flooder =
        background(
            "ping-flood",
            () -> {
              try {
                while (sent.get() < total) {
                  out.write(pings);
                  sent.addAndGet(batch);
                }
              } catch (IOException e) {
                writeFailure.set(e);
              }
            });
    AtomicLong maxPinned = new AtomicLong();
    awaitTrue(
        () -> {
          maxPinned.accumulateAndGet(pinned(), Math::max);
          return inbound.acceptedConnections() == 0;
        },
        "the connection closed by the write timeout");
    flooder.join(WAIT.toMillis());
    assertThat(writeFailure.get()).as("the flood ended because the server closed").isNotNull();
    assertThat(sent.get()).as("pings the server let in").isLessThan(total);
    assertThat(maxPinned.get() - pinnedBefore)
        .as("pooled memory the flood made the server hold")
        .isLessThan(4L << 20);
    normalCallOnAFreshConnection();
    assertMemoryReturned();
  }

  /**
   * A peer that never reads fills the socket with pings: the idle timeout (pings are no calls) comes
   * before the write timeout, and the connection, closing once what it queued is written, is still
   * closed by the write watch (which goes on for a closing connection, as after a fatal error) instead
   * of staying open for ever.
   */
  @Test
  void aClosingConnectionWhoseSocketIsFullIsStillClosed() throws Exception {
    start(
        transport ->
            transport
                .inboundBuilder()
                .limits(
                    InboundLimits.builder()
                        // the warm-up call's connection must not idle out between its handshake
                        // and its call on a loaded machine: 2 s, not less
                        .idleTimeout(Duration.ofSeconds(2))
                        .writeTimeout(Duration.ofSeconds(4))
                        .build())
                .sendBufferSize(16 << 10));
    Socket s = new Socket();
    closeables.add(s);
    s.setReceiveBufferSize(1);
    s.connect(inbound.address(), 10_000);
    s.setSoTimeout(10_000);
    OutputStream out = s.getOutputStream();
    out.write(Wire.initReq(1));
    DataInputStream in = new DataInputStream(s.getInputStream());
    byte[] initRes = new byte[in.readUnsignedShort() - 2];
    in.readFully(initRes); // the last thing this peer reads
    byte[] pings = pings(4096);
    background(
        "ping-flood",
        () -> {
          for (int i = 0; i < 500; i++) {
            out.write(pings);
          }
        });
    awaitTrue(() -> inbound.acceptedConnections() == 0, "the connection closed");
    normalCallOnAFreshConnection();
    assertMemoryReturned();
  }

  private static long pinned() {
    PooledByteBufAllocator a = PooledByteBufAllocator.DEFAULT;
    return a.pinnedDirectMemory() + a.pinnedHeapMemory();
  }

  // ---------------------------------------------------------------------------------------------------
  // Headers

  private static byte[] jsonObject(int keys) {
    StringBuilder sb = new StringBuilder("{");
    for (int i = 0; i < keys; i++) {
      sb.append(i == 0 ? "" : ",").append("\"k").append(i).append("\":\"v\"");
    }
    return sb.append('}').toString().getBytes(UTF_8);
  }

  private static byte[] jsonCall(int id, byte[] arg2) {
    return callReq(
        id,
        0,
        5000,
        SERVICE,
        transportHeaders("as", "json", "cn", "bad-client"),
        bytes("json-echo"),
        arg2,
        bytes("{}"));
  }

  /**
   * The frames of a json call whose arg2 is {@code arg2}, cut into chunks of 60,000 bytes over as many
   * frames as it takes (checksum none).
   */
  private static List<byte[]> fragmentedJsonCall(int id, byte[] arg2) {
    int chunk = 60_000;
    List<byte[]> frames = new ArrayList<>();
    byte[] headers = transportHeaders("as", "json", "cn", "bad-client");
    int pos = Math.min(chunk, arg2.length);
    frames.add(
        callReqWithChecksum(
            id,
            0x01,
            5000,
            SERVICE,
            headers,
            0,
            0,
            bytes("json-echo"),
            java.util.Arrays.copyOfRange(arg2, 0, pos)));
    while (arg2.length - pos > chunk) {
      frames.add(
          callReqContinue(id, 0x01, 0, 0, java.util.Arrays.copyOfRange(arg2, pos, pos + chunk)));
      pos += chunk;
    }
    frames.add(
        callReqContinue(
            id, 0, 0, 0, java.util.Arrays.copyOfRange(arg2, pos, arg2.length), bytes("{}")));
    return frames;
  }

  /**
   * Sends each attacker's first frame of a json call (message 5) whose arg2 is 4 MiB of JSON, checks it
   * is refused at once, then sends the rest of the message and an echo call (message 6) in the
   * background, on the threads returned.
   */
  private List<Thread> hugeJsonHeaders(List<SocketPeer> attackers) throws IOException {
    List<byte[]> frames = fragmentedJsonCall(5, jsonObject(330_000));
    for (SocketPeer a : attackers) {
      a.write(frames.get(0));
    }
    for (SocketPeer a : attackers) {
      a.expectError(
          5, BAD_REQUEST, "the headers (arg2) of message 5 exceed the limit of 4096 bytes");
    }
    List<Thread> writers = new ArrayList<>();
    for (SocketPeer a : attackers) {
      writers.add(
          background(
              "rest-of-arg2",
              () -> {
                for (byte[] f : frames.subList(1, frames.size())) {
                  a.write(f);
                }
                a.write(echoCall(6));
              }));
    }
    return writers;
  }

  private static String tooManyHeaders(String procedure) {
    return "request for procedure \""
        + procedure
        + "\" of service \""
        + SERVICE
        + "\" from caller \"bad-client\" has more than 16 headers (transport and application"
        + " headers together)";
  }

  /**
   * Headers past the count or byte limits are refused with a bad-request error frame before arg2 is
   * decoded, and the connection stays: JSON headers with too many keys, a binary header map claiming
   * 65,535 entries, and the attack (a JSON arg2 of megabytes holding hundreds of thousands of
   * keys, on two connections at once), which is refused as soon as its first frame passes the byte
   * limit.
   */
  @Test
  void headersOverTheCountOrByteLimit() throws Exception {
    start(InboundLimits.builder().maxHeaderCount(16).maxHeaderBytes(4096).build());
    SocketPeer p = peer();
    // (d) within the limits: 2 transport headers and 14 application headers
    p.write(jsonCall(2, jsonObject(14)));
    expectEcho(p, 2);
    p.write(jsonCall(3, jsonObject(15)));
    p.expectError(3, BAD_REQUEST, tooManyHeaders("json-echo"));
    byte[] binaryClaimingAll = {(byte) 0xFF, (byte) 0xFF, 0, 1, 'a', 0, 1, 'b'};
    p.write(
        callReq(4, 0, 5000, SERVICE, rawHeaders(), bytes("echo"), binaryClaimingAll, bytes("x")));
    p.expectError(4, BAD_REQUEST, tooManyHeaders("echo"));
    p.assertOpen(9);

    // the attack: a JSON arg2 of megabytes (here 4 MiB, ~330,000 keys) on two connections
    List<SocketPeer> attackers = List.of(peer(), peer());
    List<Thread> writers = hugeJsonHeaders(attackers);
    p.write(echoCall(10)); // meanwhile, another connection is served
    expectEcho(p, 10);
    for (SocketPeer a : attackers) {
      expectEcho(a, 6); // the rest of the refused message was dropped; the connection goes on
    }
    for (Thread w : writers) {
      w.join(WAIT.toMillis()); // and lets go of the attack's frames
    }
    normalCallOnAFreshConnection();
    assertMemoryReturned();
  }

  // ---------------------------------------------------------------------------------------------------
  // Connections

  /** A connection beyond the limit is closed at once, before anything is read, and counted. */
  @Test
  void connectionsBeyondTheLimitAreClosedAtAccept() throws Exception {
    start(InboundLimits.builder().maxConnections(2).build());
    SocketPeer first = peer();
    SocketPeer second = peer();
    SocketPeer third = SocketPeer.connect(inbound.address());
    closeables.add(third);
    third.write(Wire.initReq(1)); // may fail or not: the server reads nothing of it
    assertThat(third.closedByPeer()).as("the third connection was closed").isTrue();
    assertThat(inbound.refusedConnections()).isEqualTo(1);
    // (d) the connections within the limit are served
    first.write(echoCall(2));
    expectEcho(first, 2);
    second.write(echoCall(2));
    expectEcho(second, 2);
    first.close();
    awaitTrue(() -> inbound.acceptedConnections() == 1, "the first connection closed");
    normalCallOnAFreshConnection();
    assertMemoryReturned();
  }

  /**
   * A connection with no call in flight for the idle timeout is closed, even while it pings; one with a
   * call in flight is not, and is closed once the call is done and the idle timeout passed again.
   */
  @Test
  void idleConnectionsAreClosed() throws Exception {
    start(InboundLimits.builder().idleTimeout(Duration.ofMillis(300)).build());
    SocketPeer pinging = peer();
    SocketPeer busy = peer();
    busy.write(
        callReq(2, 0, 10_000, SERVICE, rawHeaders(), bytes("block"), noHeaders(), bytes("x")));
    assertThat(blockStarted.tryAcquire(10, TimeUnit.SECONDS)).isTrue();
    int ping = 100;
    while (true) {
      try {
        pinging.assertOpen(ping++); // pings are not calls: they do not keep the connection open
      } catch (IOException | AssertionError e) {
        break;
      }
      assertThat(ping).as("pings answered before the connection closed").isLessThan(300);
      Thread.sleep(20);
    }
    busy.assertOpen(9); // the call in flight kept it open, longer than the idle timeout
    release.countDown();
    expectEcho(busy, 2); // (d)
    assertThat(busy.closedByPeer()).as("closed once idle").isTrue();
    normalCallOnAFreshConnection();
    assertMemoryReturned();
  }

  // ---------------------------------------------------------------------------------------------------
  // Calls

  /** Calls beyond the in-flight limit get busy; those within it complete. */
  @Test
  void callsBeyondTheInFlightLimitAreBusy() throws Exception {
    start(InboundLimits.builder().maxConcurrentCallsPerConnection(4).build());
    SocketPeer p = peer();
    for (int id = 2; id < 9; id++) {
      p.write(
          callReq(id, 0, 10_000, SERVICE, rawHeaders(), bytes("block"), noHeaders(), bytes("x")));
    }
    Map<Integer, SocketPeer.Frame> busy = readById(p, 3);
    assertThat(busy.keySet()).containsExactlyInAnyOrder(6, 7, 8);
    for (SocketPeer.Frame f : busy.values()) {
      assertThat(f.errorCode()).isEqualTo(BUSY);
      assertThat(f.errorMessage())
          .isEqualTo("too many in-flight calls on this connection (the limit is 4)");
    }
    release.countDown();
    Set<Integer> answered = new HashSet<>();
    for (int i = 0; i < 4; i++) {
      SocketPeer.Frame f = p.read();
      assertThat(f.type()).as("%s", f).isEqualTo(0x04);
      answered.add(f.id());
    }
    assertThat(answered).containsExactlyInAnyOrder(2, 3, 4, 5);
    normalCallOnAFreshConnection();
    assertMemoryReturned();
  }

  /**
   * One connection holds its whole in-flight allowance with calls that do not end and floods 1,500 more
   * calls on top (each answered busy); meanwhile another connection's calls all succeed, and the
   * flooder's calls within its allowance complete once released.
   */
  @Test
  void aConnectionFloodingCallsDoesNotStopAnotherConnectionsCalls() throws Exception {
    start(InboundLimits.builder().maxConcurrentCallsPerConnection(8).build());
    SocketPeer flooder = peer();
    for (int id = 2; id < 10; id++) {
      flooder.write(
          callReq(id, 0, 10_000, SERVICE, rawHeaders(), bytes("block"), noHeaders(), bytes("x")));
    }
    assertThat(blockStarted.tryAcquire(8, 10, TimeUnit.SECONDS)).isTrue();
    int flood = 1500;
    background(
        "flood",
        () -> {
          for (int burst = 0; burst < flood / 100; burst++) {
            ByteArrayOutputStream calls = new ByteArrayOutputStream();
            for (int i = 0; i < 100; i++) {
              calls.writeBytes(echoCall(100 + burst * 100 + i));
            }
            flooder.write(calls.toByteArray());
          }
        });
    AtomicInteger busyAnswers = new AtomicInteger();
    Map<Integer, SocketPeer.Frame> released = new HashMap<>();
    Thread reader =
        background(
            "flood-answers",
            () -> {
              while (busyAnswers.get() < flood || released.size() < 8) {
                SocketPeer.Frame f = flooder.read();
                if (f.type() == 0xFF && f.errorCode() == BUSY) {
                  busyAnswers.incrementAndGet();
                } else {
                  released.put(f.id(), f);
                }
              }
            });
    awaitTrue(() -> busyAnswers.get() > 100, "the flood is being answered");
    SocketPeer other = peer();
    for (int id = 2; id < 22; id++) {
      other.write(echoCall(id));
      expectEcho(other, id);
    }
    release.countDown();
    reader.join(WAIT.toMillis());
    assertThat(busyAnswers.get()).as("flood calls answered busy").isEqualTo(flood);
    assertThat(released.keySet())
        .as("the flooder's calls within its limit completed")
        .containsExactlyInAnyOrder(2, 3, 4, 5, 6, 7, 8, 9);
    assertThat(released.values()).allSatisfy(f -> assertThat(f.type()).isEqualTo(0x04));
    normalCallOnAFreshConnection();
    assertMemoryReturned();
  }
}
