package io.yarpc.transport.tchannel.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The init handshake on its own, in both roles, against an embedded channel. */
class HandshakeTest {
  private final EmbeddedParts parts = new EmbeddedParts();

  @AfterEach
  void close() {
    parts.close();
  }

  private static Map<String, String> peerHeaders() {
    Map<String, String> h = new LinkedHashMap<>();
    h.put(InitFrames.HOST_PORT, "10.0.0.7:21300");
    h.put(InitFrames.PROCESS_NAME, "node[1]");
    return h;
  }

  /** Feeds a frame to the handshake and releases it, as the connection does. */
  private static void feed(Handshake handshake, ByteBuf frame) throws ProtocolException {
    try {
      handshake.onFrame(frame);
    } finally {
      frame.release();
    }
  }

  private static InitFrames.Init readInit(ByteBuf frame, int type, int id)
      throws ProtocolException {
    try {
      assertThat(Frames.type(frame)).isEqualTo(type);
      assertThat(Frames.id(frame)).isEqualTo(id);
      return InitFrames.decode(frame);
    } finally {
      frame.release();
    }
  }

  private static Throwable failure(Handshake handshake) {
    assertThat(handshake.future()).isCompletedExceptionally();
    return handshake
        .future()
        .handle((c, e) -> e instanceof CompletionException ? e.getCause() : e)
        .join();
  }

  @Test
  void initiatorSendsInitReqWithTheFirstIdAndIsDoneOnInitRes() throws Exception {
    Connection connection = new Connection(true, parts);
    Handshake handshake = new Handshake(true, parts, connection);
    handshake.start(parts.ctx, () -> 1);

    InitFrames.Init req = readInit(parts.written(), Frames.INIT_REQ, 1);
    assertThat(req.version()).isEqualTo(2);
    assertThat(req.headers())
        .containsKeys(InitFrames.LANGUAGE, InitFrames.LANGUAGE_VERSION, InitFrames.TCHANNEL_VERSION)
        .containsEntry(InitFrames.HOST_PORT, "127.0.0.1:4040")
        .containsEntry(InitFrames.PROCESS_NAME, "java[test]")
        .hasSize(5);
    assertThat(handshake.isDone()).isFalse();

    feed(handshake, InitFrames.encode(EmbeddedParts.ALLOC, Frames.INIT_RES, 1, peerHeaders()));
    assertThat(handshake.isDone()).isTrue();
    assertThat(handshake.future()).isCompletedWithValue(connection);
    assertThat(handshake.remoteHostPort()).isEqualTo("10.0.0.7:21300");
    assertThat(parts.handshakes).containsExactly(connection);
    assertThat(parts.written()).isNull();

    parts.advance(EmbeddedParts.HANDSHAKE_TIMEOUT_SECONDS * 2, TimeUnit.SECONDS);
    assertThat(parts.channel.isOpen()).as("the timer stopped").isTrue();
  }

  @Test
  void acceptorAnswersInitReqWithItsId() throws Exception {
    Connection connection = new Connection(false, parts);
    Handshake handshake = new Handshake(false, parts, connection);
    handshake.start(
        parts.ctx,
        () -> {
          throw new AssertionError("the acceptor takes no id");
        });
    assertThat(parts.written()).as("the acceptor speaks second").isNull();

    feed(handshake, InitFrames.encode(EmbeddedParts.ALLOC, Frames.INIT_REQ, 77, peerHeaders()));
    InitFrames.Init res = readInit(parts.written(), Frames.INIT_RES, 77);
    assertThat(res.headers()).containsEntry(InitFrames.HOST_PORT, "127.0.0.1:4040").hasSize(5);
    assertThat(handshake.future()).isCompletedWithValue(connection);
    assertThat(handshake.remoteHostPort()).isEqualTo("10.0.0.7:21300");
  }

  @Test
  void initReqWithoutProcessNameIsFatal() {
    Handshake handshake = new Handshake(false, parts, new Connection(false, parts));
    handshake.start(parts.ctx, () -> 1);
    Map<String, String> headers = Map.of(InitFrames.HOST_PORT, "0.0.0.0:0");
    assertThatThrownBy(
            () ->
                feed(
                    handshake, InitFrames.encode(EmbeddedParts.ALLOC, Frames.INIT_REQ, 1, headers)))
        .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.isFatal()).isTrue())
        .hasMessage("missing init frame header process_name");
    assertThat(handshake.isDone()).isFalse();
    assertThat(handshake.future()).isNotDone();
    assertThat(parts.written()).isNull();
  }

  @Test
  void versionOtherThanTwoIsFatal() {
    Handshake handshake = new Handshake(true, parts, new Connection(true, parts));
    handshake.start(parts.ctx, () -> 1);
    parts.written().release();
    ByteBuf res = InitFrames.encode(EmbeddedParts.ALLOC, Frames.INIT_RES, 1, peerHeaders());
    res.setShort(Frames.HEADER_SIZE, 1);
    assertThatThrownBy(() -> feed(handshake, res))
        .isInstanceOf(ProtocolException.class)
        .hasMessage("unsupported protocol version 1");
    assertThat(handshake.isDone()).isFalse();
  }

  @Test
  void anyOtherFrameFirstIsFatal() {
    Handshake acceptor = new Handshake(false, parts, new Connection(false, parts));
    acceptor.start(parts.ctx, () -> 1);
    assertThatThrownBy(() -> feed(acceptor, Frames.empty(EmbeddedParts.ALLOC, Frames.PING_REQ, 3)))
        .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.isFatal()).isTrue())
        .hasMessage("expected init req, got ping req");

    Handshake initiator = new Handshake(true, parts, new Connection(true, parts));
    initiator.start(parts.ctx, () -> 1);
    parts.written().release();
    assertThatThrownBy(
            () ->
                feed(
                    initiator,
                    InitFrames.encode(EmbeddedParts.ALLOC, Frames.INIT_REQ, 1, peerHeaders())))
        .isInstanceOf(ProtocolException.class)
        .hasMessage("expected init res, got init req");
  }

  @Test
  void errorFrameInsteadOfInitResRefusesTheHandshake() throws Exception {
    Handshake handshake = new Handshake(true, parts, new Connection(true, parts));
    handshake.start(parts.ctx, () -> 1);
    parts.written().release();
    feed(handshake, Frames.error(EmbeddedParts.ALLOC, 1, ErrorCodes.FATAL, null, "go away"));
    assertThat(failure(handshake))
        .isInstanceOfSatisfying(
            YarpcException.class, e -> assertThat(e.code()).isEqualTo(Code.UNAVAILABLE))
        .hasMessageStartingWith("tchannel peer ")
        .hasMessageEndingWith(" refused the handshake: go away");
    assertThat(parts.channel.isOpen()).isFalse();
    assertThat(parts.handshakes).isEmpty();
  }

  @Test
  void timesOutWhenThePeerStaysSilent() {
    Handshake handshake = new Handshake(false, parts, new Connection(false, parts));
    handshake.start(parts.ctx, () -> 1);
    parts.advance(EmbeddedParts.HANDSHAKE_TIMEOUT_SECONDS - 1, TimeUnit.SECONDS);
    assertThat(handshake.future()).isNotDone();

    parts.advance(1, TimeUnit.SECONDS);
    assertThat(failure(handshake))
        .isInstanceOfSatisfying(
            YarpcException.class, e -> assertThat(e.code()).isEqualTo(Code.UNAVAILABLE))
        .hasMessageEndingWith(" timed out");
    assertThat(parts.channel.isOpen()).isFalse();
  }

  @Test
  void failEndsTheHandshakeAndStopsTheTimer() {
    Handshake handshake = new Handshake(false, parts, new Connection(false, parts));
    handshake.start(parts.ctx, () -> 1);
    YarpcException error = YarpcException.of(Code.UNAVAILABLE, "closed");
    handshake.fail(error);
    assertThat(failure(handshake)).isSameAs(error);
    assertThat(handshake.isDone()).isFalse();

    parts.advance(EmbeddedParts.HANDSHAKE_TIMEOUT_SECONDS * 2, TimeUnit.SECONDS);
    assertThat(parts.channel.isOpen())
        .as("the connection closes the channel, not the timer")
        .isTrue();
  }
}
