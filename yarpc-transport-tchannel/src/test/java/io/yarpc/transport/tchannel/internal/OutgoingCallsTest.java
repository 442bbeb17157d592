package io.yarpc.transport.tchannel.internal;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.tchannel.ChecksumType;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The calls this side sends, on their own: ids, the pending map, responses, errors, cancel, timeout. */
class OutboundCallsTest {
  private final EmbeddedParts parts = new EmbeddedParts();
  private boolean usable = true;
  private final OutgoingCalls calls = calls(1);

  @AfterEach
  void close() {
    parts.close();
  }

  private OutgoingCalls calls(int firstId) {
    return new OutgoingCalls(
        parts.out, parts.settings, firstId, () -> usable, () -> "10.0.0.7:21300");
  }

  private static RequestMeta meta(Deadline deadline) {
    return RequestMeta.builder()
        .caller("caller")
        .service("svc")
        .procedure("echo")
        .encoding("raw")
        .deadline(deadline)
        .build();
  }

  private CompletableFuture<Response> call(String body) {
    return calls.call(
        meta(Deadline.after(Duration.ofSeconds(5))),
        Body.of(body.getBytes(UTF_8)),
        ChecksumType.NONE);
  }

  /** The id of the call req just written (its frame is released). */
  private int writtenCallReq() {
    ByteBuf frame = parts.written();
    try {
      assertThat(Frames.type(frame)).isEqualTo(Frames.CALL_REQ);
      return Frames.id(frame);
    } finally {
      frame.release();
    }
  }

  private void respond(int id, String body) throws Exception {
    List<ByteBuf> frames =
        CallCodec.encodeResponse(
            EmbeddedParts.ALLOC,
            id,
            new byte[Frames.TRACING_SIZE],
            "raw",
            ChecksumType.CRC32C,
            0,
            Map.of(),
            Body.of(body.getBytes(UTF_8)),
            Frames.MAX_FRAME_SIZE);
    for (ByteBuf f : frames) {
      try {
        calls.onCallRes(f, id, Frames.type(f) == Frames.CALL_RES);
      } finally {
        f.release();
      }
    }
  }

  private static YarpcException failure(CompletableFuture<?> f) {
    assertThat(f).isCompletedExceptionally();
    Throwable t = f.handle((r, e) -> e instanceof CompletionException ? e.getCause() : e).join();
    assertThat(t).isInstanceOf(YarpcException.class);
    return (YarpcException) t;
  }

  @Test
  void callsTakeIdsAfterTheInitReqsAndStayPendingUntilTheirResponse() throws Exception {
    assertThat(calls.takeId()).as("the init req's").isEqualTo(1);
    CompletableFuture<Response> first = call("ping");
    CompletableFuture<Response> second = call("pong");
    assertThat(writtenCallReq()).isEqualTo(2);
    assertThat(writtenCallReq()).isEqualTo(3);
    assertThat(calls.size()).isEqualTo(2);

    respond(3, "second");
    Response response = second.join();
    try {
      assertThat(new String(response.body().toByteArray(), UTF_8)).isEqualTo("second");
    } finally {
      response.body().release();
    }
    assertThat(first).isNotDone();
    assertThat(calls.size()).isEqualTo(1);

    respond(99, "nobody's"); // no such call: dropped
    assertThat(first).isNotDone();
  }

  @Test
  void idsSkipTheReservedIdAndZeroWhenTheyWrap() {
    OutgoingCalls wrapping = calls(0xFFFFFFFE);
    assertThat(wrapping.allocateId()).isEqualTo(0xFFFFFFFE);
    assertThat(wrapping.allocateId()).isEqualTo(1);
    assertThat(wrapping.allocateId()).isEqualTo(2);
  }

  @Test
  void errorFrameFailsThePendingCall() {
    CompletableFuture<Response> busy = call("a");
    CompletableFuture<Response> unhealthy = call("b");
    calls.onError(writtenCallReq(), ErrorCodes.BUSY, "slow down");
    calls.onError(writtenCallReq(), ErrorCodes.UNHEALTHY, "sick");
    assertThat(failure(busy).code()).isEqualTo(Code.RESOURCE_EXHAUSTED);
    assertThat(failure(busy)).hasMessage("slow down");
    assertThat(failure(unhealthy).code()).isEqualTo(Code.INTERNAL);
    assertThat(failure(unhealthy))
        .hasMessage("got tchannel error Unhealthy which did not have a matching YARPC code: sick");
    assertThat(calls.size()).isZero();
  }

  @Test
  void cancellingSendsACancelFrameAndDropsTheLateResponse() throws Exception {
    CompletableFuture<Response> call = call("a");
    int id = writtenCallReq();
    call.cancel(false);
    ByteBuf cancel = parts.written();
    try {
      assertThat(Frames.type(cancel)).isEqualTo(Frames.CANCEL);
      assertThat(Frames.id(cancel)).isEqualTo(id);
    } finally {
      cancel.release();
    }
    assertThat(calls.size()).isZero();
    respond(id, "too late");
    assertThat(parts.written()).isNull();
  }

  @Test
  void noTimerOfItsOwnACancelledCallSendsACancelFrame() {
    CompletableFuture<Response> call = call("a");
    int id = writtenCallReq();
    parts.advance(10, TimeUnit.SECONDS);
    assertThat(call).as("the deadline is core's call path's: no timer here").isNotDone();
    assertThat(parts.written()).isNull();

    assertThat(call.cancel(false)).isTrue(); // what the call path does when the deadline passes
    parts.advance(0, TimeUnit.NANOSECONDS); // run what the cancel put on the event loop
    ByteBuf cancel = parts.written();
    try {
      assertThat(Frames.type(cancel)).isEqualTo(Frames.CANCEL);
      assertThat(Frames.id(cancel)).isEqualTo(id);
    } finally {
      cancel.release();
    }
    assertThat(calls.size()).isZero();
  }

  @Test
  void aConnectionNoLongerUsableWhenTheFramesWouldBeWrittenFailsTheCall() {
    usable = false;
    Body body = Body.of(new byte[] {1});
    YarpcException e =
        failure(calls.call(meta(Deadline.after(Duration.ofSeconds(5))), body, ChecksumType.NONE));
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e).hasMessage("tchannel connection to 10.0.0.7:21300 closed");
    assertThat(body.isReleased()).isTrue();
    assertThat(parts.written()).isNull();
    assertThat(calls.size()).isZero();
  }

  @Test
  void failAllEndsEveryPendingCall() {
    CompletableFuture<Response> a = call("a");
    CompletableFuture<Response> b = call("b");
    writtenCallReq();
    writtenCallReq();
    calls.failAll("tchannel connection to 10.0.0.7:21300 closed");
    for (CompletableFuture<Response> f : List.of(a, b)) {
      assertThat(failure(f).code()).isEqualTo(Code.UNAVAILABLE);
      assertThat(failure(f)).hasMessage("tchannel connection to 10.0.0.7:21300 closed");
    }
    assertThat(calls.size()).isZero();
    parts.advance(10, TimeUnit.SECONDS);
    assertThat(parts.written()).as("their timers stopped").isNull();
  }
}
