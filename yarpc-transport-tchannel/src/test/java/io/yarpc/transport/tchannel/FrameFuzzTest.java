package io.yarpc.transport.tchannel;

import static io.yarpc.transport.tchannel.Wire.bytes;
import static io.yarpc.transport.tchannel.Wire.callReq;
import static io.yarpc.transport.tchannel.Wire.callReqContinue;
import static io.yarpc.transport.tchannel.Wire.crc32c;
import static io.yarpc.transport.tchannel.Wire.noHeaders;
import static io.yarpc.transport.tchannel.Wire.rawHeaders;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.tchannel.internal.Connection;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Fuzzing the inbound's pipeline over real loopback connections: 10,000 frames, random or mutated from
 * valid ones (flipped bytes, cut or padded payloads with a consistent size, wrong sizes, wrong types,
 * interleaved continuations), sent in batches on connections that sometimes skip the handshake. Nothing
 * may escape the pipeline (no exception outside the protocol's rules), every buffer must be released once
 * the connections are gone, and the server must still serve a normal call afterwards (no hang).
 *
 * <p>The seed is fixed so a failure reproduces; set {@code -Dtchannel.fuzz.seed=N} to explore others.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FrameFuzzTest {
  private static final String SERVICE = "fuzz-svc";
  private static final int FRAMES = 10_000;

  @Test
  void randomAndMutatedFrames() throws Exception {
    long seed = Long.getLong("tchannel.fuzz.seed", 20_241_129L);
    Random rnd = new Random(seed);
    long unexpectedBefore = Connection.unexpectedFailures();
    TrackingAllocator allocator = new TrackingAllocator();
    TChannelTransport transport =
        TChannelTransport.builder().serviceName(SERVICE).allocator(allocator).build();
    TChannelInbound inbound =
        transport
            .inboundBuilder()
            .limits(
                InboundLimits.builder()
                    .maxConcurrentCallsPerConnection(16)
                    .maxRequestSize(256 * 1024)
                    .handshakeTimeout(Duration.ofSeconds(5))
                    .build())
            .build();
    Dispatcher server = Dispatcher.builder(SERVICE).inbound(inbound).build();
    server.register(Raw.procedure("echo", body -> body));
    server.start();
    AtomicLong received = new AtomicLong();
    int connections = 0;
    try {
      List<byte[]> seeds = seeds();
      int sent = 0;
      while (sent < FRAMES) {
        connections++;
        try (Socket s = new Socket()) {
          s.connect(inbound.address(), 10_000);
          s.setTcpNoDelay(true);
          Thread drain = drain(s.getInputStream(), received);
          OutputStream out = s.getOutputStream();
          try {
            if (rnd.nextInt(10) != 0) {
              out.write(Wire.initReq(1));
            }
            int batch = 1 + rnd.nextInt(40);
            for (int i = 0; i < batch && sent < FRAMES; i++, sent++) {
              out.write(next(rnd, seeds));
            }
            out.flush();
          } catch (IOException closedByServer) {
            // a fatal error closed the connection: go on with a new one
          }
          s.shutdownOutput();
          drain.join(10_000);
          assertThat(drain.isAlive())
              .as("the server ended connection #%d (seed %d)", connections, seed)
              .isFalse();
        } catch (IOException e) {
          // reset by the server while closing: fine
        }
      }
      assertThat(received.get()).as("the server answered something").isPositive();

      // Still serving: a normal call on a fresh connection.
      TChannelTransport clientTransport = TChannelTransport.of("fuzz-client");
      Dispatcher client =
          Dispatcher.builder("fuzz-client")
              .outbound(
                  SERVICE, Outbounds.unary(clientTransport.singleOutbound(inbound.hostPort())))
              .build();
      client.start();
      try {
        byte[] answer =
            RawClient.of(client.clientConfig(SERVICE))
                .call("echo", bytes("still alive"), CallOptions.timeout(Duration.ofSeconds(10)))
                .get(10, TimeUnit.SECONDS);
        assertThat(answer).isEqualTo(bytes("still alive"));
      } finally {
        client.stop();
      }
    } finally {
      server.stop();
    }
    allocator.awaitAllReleased(Duration.ofSeconds(10));
    assertThat(Connection.unexpectedFailures())
        .as("exceptions no protocol rule explains (seed %d)", seed)
        .isEqualTo(unexpectedBefore);
  }

  /** Reads and drops what the server sends until it closes the connection. */
  private static Thread drain(InputStream in, AtomicLong received) {
    Thread t =
        new Thread(
            () -> {
              byte[] buf = new byte[8192];
              try {
                for (int n; (n = in.read(buf)) != -1; ) {
                  received.addAndGet(n);
                }
              } catch (IOException ignored) {
                // reset: the connection is gone
              }
            },
            "fuzz-drain");
    t.setDaemon(true);
    t.start();
    return t;
  }

  /** Valid frames of every type to mutate. */
  private static List<byte[]> seeds() {
    List<byte[]> s = new ArrayList<>();
    s.add(Wire.initReq(1));
    s.add(callReq(2, 0, 5000, SERVICE, rawHeaders(), bytes("echo"), noHeaders(), bytes("hello")));
    s.add(callReq(3, 0, 5000, "other-svc", rawHeaders(), bytes("echo"), noHeaders(), bytes("x")));
    s.add(
        callReq(
            4,
            0,
            5000,
            SERVICE,
            Wire.transportHeaders("as", "json", "cn", "c"),
            bytes("echo"),
            bytes("{\"a\":\"b\"}"),
            bytes("{}")));
    byte[] big = new byte[3000];
    s.add(callReq(5, 1, 5000, SERVICE, rawHeaders(), bytes("echo"), noHeaders(), big));
    s.add(callReqContinue(5, 1, 3, crc32c(bytes("echo"), noHeaders(), big, big), big));
    s.add(callReqContinue(5, 0, 3, crc32c(bytes("echo"), noHeaders(), big, big, big), big));
    s.add(callReq(6, 1, 5000, SERVICE, rawHeaders(), bytes("echo"), bytes("he")));
    s.add(
        callReqContinue(
            6, 0, 3, crc32c(bytes("echo"), bytes("head"), bytes("x")), bytes("ad"), bytes("x")));
    s.add(Wire.frame(0xD0, 7, new byte[0]));
    s.add(Wire.frame(0xD1, 7, new byte[0]));
    s.add(
        Wire.frame(
            0xC0,
            5,
            ByteBuffer.allocate(31).putInt(10).put(new byte[25]).putShort((short) 0).array()));
    s.add(Wire.frame(0xC1, 5, new byte[29]));
    s.add(
        Wire.frame(
            0xFF,
            9,
            ByteBuffer.allocate(28 + 4)
                .put((byte) 5)
                .put(new byte[25])
                .putShort((short) 4)
                .put(bytes("oops"))
                .array()));
    s.add(
        Wire.frame(
            0x04,
            2,
            ByteBuffer.allocate(1 + 1 + 25 + 1 + 1 + 6)
                .put((byte) 0)
                .put((byte) 0)
                .put(new byte[25])
                .put((byte) 0)
                .put((byte) 0)
                .putShort((short) 0)
                .putShort((short) 0)
                .putShort((short) 0)
                .array()));
    return s;
  }

  private static final int[] TYPES = {
    0x01, 0x02, 0x03, 0x04, 0x13, 0x14, 0xC0, 0xC1, 0xD0, 0xD1, 0xFF
  };

  /** One fuzzed frame. */
  private static byte[] next(Random rnd, List<byte[]> seeds) {
    byte[] f = seeds.get(rnd.nextInt(seeds.size())).clone();
    switch (rnd.nextInt(8)) {
      case 0: // unchanged
        return f;
      case 1:
        { // flip bytes after the size field
          for (int i = 1 + rnd.nextInt(3); i > 0; i--) {
            int at = 2 + rnd.nextInt(f.length - 2);
            f[at] ^= (byte) (1 + rnd.nextInt(255));
          }
          return f;
        }
      case 2:
        { // cut the payload, size consistent
          int length = 16 + rnd.nextInt(f.length - 15);
          byte[] cut = java.util.Arrays.copyOf(f, length);
          cut[0] = (byte) (length >>> 8);
          cut[1] = (byte) length;
          return cut;
        }
      case 3:
        { // pad the payload with random bytes, size consistent
          byte[] pad = new byte[rnd.nextInt(64)];
          rnd.nextBytes(pad);
          byte[] longer = java.util.Arrays.copyOf(f, f.length + pad.length);
          System.arraycopy(pad, 0, longer, f.length, pad.length);
          longer[0] = (byte) (longer.length >>> 8);
          longer[1] = (byte) longer.length;
          return longer;
        }
      case 4:
        { // a wrong size field (too small, too large or impossible)
          int size =
              rnd.nextInt(3) == 0 ? rnd.nextInt(16) : Math.max(0, f.length + rnd.nextInt(41) - 20);
          f[0] = (byte) (size >>> 8);
          f[1] = (byte) size;
          return f;
        }
      case 5: // another type
        f[2] = (byte) (rnd.nextInt(4) == 0 ? rnd.nextInt(256) : TYPES[rnd.nextInt(TYPES.length)]);
        return f;
      case 6:
        { // another id, maybe colliding with a message in progress
          int id = rnd.nextInt(4) == 0 ? -1 : rnd.nextInt(10);
          ByteBuffer.wrap(f).putInt(4, id);
          return f;
        }
      default:
        { // random payload of a random type
          byte[] payload = new byte[rnd.nextInt(120)];
          rnd.nextBytes(payload);
          return Wire.frame(TYPES[rnd.nextInt(TYPES.length)], rnd.nextInt(8), payload);
        }
    }
  }
}
