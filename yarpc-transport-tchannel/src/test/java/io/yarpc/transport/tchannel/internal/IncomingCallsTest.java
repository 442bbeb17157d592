package io.yarpc.transport.tchannel.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.yarpc.errors.Code;
import io.yarpc.transport.Body;
import io.yarpc.transport.HandlerSpec;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.Router;
import io.yarpc.transport.tchannel.ChecksumType;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The calls the peer sends, on their own: dispatch, responses, the in-flight limit, duplicates, cancel. */
class InboundCallsTest {
  private final EmbeddedParts parts = new EmbeddedParts(2);
  private final IncomingCalls calls =
      new IncomingCalls(parts.out, parts.settings, parts, "test connection");

  /** What each handler invocation got (its body already read and released) and must answer. */
  private final List<String> received = new ArrayList<>();

  private final List<CompletableFuture<Response>> pending = new ArrayList<>();

  InboundCallsTest() {
    parts.router =
        new Router() {
          @Override
          public List<Procedure> procedures() {
            return List.of();
          }

          @Override
          public HandlerSpec choose(RequestMeta meta) {
            return HandlerSpec.unary(
                request -> {
                  try {
                    received.add(
                        meta.procedure() + ":" + new String(request.body().toByteArray(), UTF_8));
                  } finally {
                    request.body().release();
                  }
                  CompletableFuture<Response> result = new CompletableFuture<>();
                  pending.add(result);
                  return result;
                });
          }
        };
  }

  @AfterEach
  void close() {
    calls.closeAll();
    parts.close();
  }

  /** Sends a complete call req with {@code id} to the inbound calls; the frames are released after. */
  private void callReq(int id, String body) throws Exception {
    for (ByteBuf f : request(id, body)) {
      try {
        calls.onCallReq(f, id);
      } finally {
        f.release();
      }
    }
  }

  private static List<ByteBuf> request(int id, String body) throws Exception {
    RequestMeta meta =
        RequestMeta.builder()
            .caller("caller")
            .service("svc")
            .procedure("echo")
            .encoding("raw")
            .build();
    return CallCodec.encodeRequest(
        EmbeddedParts.ALLOC,
        id,
        meta,
        Body.of(body.getBytes(UTF_8)),
        1000,
        new byte[Frames.TRACING_SIZE],
        ChecksumType.CRC32C,
        Frames.MAX_FRAME_SIZE);
  }

  /** The next frame written must be of {@code type} for message {@code id}; returns its error message. */
  private String expectWritten(int type, int id, int errorCode) {
    ByteBuf frame = parts.written();
    assertThat(frame).isNotNull();
    try {
      assertThat(Frames.type(frame)).isEqualTo(type);
      assertThat(Frames.id(frame)).isEqualTo(id);
      if (type == Frames.ERROR) {
        assertThat(EmbeddedParts.errorCode(frame)).isEqualTo(errorCode);
        return Frames.errorMessage(frame);
      }
      return null;
    } finally {
      frame.release();
    }
  }

  @Test
  void aCompleteCallReqReachesItsHandlerAndItsResponseIsWritten() throws Exception {
    callReq(5, "hello");
    assertThat(received).containsExactly("echo:hello");
    assertThat(calls.size()).as("being handled").isEqualTo(1);
    assertThat(parts.written()).isNull();

    Body response = Body.of("world".getBytes(UTF_8));
    pending.get(0).complete(Response.of(response));
    expectWritten(Frames.CALL_RES, 5, 0);
    assertThat(response.isReleased()).isTrue();
    assertThat(calls.size()).isZero();
  }

  @Test
  void responsesCompletedWhileAReadIsHandedOnAreFlushedOnceWhenItEnds() throws Exception {
    parts.out.reading(); // as the connection does for each frame of one socket read
    callReq(5, "a");
    callReq(6, "b");
    // a non-blocking handler completes on the event loop, during the read
    pending.get(0).complete(Response.of(Body.of("x".getBytes(UTF_8))));
    pending.get(1).complete(Response.of(Body.of("y".getBytes(UTF_8))));
    assertThat(parts.written()).as("written, not flushed yet").isNull();

    parts.out.readComplete();
    expectWritten(Frames.CALL_RES, 5, 0);
    expectWritten(Frames.CALL_RES, 6, 0);
    assertThat(calls.size()).isZero();
  }

  @Test
  void ttlZeroIsABadRequest() throws Exception {
    ByteBuf frame = request(5, "x").get(0);
    frame.setInt(frame.readerIndex() + Frames.HEADER_SIZE + 1, 0);
    try {
      assertThatThrownBy(() -> calls.onCallReq(frame, 5))
          .isInstanceOfSatisfying(
              ProtocolException.class,
              e -> assertThat(e.errorCode()).isEqualTo(ErrorCodes.BAD_REQUEST))
          .hasMessage("timeout required");
    } finally {
      frame.release();
    }
    assertThat(calls.size()).isZero();
    assertThat(received).isEmpty();
  }

  @Test
  void callsBeyondTheInFlightLimitAreBusy() throws Exception {
    callReq(1, "a");
    callReq(2, "b");
    ByteBuf third = request(3, "c").get(0);
    try {
      assertThatThrownBy(() -> calls.onCallReq(third, 3))
          .isInstanceOfSatisfying(
              ProtocolException.class, e -> assertThat(e.errorCode()).isEqualTo(ErrorCodes.BUSY))
          .hasMessage("too many in-flight calls on this connection (the limit is 2)");
    } finally {
      third.release();
    }
    calls.endMessage(3, false, ErrorCodes.BUSY, "busy");
    assertThat(expectWritten(Frames.ERROR, 3, ErrorCodes.BUSY)).isEqualTo("busy");

    pending.get(0).complete(Response.of(Body.empty()));
    expectWritten(Frames.CALL_RES, 1, 0);
    callReq(3, "c");
    assertThat(received).containsExactly("echo:a", "echo:b", "echo:c");
  }

  @Test
  void aDuplicateIdWhileTheFirstCallIsHandledIsABadRequest() throws Exception {
    callReq(5, "first");
    callReq(5, "second");
    assertThat(expectWritten(Frames.ERROR, 5, ErrorCodes.BAD_REQUEST))
        .isEqualTo("message id 5 is already in use");
    assertThat(received).containsExactly("echo:first");

    pending.get(0).complete(Response.of(Body.empty()));
    expectWritten(Frames.CALL_RES, 5, 0);
  }

  @Test
  void cancelCancelsTheHandlerAndIsAnswered() throws Exception {
    callReq(5, "a");
    calls.onCancel(5);
    assertThat(pending.get(0)).isCancelled();
    assertThat(expectWritten(Frames.ERROR, 5, ErrorCodes.CANCELLED))
        .isEqualTo("request cancelled by the caller");
    assertThat(calls.size()).isZero();
    calls.onCancel(5);
    assertThat(parts.written()).as("a second cancel finds nothing").isNull();
  }

  @Test
  void withoutARouterTheCallIsAnsweredUnavailable() throws Exception {
    parts.router = null;
    callReq(5, "a");
    assertThat(expectWritten(Frames.ERROR, 5, ErrorCodes.fromCode(Code.UNAVAILABLE)))
        .isEqualTo("no tchannel inbound serves calls on this connection");
    assertThat(calls.size()).isZero();
  }

  @Test
  void closeAllCancelsRunningHandlersAndDropsPartialMessages() throws Exception {
    callReq(1, "a");
    ByteBuf partial = request(2, "b").get(0);
    partial.setByte(partial.readerIndex() + Frames.HEADER_SIZE, Frames.FLAG_MORE_FRAGMENTS);
    try {
      calls.onCallReq(partial, 2);
    } finally {
      partial.release();
    }
    assertThat(calls.size()).isEqualTo(2);

    calls.closeAll();
    assertThat(pending.get(0)).isCancelled();
    assertThat(calls.size()).isZero();
    assertThat(parts.written()).isNull();
  }

  @Test
  void aMessageStillArrivingAtItsTtlEndsWithATimeoutAndItsLaterFramesAreIgnored() throws Exception {
    List<ByteBuf> frames = request(2, "b");
    ByteBuf partial = frames.get(0);
    partial.setByte(partial.readerIndex() + Frames.HEADER_SIZE, Frames.FLAG_MORE_FRAGMENTS);
    try {
      calls.onCallReq(partial, 2);
    } finally {
      frames.forEach(ByteBuf::release);
    }
    assertThat(calls.assembling()).isEqualTo(1);
    parts.advance(900, TimeUnit.MILLISECONDS); // the ttl is 1000 ms
    assertThat(parts.written()).isNull();
    parts.advance(200, TimeUnit.MILLISECONDS);
    assertThat(expectWritten(Frames.ERROR, 2, ErrorCodes.TIMEOUT))
        .isEqualTo("call req message 2 still incomplete at its deadline (ttl 1000 ms)");
    assertThat(calls.size()).isZero();
    assertThat(calls.assembling()).isZero();

    ByteBuf last =
        Unpooled.buffer()
            .writeShort(Frames.HEADER_SIZE + 2)
            .writeByte(Frames.CALL_REQ_CONTINUE)
            .writeByte(0)
            .writeInt(2)
            .writeLong(0)
            .writeByte(0) // flags: the last frame
            .writeByte(0); // checksum type none
    try {
      calls.onCallReqContinue(last, 2);
    } finally {
      last.release();
    }
    assertThat(parts.written()).as("the ended message's last frame is ignored").isNull();
    assertThat(received).isEmpty();
  }
}
