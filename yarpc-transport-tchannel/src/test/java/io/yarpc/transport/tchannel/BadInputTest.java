package io.yarpc.transport.tchannel;

import static io.yarpc.transport.tchannel.Wire.NULL_ID;
import static io.yarpc.transport.tchannel.Wire.bytes;
import static io.yarpc.transport.tchannel.Wire.callReq;
import static io.yarpc.transport.tchannel.Wire.callReqContinue;
import static io.yarpc.transport.tchannel.Wire.callReqWithChecksum;
import static io.yarpc.transport.tchannel.Wire.crc32c;
import static io.yarpc.transport.tchannel.Wire.noHeaders;
import static io.yarpc.transport.tchannel.Wire.rawHeaders;
import static io.yarpc.transport.tchannel.Wire.transportHeaders;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.Call;
import io.yarpc.Dispatcher;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.tchannel.internal.Connection;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A hand-played peer sends the inbound broken frames over a plain socket. Each case gets the protocol's
 * answer: the error frame with the right code and message, and the connection closed only for fatal
 * errors. After each case every buffer the transport allocated has been released.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class BadInputTest {
  private static final String SERVICE = "bad-svc";
  private static final int MAX_MESSAGE = 64 * 1024;

  private final TrackingAllocator allocator = new TrackingAllocator();
  private final CountDownLatch release = new CountDownLatch(1);
  private final CountDownLatch blockStarted = new CountDownLatch(1);
  private final CountDownLatch blockCancelled = new CountDownLatch(1);
  private final List<SocketPeer> peers = new ArrayList<>();
  private Dispatcher dispatcher;
  private InetSocketAddress address;
  private long unexpectedBefore;

  @BeforeEach
  void start() {
    unexpectedBefore = Connection.unexpectedFailures();
    TChannelTransport transport =
        TChannelTransport.builder().serviceName(SERVICE).allocator(allocator).build();
    TChannelInbound inbound =
        transport
            .inboundBuilder()
            .limits(
                InboundLimits.builder()
                    .maxConcurrentCallsPerConnection(2)
                    .maxRequestSize(MAX_MESSAGE)
                    .handshakeTimeout(Duration.ofMillis(500))
                    .build())
            .build();
    dispatcher =
        Dispatcher.builder(SERVICE)
            .inbound(inbound)
            .shutdownGracePeriod(Duration.ofSeconds(1))
            .build();
    dispatcher.register(
        Raw.procedure("echo", body -> body),
        Raw.procedure(
            "block",
            body -> {
              Call.current().onCancel(blockCancelled::countDown);
              blockStarted.countDown();
              release.await(20, TimeUnit.SECONDS);
              return body;
            }),
        Raw.onewayProcedure("oneway", body -> {}));
    dispatcher.start();
    address = inbound.address();
  }

  @AfterEach
  void stop() throws Exception {
    release.countDown();
    for (SocketPeer p : peers) {
      p.close();
    }
    dispatcher.stop();
    allocator.awaitAllReleased(Duration.ofSeconds(10));
    assertThat(Connection.unexpectedFailures())
        .as("exceptions no protocol rule explains")
        .isEqualTo(unexpectedBefore);
  }

  private SocketPeer peer() throws Exception {
    SocketPeer p = SocketPeer.connectAndInit(address);
    peers.add(p);
    return p;
  }

  private SocketPeer peerWithoutInit() throws Exception {
    SocketPeer p = SocketPeer.connect(address);
    peers.add(p);
    return p;
  }

  private static byte[] echoCall(int id) {
    return callReq(id, 0, 5000, SERVICE, rawHeaders(), bytes("echo"), noHeaders(), bytes("hello"));
  }

  private static void expectEcho(SocketPeer p, int id) throws Exception {
    SocketPeer.Frame f = p.read();
    assertThat(f.type()).as("call res, got %s", f).isEqualTo(0x04);
    assertThat(f.id()).isEqualTo(id);
    assertThat(f.responseCode()).isZero();
  }

  // ---- the handshake
  // --------------------------------------------------------------------------------

  @Test
  void initResCarriesAllFiveHeaders() throws Exception {
    SocketPeer p = peerWithoutInit();
    p.write(Wire.initReq(1));
    SocketPeer.Frame res = p.read();
    assertThat(res.type()).isEqualTo(0x02);
    assertThat(res.id()).as("the init req's id").isEqualTo(1);
    ByteBuffer b = ByteBuffer.wrap(res.payload());
    assertThat((int) b.getShort()).as("version").isEqualTo(2);
    Map<String, String> headers = new LinkedHashMap<>();
    for (int n = b.getShort(); n > 0; n--) {
      String[] kv = new String[2];
      for (int i = 0; i < 2; i++) {
        byte[] s = new byte[b.getShort()];
        b.get(s);
        kv[i] = new String(s, java.nio.charset.StandardCharsets.UTF_8);
      }
      headers.put(kv[0], kv[1]);
    }
    assertThat(headers)
        .containsOnlyKeys(
            "host_port",
            "process_name",
            "tchannel_language",
            "tchannel_language_version",
            "tchannel_version");
    assertThat(headers.get("host_port")).isEqualTo("127.0.0.1:" + address.getPort());
    assertThat(headers.get("process_name")).matches("java\\[\\d+]");
    assertThat(headers.get("tchannel_language")).isEqualTo("java");
    p.assertOpen(3);
  }

  // ---- fatal: error frame 0xFF, then the connection closes
  // --------------------------------------------

  @Test
  void unknownFrameType() throws Exception {
    SocketPeer p = peer();
    p.write(Wire.frame(0x42, 5, new byte[3]));
    p.expectError(NULL_ID, 0xFF, "invalid frame type 66");
    assertThat(p.closedByPeer()).isTrue();
  }

  @Test
  void impossibleFrameSize() throws Exception {
    SocketPeer p = peer();
    p.write(new byte[] {0, 5, 3, 0, 0, 0, 0, 2});
    p.expectError(NULL_ID, 0xFF, "invalid frame size 5");
    assertThat(p.closedByPeer()).isTrue();
  }

  @Test
  void truncatedCallReqFields() throws Exception {
    SocketPeer p = peer();
    p.write(Wire.frame(0x03, 2, new byte[] {0, 0, 0}));
    p.expectError(
        2, 0xFF, "frame too short: call req frame truncated in its ttl, tracing and service");
    assertThat(p.closedByPeer()).isTrue();
  }

  @Test
  void argChunkOverrunningItsFrame() throws Exception {
    SocketPeer p = peer();
    byte[] frame = echoCall(2);
    frame[frame.length - 7] = 0x10; // arg3 length 5 -> 4101
    p.write(frame);
    p.expectError(2, 0xFF, "frame too short: arg chunk of 4101 bytes overruns the call req frame");
    assertThat(p.closedByPeer()).isTrue();
  }

  @Test
  void unknownChecksumType() throws Exception {
    SocketPeer p = peer();
    p.write(
        callReqWithChecksum(
            2, 0, 5000, SERVICE, rawHeaders(), 9, 0, bytes("echo"), noHeaders(), bytes("x")));
    p.expectError(2, 0xFF, "unknown checksum type 9 in call req");
    assertThat(p.closedByPeer()).isTrue();
  }

  @Test
  void duplicateTransportHeaderKey() throws Exception {
    SocketPeer p = peer();
    p.write(
        callReq(
            2,
            0,
            5000,
            SERVICE,
            transportHeaders("as", "raw", "cn", "a", "cn", "b"),
            bytes("echo"),
            noHeaders(),
            bytes("x")));
    p.expectError(2, 0xFF, "duplicate transport header key cn");
    assertThat(p.closedByPeer()).isTrue();
  }

  @Test
  void emptyTransportHeaderKey() throws Exception {
    SocketPeer p = peer();
    p.write(
        callReq(
            2,
            0,
            5000,
            SERVICE,
            transportHeaders("as", "raw", "", "x", "cn", "c"),
            bytes("echo"),
            noHeaders(),
            bytes("x")));
    p.expectError(2, 0xFF, "empty transport header key");
    assertThat(p.closedByPeer()).isTrue();
  }

  @Test
  void overLongTransportHeaderKey() throws Exception {
    SocketPeer p = peer();
    p.write(
        callReq(
            2,
            0,
            5000,
            SERVICE,
            transportHeaders("as", "raw", "cn", "c", "abcdefghijklmnopq", "v"),
            bytes("echo"),
            noHeaders(),
            bytes("x")));
    p.expectError(2, 0xFF, "transport header key abcdefghijklmnopq exceeds 16 bytes");
    assertThat(p.closedByPeer()).isTrue();
  }

  @Test
  void sixteenByteTransportHeaderKeyIsAccepted() throws Exception {
    SocketPeer p = peer();
    p.write(
        callReq(
            2,
            0,
            5000,
            SERVICE,
            transportHeaders("as", "raw", "cn", "c", "abcdefghijklmnop", "v"),
            bytes("echo"),
            noHeaders(),
            bytes("x")));
    expectEcho(p, 2);
  }

  @Test
  void callBeforeInit() throws Exception {
    SocketPeer p = peerWithoutInit();
    p.write(echoCall(2));
    p.expectError(NULL_ID, 0xFF, "expected init req, got call req");
    assertThat(p.closedByPeer()).isTrue();
  }

  @Test
  void initWithoutProcessName() throws Exception {
    SocketPeer p = peerWithoutInit();
    Map<String, String> h = new LinkedHashMap<>();
    h.put("host_port", "0.0.0.0:0");
    p.write(Wire.init(0x01, 1, 2, h));
    p.expectError(NULL_ID, 0xFF, "missing init frame header process_name");
    assertThat(p.closedByPeer()).isTrue();
  }

  @Test
  void initWithAnotherVersion() throws Exception {
    SocketPeer p = peerWithoutInit();
    p.write(Wire.init(0x01, 1, 1, Map.of("host_port", "0.0.0.0:0", "process_name", "p")));
    p.expectError(NULL_ID, 0xFF, "unsupported protocol version 1");
    assertThat(p.closedByPeer()).isTrue();
  }

  @Test
  void secondInit() throws Exception {
    SocketPeer p = peer();
    p.write(Wire.initReq(7));
    p.expectError(NULL_ID, 0xFF, "unexpected init req after the handshake");
    assertThat(p.closedByPeer()).isTrue();
  }

  @Test
  void silentConnectionIsClosedAfterTheHandshakeTimeout() throws Exception {
    SocketPeer p = peerWithoutInit();
    assertThat(p.closedByPeer()).as("closed by the server before the 10 s read guard").isTrue();
  }

  @Test
  void connectionCutInTheMiddleOfAFrame() throws Exception {
    SocketPeer p = peer();
    byte[] frame = echoCall(2);
    p.write(java.util.Arrays.copyOf(frame, frame.length / 2));
    p.close();
    SocketPeer next = peer();
    next.write(echoCall(2));
    expectEcho(next, 2);
  }

  // ---- per message: an error frame, the connection stays
  // ----------------------------------------------

  @Test
  void badChecksum() throws Exception {
    SocketPeer p = peer();
    p.write(
        callReqWithChecksum(
            2,
            0,
            5000,
            SERVICE,
            rawHeaders(),
            3,
            0xdeadbeef,
            bytes("echo"),
            noHeaders(),
            bytes("hello")));
    String actual = Integer.toUnsignedString(crc32c(bytes("echo"), noHeaders(), bytes("hello")));
    p.expectError(2, 0x06, "invalid checksum (type 3) expected: 3735928559 actual: " + actual);
    p.assertOpen(9);
    p.write(echoCall(3));
    expectEcho(p, 3);
  }

  /** Responses reuse the request's checksum type; a farmhash request is answered with none. */
  @org.junit.jupiter.params.ParameterizedTest(name = "request {0} -> response {1}")
  @org.junit.jupiter.params.provider.CsvSource({"0, 0", "1, 1", "2, 0", "3, 3"})
  void responsesReuseTheRequestsChecksumType(int requestType, int responseType) throws Exception {
    SocketPeer p = peer();
    int csum =
        requestType == 1
            ? crc32(bytes("echo"), noHeaders(), bytes("x"))
            : requestType == 3 ? crc32c(bytes("echo"), noHeaders(), bytes("x")) : 0x12345678;
    p.write(
        callReqWithChecksum(
            2,
            0,
            5000,
            SERVICE,
            rawHeaders(),
            requestType,
            csum,
            bytes("echo"),
            noHeaders(),
            bytes("x")));
    SocketPeer.Frame f = p.read();
    assertThat(f.type()).as("call res, got %s", f).isEqualTo(0x04);
    int headersEnd = 2 + 25 + 1 + (1 + 2 + 1 + 3); // flags code tracing nh "as"="raw"
    assertThat(f.payload()[headersEnd] & 0xFF).isEqualTo(responseType);
  }

  private static int crc32(byte[]... chunks) {
    java.util.zip.CRC32 c = new java.util.zip.CRC32();
    for (byte[] b : chunks) {
      c.update(b);
    }
    return (int) c.getValue();
  }

  @Test
  void ttlZero() throws Exception {
    SocketPeer p = peer();
    p.write(callReq(2, 0, 0, SERVICE, rawHeaders(), bytes("echo"), noHeaders(), bytes("x")));
    p.expectError(2, 0x06, "timeout required");
    p.assertOpen(9);
  }

  @Test
  void fragmentedArg1() throws Exception {
    SocketPeer p = peer();
    p.write(callReq(2, 1, 5000, SERVICE, rawHeaders(), bytes("ec")));
    p.expectError(2, 0x06, "arg1 must not be fragmented");
    // The rest of that message is ignored, then the connection goes on.
    p.write(
        callReqContinue(
            2,
            0,
            3,
            crc32c(bytes("echo"), noHeaders(), bytes("x")),
            bytes("ho"),
            noHeaders(),
            bytes("x")));
    p.assertOpen(9);
    p.write(echoCall(4));
    expectEcho(p, 4);
  }

  @Test
  void lastFrameBeforeArg3() throws Exception {
    SocketPeer p = peer();
    p.write(callReq(2, 0, 5000, SERVICE, rawHeaders(), bytes("echo"), noHeaders()));
    p.expectError(2, 0x06, "message 2 ended after 2 of its 3 args");
    p.assertOpen(9);
  }

  @Test
  void moreThanThreeArgs() throws Exception {
    SocketPeer p = peer();
    p.write(
        callReq(
            2, 0, 5000, SERVICE, rawHeaders(), bytes("echo"), noHeaders(), bytes("x"), bytes("y")));
    p.expectError(2, 0x06, "more than three arg chunks in one call req frame");
    p.assertOpen(9);
  }

  @Test
  void messageOverTheSizeLimit() throws Exception {
    SocketPeer p = peer();
    byte[] part1 = new byte[60_000];
    byte[] part2 = new byte[10_000];
    p.write(callReq(2, 1, 5000, SERVICE, rawHeaders(), bytes("echo"), noHeaders(), part1));
    p.write(callReqContinue(2, 1, 3, crc32c(bytes("echo"), noHeaders(), part1, part2), part2));
    p.expectError(2, 0x06, "message 2 exceeds the limit of " + MAX_MESSAGE + " bytes");
    p.write(callReqContinue(2, 1, 3, 0, part2), callReqContinue(2, 0, 3, 0, part2));
    p.assertOpen(9);
    p.write(echoCall(3));
    expectEcho(p, 3);
  }

  @Test
  void tooManyCallsInFlight() throws Exception {
    SocketPeer p = peer();
    for (int id = 2; id <= 4; id++) {
      p.write(
          callReq(id, 0, 10_000, SERVICE, rawHeaders(), bytes("block"), noHeaders(), bytes("x")));
    }
    p.expectError(4, 0x03, "too many in-flight calls on this connection (the limit is 2)");
    release.countDown();
    Set<Integer> answered = new java.util.HashSet<>();
    for (int i = 0; i < 2; i++) {
      SocketPeer.Frame f = p.read();
      assertThat(f.type()).isEqualTo(0x04);
      answered.add(f.id());
    }
    assertThat(answered).containsExactlyInAnyOrder(2, 3);
  }

  @Test
  void duplicateMessageId() throws Exception {
    SocketPeer p = peer();
    p.write(callReq(2, 0, 10_000, SERVICE, rawHeaders(), bytes("block"), noHeaders(), bytes("x")));
    assertThat(blockStarted.await(10, TimeUnit.SECONDS)).isTrue();
    p.write(echoCall(2));
    p.expectError(2, 0x06, "message id 2 is already in use");
    release.countDown();
    expectEcho(p, 2);
  }

  /**
   * A duplicate id while the first message is still arriving: their fragments could no longer be told
   * apart, so both end with the error and the first one's remaining fragments are ignored.
   */
  @Test
  void duplicateMessageIdWhileTheFirstIsStillArriving() throws Exception {
    SocketPeer p = peer();
    p.write(
        callReq(2, 1, 5000, SERVICE, rawHeaders(), bytes("echo"), noHeaders(), bytes("first-")));
    p.write(echoCall(2));
    p.expectError(2, 0x06, "message id 2 is already in use");
    p.write(callReqContinue(2, 0, 3, 0, bytes("rest"))); // the first message's last fragment
    p.assertOpen(9); // nothing was answered for it: the next frame is the ping's
    p.write(echoCall(3));
    expectEcho(p, 3);
  }

  @Test
  void cancelFrameCancelsTheHandlersCall() throws Exception {
    SocketPeer p = peer();
    p.write(callReq(2, 0, 10_000, SERVICE, rawHeaders(), bytes("block"), noHeaders(), bytes("x")));
    assertThat(blockStarted.await(10, TimeUnit.SECONDS)).isTrue();
    ByteBuffer cancel =
        ByteBuffer.allocate(4 + 25 + 2 + 3)
            .putInt(100)
            .put(new byte[25])
            .putShort((short) 3)
            .put(bytes("bye"));
    p.write(Wire.frame(0xC0, 2, cancel.array()));
    p.expectError(2, 0x02, "request cancelled by the caller");
    assertThat(blockCancelled.await(10, TimeUnit.SECONDS))
        .as("the handler's call was cancelled")
        .isTrue();
    p.assertOpen(9);
  }

  @Test
  void claimIsIgnoredAndPingAnswered() throws Exception {
    SocketPeer p = peer();
    p.write(Wire.frame(0xC1, 2, new byte[29]));
    p.assertOpen(77);
    p.write(Wire.frame(0xD1, 5, new byte[0])); // an unsolicited ping res is ignored too
    p.assertOpen(78);
  }

  @Test
  void continuationOfAnUnknownMessageIsIgnored() throws Exception {
    SocketPeer p = peer();
    p.write(callReqContinue(42, 0, 0, 0, bytes("x")));
    p.assertOpen(9);
  }

  @Test
  void onewayProceduresAreRefused() throws Exception {
    SocketPeer p = peer();
    p.write(callReq(2, 0, 5000, SERVICE, rawHeaders(), bytes("oneway"), noHeaders(), bytes("x")));
    p.expectError(2, 0x06, "transport tchannel does not handle Oneway handlers");
    p.assertOpen(9);
  }

  @Test
  void undecodableHeaders() throws Exception {
    SocketPeer p = peer();
    p.write(
        callReq(
            2, 0, 5000, SERVICE, rawHeaders(), bytes("echo"), new byte[] {0, 1, 0}, bytes("x")));
    p.expectError(
        2,
        0x06,
        "failed to decode \"raw\" request headers for procedure \"echo\" of service "
            + "\"bad-svc\" from caller \"bad-client\": header map truncated in header 1 of 1");
    p.assertOpen(9);
  }

  @Test
  void missingCallerAndEncoding() throws Exception {
    SocketPeer p = peer();
    p.write(
        callReq(2, 0, 5000, SERVICE, transportHeaders(), bytes("echo"), noHeaders(), bytes("x")));
    p.expectError(2, 0x06, "missing caller name, encoding");
    p.assertOpen(9);
  }
}
