package io.yarpc.transport.tchannel;

import static io.yarpc.transport.tchannel.Wire.bytes;
import static io.yarpc.transport.tchannel.Wire.callReqContinue;
import static io.yarpc.transport.tchannel.Wire.callReqWithChecksum;
import static io.yarpc.transport.tchannel.Wire.noHeaders;
import static io.yarpc.transport.tchannel.Wire.rawHeaders;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.Dispatcher;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.transport.tchannel.internal.Connection;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Large calls whose frames a peer writes in pieces of 1 byte to 40 KB, each sent on its own over a real
 * loopback socket, so that the server's reads end inside frame headers and payloads and large reads arrive
 * while a frame is partial (the frame decoder then hands on frames across reads as views of the reads,
 * see {@code FrameDecoder}; where the reads really end is up to the kernel, {@code FrameCodecTest} covers
 * the decoder deterministically). Every body carries a running CRC-32C that the server verifies frame by
 * frame; the handler answers with the length and CRC-32C of the body it got: each must match what was
 * sent, with reads into heap (the default) and into direct memory, no connection may fail outside the protocol's rules, and every buffer the server allocated must be
 * released once it stops (the paranoid leak detector runs for every test).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SplitReadsTest {
  private static final String SERVICE = "split-svc";
  private static final int CHUNK = 60_000; // arg3 bytes per frame

  private final Random random = new Random(17);
  private TrackingAllocator allocator;
  private TChannelInbound inbound;
  private Dispatcher server;

  private void start(boolean heap) {
    allocator = new TrackingAllocator();
    TChannelTransport transport =
        TChannelTransport.builder()
            .serviceName(SERVICE)
            .allocator(allocator)
            .receiveIntoHeap(heap)
            .build();
    inbound = transport.inboundBuilder().build();
    server = Dispatcher.builder(SERVICE).inbound(inbound).build();
    server.register(Raw.procedure("digest", body -> digest(body, 0, body.length)));
    server.start();
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.stop();
    }
  }

  @ParameterizedTest(name = "receive into heap: {0}")
  @ValueSource(booleans = {true, false})
  void largeCallsArriveWholeWhereverTheReadsCutThem(boolean heap) throws Exception {
    start(heap);
    long unexpectedBefore = Connection.unexpectedFailures();
    List<byte[]> expected = new ArrayList<>();
    ByteArrayOutputStream stream = new ByteArrayOutputStream();
    for (int id = 2; id < 14; id++) {
      byte[] body = new byte[id == 2 ? CHUNK : 1 + random.nextInt(700_000)];
      random.nextBytes(body);
      for (byte[] frame : frames(id, body)) {
        stream.writeBytes(frame);
      }
      expected.add(digest(body, 0, body.length));
    }
    byte[] all = stream.toByteArray();
    try (SocketPeer p = SocketPeer.connectAndInit(inbound.address())) {
      for (int pos = 0; pos < all.length; ) {
        int n = Math.min(all.length - pos, pieceSize());
        p.write(Arrays.copyOfRange(all, pos, pos + n));
        pos += n;
      }
      Map<Integer, String> answers = new HashMap<>(); // handlers answer in any order
      for (int i = 0; i < expected.size(); i++) {
        SocketPeer.Frame res = p.read();
        assertThat(res.type()).as("call res, got %s", res).isEqualTo(0x04);
        assertThat(res.responseCode()).as("%s", res).isZero();
        answers.put(res.id(), new String(arg3(res.payload()), UTF_8));
      }
      for (int id = 2; id < 14; id++) {
        assertThat(answers.get(id))
            .as("call %d", id)
            .isEqualTo(new String(expected.get(id - 2), UTF_8));
      }
    }
    server.stop();
    assertThat(allocator.compositeCount()).as("large frames were composed from reads").isPositive();
    allocator.awaitAllReleased(Duration.ofSeconds(10));
    assertThat(Connection.unexpectedFailures()).isEqualTo(unexpectedBefore);
  }

  /** Mostly pieces a few KiB or larger (appended to the cumulation as they are), some tiny ones. */
  private int pieceSize() {
    switch (random.nextInt(4)) {
      case 0:
        return 1 + random.nextInt(64);
      case 1:
        return 100 + random.nextInt(4000);
      default:
        return 4096 + random.nextInt(36_000);
    }
  }

  /** The call req frames of a raw "digest" call with {@code body}, each with the running CRC-32C. */
  private static List<byte[]> frames(int id, byte[] body) {
    CRC32C crc = new CRC32C();
    byte[] procedure = bytes("digest");
    byte[] headers = noHeaders();
    crc.update(procedure); // arg1 and arg2 count, then arg3 as it goes
    crc.update(headers);
    List<byte[]> frames = new ArrayList<>();
    int n = Math.min(CHUNK, body.length);
    crc.update(body, 0, n);
    frames.add(
        callReqWithChecksum(
            id,
            n < body.length ? 0x01 : 0,
            10_000,
            SERVICE,
            rawHeaders(),
            3,
            (int) crc.getValue(),
            procedure,
            headers,
            Arrays.copyOfRange(body, 0, n)));
    for (int pos = n; pos < body.length; pos += n) {
      n = Math.min(CHUNK, body.length - pos);
      crc.update(body, pos, n);
      int flags = pos + n < body.length ? 0x01 : 0;
      frames.add(
          callReqContinue(
              id, flags, 3, (int) crc.getValue(), Arrays.copyOfRange(body, pos, pos + n)));
    }
    return frames;
  }

  private static byte[] digest(byte[] body, int offset, int length) {
    CRC32C crc = new CRC32C();
    crc.update(body, offset, length);
    return ("length=" + length + " crc32c=" + Long.toHexString(crc.getValue())).getBytes(UTF_8);
  }

  /** arg3 of a call res payload that fits one frame. */
  private static byte[] arg3(byte[] payload) {
    ByteBuffer b = ByteBuffer.wrap(payload);
    b.position(2 + 25); // flags, code, tracing
    for (int headers = b.get() & 0xFF; headers > 0; headers--) {
      skip(b, b.get() & 0xFF); // key
      skip(b, b.get() & 0xFF); // value
    }
    if ((b.get() & 0xFF) != 0) {
      b.getInt(); // checksum
    }
    skip(b, b.getShort() & 0xFFFF); // arg1
    skip(b, b.getShort() & 0xFFFF); // arg2
    byte[] arg3 = new byte[b.getShort() & 0xFFFF];
    b.get(arg3);
    return arg3;
  }

  private static void skip(ByteBuffer b, int n) {
    b.position(b.position() + n);
  }
}
