package io.yarpc.transport.tchannel;

import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.tchannel.internal.Connection;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Fuzzing the outbound: a hand-played server answers 2,000 calls with valid, mutated, fragmented, wrong
 * or missing responses, error frames of any code, garbage frames and dropped connections. Every call must
 * end (a response or a {@link YarpcException}, never a hang), nothing may escape the pipeline, and every
 * buffer the client allocated must be released.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ResponseFuzzTest {
  private static final int CALLS = 2_000;

  @Test
  void mutatedResponses() throws Exception {
    long seed = Long.getLong("tchannel.fuzz.seed", 7L);
    long unexpectedBefore = Connection.unexpectedFailures();
    TrackingAllocator allocator = new TrackingAllocator();
    try (ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread server = new Thread(() -> serve(listener, new Random(seed)), "fuzz-server");
      server.setDaemon(true);
      server.start();
      TChannelTransport transport =
          TChannelTransport.builder()
              .serviceName("fuzz-client")
              .allocator(allocator)
              .maxMessageSize(100_000)
              .build();
      TChannelOutbound out = transport.singleOutbound("127.0.0.1:" + listener.getLocalPort());
      out.start();
      // core's call path bounds each call by its deadline (the outbound arms no timer of its own)
      io.yarpc.ClientConfig calls =
          io.yarpc.ClientConfig.of("c", "s", io.yarpc.Outbounds.unary(out));
      java.util.concurrent.atomic.AtomicInteger responses =
          new java.util.concurrent.atomic.AtomicInteger();
      java.util.concurrent.atomic.AtomicInteger errors =
          new java.util.concurrent.atomic.AtomicInteger();
      java.util.Queue<String> problems = new java.util.concurrent.ConcurrentLinkedQueue<>();
      java.util.concurrent.Semaphore slots = new java.util.concurrent.Semaphore(8);
      java.util.List<CompletableFuture<?>> all = new java.util.ArrayList<>();
      try {
        for (int i = 0; i < CALLS; i++) {
          assertThat(slots.tryAcquire(10, TimeUnit.SECONDS))
              .as("a call slot freed up: no hang")
              .isTrue();
          RequestMeta meta =
              RequestMeta.builder()
                  .caller("c")
                  .service("s")
                  .procedure("p")
                  .encoding("raw")
                  .deadline(Deadline.after(Duration.ofMillis(300)))
                  .build();
          int n = i;
          all.add(
              calls
                  .call(Request.of(meta, Body.of(new byte[] {(byte) i})))
                  .handle(
                      (r, e) -> {
                        slots.release();
                        if (e == null) {
                          r.body().release();
                          responses.incrementAndGet();
                        } else if (e instanceof YarpcException y) {
                          if (y.response() != null) {
                            y.response().body().release();
                          }
                          errors.incrementAndGet();
                        } else {
                          problems.add("call " + n + " failed with " + e);
                        }
                        return null;
                      }));
        }
        CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])).get(30, TimeUnit.SECONDS);
      } finally {
        out.stop();
        transport.stop();
      }
      assertThat(problems).as("seed %d", seed).isEmpty();
      assertThat(responses.get()).isPositive();
      assertThat(errors.get()).isPositive();
    }
    allocator.awaitAllReleased(Duration.ofSeconds(10));
    assertThat(Connection.unexpectedFailures())
        .as("exceptions no protocol rule explains (seed %d)", seed)
        .isEqualTo(unexpectedBefore);
  }

  private static void serve(ServerSocket listener, Random rnd) {
    while (!listener.isClosed()) {
      try (Socket s = listener.accept()) {
        s.setTcpNoDelay(true);
        DataInputStream in = new DataInputStream(s.getInputStream());
        OutputStream out = s.getOutputStream();
        while (true) {
          int size = in.readUnsignedShort();
          byte[] rest = new byte[size - 2];
          in.readFully(rest);
          int type = rest[0] & 0xFF;
          int id = ByteBuffer.wrap(rest, 2, 4).getInt();
          if (type == 0x01) {
            out.write(
                Wire.init(
                    0x02,
                    id,
                    2,
                    java.util.Map.of("host_port", "0.0.0.0:0", "process_name", "fuzz")));
          } else if (type == 0x03) {
            if (!answer(out, id, rnd)) {
              break; // drop the connection
            }
          }
          out.flush();
        }
      } catch (IOException e) {
        // the client went away, or the listener closed: accept the next one
      }
    }
  }

  /** Writes a fuzzed answer for call {@code id}; false to drop the connection instead. */
  private static boolean answer(OutputStream out, int id, Random rnd) throws IOException {
    byte[] body = new byte[rnd.nextInt(4) == 0 ? 70_000 + rnd.nextInt(50_000) : rnd.nextInt(100)];
    rnd.nextBytes(body);
    int choice = rnd.nextInt(100);
    if (choice == 0) {
      return false; // the connection drops: every call on it fails
    }
    if (choice == 1) {
      return true; // no answer: the call times out
    }
    if (choice < 7) { // an error frame with any code
      ByteBuffer p =
          ByteBuffer.allocate(28 + 5)
              .put((byte) rnd.nextInt(256))
              .put(new byte[25])
              .putShort((short) 5)
              .put("fuzz!".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
      out.write(Wire.frame(0xFF, rnd.nextInt(8) == 0 ? -1 : id, p.array()));
      return true;
    }
    if (choice < 9) { // garbage of a random type
      byte[] payload = new byte[rnd.nextInt(64)];
      rnd.nextBytes(payload);
      out.write(Wire.frame(rnd.nextInt(256), id, payload));
      return true;
    }
    for (byte[] frame : callRes(id, body, rnd)) {
      if (choice >= 85) {
        mutate(frame, rnd);
      }
      out.write(frame);
    }
    return true;
  }

  private static void mutate(byte[] frame, Random rnd) {
    switch (rnd.nextInt(3)) {
      case 0:
        frame[2 + rnd.nextInt(frame.length - 2)] ^= (byte) (1 + rnd.nextInt(255));
        break;
      case 1:
        frame[2] = (byte) (rnd.nextBoolean() ? 0x04 : 0x14);
        break;
      default:
        if (frame.length > 17) {
          frame[16] ^= 1; // more-fragments flag
        }
    }
  }

  /** A call res, in one frame or split into two (arg3 cut in the middle), with a random checksum type. */
  private static byte[][] callRes(int id, byte[] body, Random rnd) {
    int type = new int[] {0, 1, 3}[rnd.nextInt(3)];
    byte[] arg2 = {0, 0};
    boolean split = body.length > 60_000;
    int first = split ? 60_000 : body.length;
    ByteArrayOutputStream p = new ByteArrayOutputStream();
    p.write(split ? 1 : 0);
    p.write(rnd.nextInt(10) == 0 ? 1 : 0); // code: sometimes an application error
    p.writeBytes(new byte[25]);
    p.writeBytes(Wire.transportHeaders("as", "raw"));
    java.util.zip.Checksum crc = type == 1 ? new java.util.zip.CRC32() : new CRC32C();
    crc.update(arg2);
    crc.update(body, 0, first);
    p.write(type);
    if (type != 0) {
      p.writeBytes(ByteBuffer.allocate(4).putInt((int) crc.getValue()).array());
    }
    p.writeBytes(new byte[] {0, 0, 0, 2, 0, 0});
    p.write(first >>> 8);
    p.write(first);
    p.write(body, 0, first);
    byte[] f1 = Wire.frame(0x04, id, p.toByteArray());
    if (!split) {
      return new byte[][] {f1};
    }
    crc.update(body, first, body.length - first);
    ByteArrayOutputStream c = new ByteArrayOutputStream();
    c.write(0);
    c.write(type);
    if (type != 0) {
      c.writeBytes(ByteBuffer.allocate(4).putInt((int) crc.getValue()).array());
    }
    int rest = body.length - first;
    c.write(rest >>> 8);
    c.write(rest);
    c.write(body, first, rest);
    return new byte[][] {f1, Wire.frame(0x14, id, c.toByteArray())};
  }
}
