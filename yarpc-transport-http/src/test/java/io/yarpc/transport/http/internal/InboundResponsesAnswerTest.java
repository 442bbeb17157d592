package io.yarpc.transport.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpVersion;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Headers;
import io.yarpc.transport.Response;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * {@link InboundResponses#answerSuccess} and {@link InboundResponses#answerError} never throw: what cannot
 * be built is answered {@code internal} with a fixed message, and every body and buffer is released (the
 * paranoid leak detector fails the test otherwise).
 */
class InboundResponsesAnswerTest {
  private static final String SECRET = "handler-secret-text";
  private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
  private final InboundResponses.Context both =
      new InboundResponses.Context(HttpVersion.HTTP_1_1, "svc", "raw", true);
  private final InboundResponses.Context text =
      new InboundResponses.Context(HttpVersion.HTTP_1_1, "svc", "raw", false);

  /** Throws {@code failure} when asked its length, or (with a length) after writing half its bytes. */
  private static final class FailingBody extends Body {
    private final Throwable failure;
    private final long length;

    FailingBody(Throwable failure, long length) {
      this.failure = failure;
      this.length = length;
    }

    @Override
    public long length() {
      if (length < 0) {
        throw unchecked();
      }
      return length;
    }

    @Override
    public void writeTo(OutputStream out) throws IOException {
      out.write(new byte[(int) length / 2]);
      throw unchecked();
    }

    @Override
    public InputStream openStream() {
      throw new UnsupportedOperationException();
    }

    private RuntimeException unchecked() {
      if (failure instanceof Error) {
        throw (Error) failure;
      }
      return (RuntimeException) failure;
    }
  }

  private static void assertInternal(FullHttpResponse res, InboundResponses.Context ctx) {
    try {
      assertThat(res.status().code()).isEqualTo(500);
      assertThat(res.headers().get(WireHeaders.ERROR_CODE)).isEqualTo("internal");
      assertThat(res.headers().get(WireHeaders.SERVICE)).isEqualTo("svc");
      StringBuilder values = new StringBuilder(res.content().toString(StandardCharsets.UTF_8));
      res.headers().forEach(h -> values.append('\n').append(h.getValue()));
      assertThat(values.toString())
          .as("no handler text, no class names")
          .doesNotContain(SECRET)
          .doesNotContain("Error")
          .doesNotContain("Exception");
      if (ctx.bothResponseError()) {
        assertThat(res.headers().get(WireHeaders.ERROR_MESSAGE))
            .isEqualTo(InboundResponses.BUILD_FAILED);
        assertThat(res.content().readableBytes()).isZero();
      } else {
        assertThat(res.content().toString(StandardCharsets.UTF_8))
            .isEqualTo(InboundResponses.BUILD_FAILED + "\n");
      }
    } finally {
      res.release();
    }
  }

  @Test
  void aBodyThatThrowsAnErrorIsAnsweredInternal() {
    for (InboundResponses.Context ctx : new InboundResponses.Context[] {both, text}) {
      Body length = new FailingBody(new AssertionError(SECRET), -1);
      assertInternal(InboundResponses.answerSuccess(ctx, Response.of(length), alloc), ctx);
      assertThat(length.isReleased()).isTrue();

      Body midway = new FailingBody(new StackOverflowError(SECRET), 1024);
      assertInternal(InboundResponses.answerSuccess(ctx, Response.of(midway), alloc), ctx);
      assertThat(midway.isReleased()).as("and the half-written buffer is released too").isTrue();
    }
  }

  @Test
  void aBodyThatFailsToSerialiseIsStillAnsweredUnknownWithItsMessage() {
    Body body = new FailingBody(new IllegalStateException("no serialiser"), 16);
    FullHttpResponse res = InboundResponses.answerSuccess(text, Response.of(body), alloc);
    try {
      assertThat(res.status().code()).isEqualTo(500);
      assertThat(res.headers().get(WireHeaders.ERROR_CODE)).isEqualTo("unknown");
      assertThat(res.content().toString(StandardCharsets.UTF_8))
          .isEqualTo("failed to write the response body: no serialiser\n");
    } finally {
      res.release();
    }
    assertThat(body.isReleased()).isTrue();
  }

  @Test
  void anErrorCarryingABodyThatThrowsIsAnsweredInternalWhenTheBodyIsWanted() {
    Body carried = new FailingBody(new IllegalStateException(SECRET), -1);
    YarpcException error =
        YarpcException.of(Code.FAILED_PRECONDITION, SECRET).withResponse(Response.of(carried));
    assertInternal(InboundResponses.answerError(both, error, 0, alloc), both);
    assertThat(carried.isReleased()).isTrue();

    // a client that takes only the message never needs the body: its error is answered as it is
    Body unread = new FailingBody(new IllegalStateException(SECRET), -1);
    FullHttpResponse res =
        InboundResponses.answerError(
            text,
            YarpcException.of(Code.FAILED_PRECONDITION, "precondition")
                .withResponse(Response.of(unread)),
            0,
            alloc);
    try {
      assertThat(res.status().code()).isEqualTo(400);
      assertThat(res.content().toString(StandardCharsets.UTF_8)).isEqualTo("precondition\n");
    } finally {
      res.release();
    }
    assertThat(unread.isReleased()).isTrue();
  }

  @Test
  void healthyAnswersAreUnchanged() {
    Response response =
        Response.builder()
            .body(Body.of(new byte[] {1, 2, 3}))
            .headers(Headers.of("k", "v"))
            .build();
    FullHttpResponse res = InboundResponses.answerSuccess(both, response, alloc);
    try {
      assertThat(res.status().code()).isEqualTo(200);
      assertThat(res.headers().get(WireHeaders.STATUS)).isEqualTo("success");
      assertThat(res.headers().get("Rpc-Header-K")).isEqualTo("v");
      assertThat(res.headers().get("content-type")).isEqualTo("application/octet-stream");
      assertThat(res.content().readableBytes()).isEqualTo(3);
    } finally {
      res.release();
    }
    assertThat(response.body().isReleased()).isTrue();

    FullHttpResponse err =
        InboundResponses.answerError(both, YarpcException.of(Code.NOT_FOUND, "nope"), 413, alloc);
    try {
      assertThat(err.status().code()).as("the status override").isEqualTo(413);
      assertThat(err.headers().get(WireHeaders.ERROR_CODE)).isEqualTo("not-found");
      assertThat(err.headers().get(WireHeaders.ERROR_MESSAGE)).isEqualTo("nope");
    } finally {
      err.release();
    }
  }
}
