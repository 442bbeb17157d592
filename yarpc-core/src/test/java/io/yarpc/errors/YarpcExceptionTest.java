package io.yarpc.errors;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.transport.Body;
import io.yarpc.transport.Response;
import java.io.IOException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

class YarpcExceptionTest {

  @Test
  void toStringHasCodeOnlyWhenThereIsNoNameOrMessage() {
    assertThat(YarpcException.of(Code.INTERNAL, "").toString()).isEqualTo("code:internal");
    assertThat(YarpcException.of(Code.INTERNAL, null).toString()).isEqualTo("code:internal");
  }

  @Test
  void toStringAddsMessage() {
    assertThat(YarpcException.of(Code.NOT_FOUND, "no such user").toString())
        .isEqualTo("code:not-found message:no such user");
  }

  @Test
  void toStringAddsNameBeforeMessage() {
    YarpcException e = YarpcException.of(Code.INVALID_ARGUMENT, "bad id").withName("BadRequest");

    assertThat(e.toString()).isEqualTo("code:invalid-argument name:BadRequest message:bad id");
  }

  @Test
  void toStringWithNameButNoMessage() {
    assertThat(YarpcException.of(Code.ABORTED, "").withName("Conflict").toString())
        .isEqualTo("code:aborted name:Conflict");
  }

  @Test
  void ofFormatsOnlyWhenArgumentsAreGiven() {
    assertThat(YarpcException.of(Code.UNKNOWN, "%s failed %d times", "call", 3).getMessage())
        .isEqualTo("call failed 3 times");
    assertThat(YarpcException.of(Code.UNKNOWN, "100% literal %s").getMessage())
        .isEqualTo("100% literal %s");
  }

  @Test
  void basicAccessors() {
    YarpcException e = YarpcException.of(Code.UNAVAILABLE, "down");

    assertThat(e.code()).isSameAs(Code.UNAVAILABLE);
    assertThat(e.getMessage()).isEqualTo("down");
    assertThat(e.name()).isNull();
    assertThat(e.details()).isNull();
    assertThat(e.response()).isNull();
    assertThat(e.getCause()).isNull();
    assertThat(e.faultType()).isSameAs(FaultType.SERVER);
    assertThat(YarpcException.of(Code.NOT_FOUND, "x").faultType()).isSameAs(FaultType.CLIENT);
  }

  @Test
  void messageIsNeverNull() {
    assertThat(YarpcException.of(Code.INTERNAL, null).getMessage()).isEmpty();
    assertThat(YarpcException.withCause(Code.INTERNAL, null, new IOException()).getMessage())
        .isEmpty();
  }

  @Test
  void okCodeIsRejected() {
    assertThatThrownBy(() -> YarpcException.of(Code.OK, "fine"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ok");
    assertThatThrownBy(() -> YarpcException.withCause(Code.OK, "fine", new RuntimeException()))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void nullCodeIsRejected() {
    assertThatThrownBy(() -> YarpcException.of(null, "x")).isInstanceOf(NullPointerException.class);
  }

  @Test
  void withCauseKeepsTheCause() {
    IOException cause = new IOException("disk");

    YarpcException e = YarpcException.withCause(Code.INTERNAL, "failed", cause);

    assertThat(e.getCause()).isSameAs(cause);
    assertThat(e.getMessage()).isEqualTo("failed");
  }

  @Test
  void fromReturnsAYarpcExceptionAsIs() {
    YarpcException e = YarpcException.of(Code.NOT_FOUND, "x");

    assertThat(YarpcException.from(e)).isSameAs(e);
  }

  @Test
  void fromUnwrapsCompletionAndExecutionExceptions() {
    YarpcException e = YarpcException.of(Code.PERMISSION_DENIED, "no");

    assertThat(YarpcException.from(new CompletionException(e))).isSameAs(e);
    assertThat(YarpcException.from(new ExecutionException(e))).isSameAs(e);
    assertThat(YarpcException.from(new CompletionException(new ExecutionException("wrapped", e))))
        .isSameAs(e);
    assertThat(YarpcException.from(new ExecutionException(new CompletionException(e)))).isSameAs(e);
  }

  @Test
  void fromUnwrapsWhatAFailedFutureThrows() {
    YarpcException e = YarpcException.of(Code.DATA_LOSS, "lost");
    CompletableFuture<Object> failed = CompletableFuture.failedFuture(e);

    Throwable fromJoin = catchThrowable(failed::join);
    Throwable fromGet = catchThrowable(failed::get);
    Throwable fromDependent = catchThrowable(failed.thenApply(x -> x)::join);

    assertThat(YarpcException.from(fromJoin)).isSameAs(e);
    assertThat(YarpcException.from(fromGet)).isSameAs(e);
    assertThat(YarpcException.from(fromDependent)).isSameAs(e);
  }

  private interface ThrowingCall {
    void call() throws Exception;
  }

  private static Throwable catchThrowable(ThrowingCall call) {
    try {
      call.call();
    } catch (Throwable t) {
      return t;
    }
    throw new AssertionError("expected a throwable");
  }

  @Test
  void fromTurnsCancellationIntoCancelled() {
    CancellationException cancel = new CancellationException("stop");

    YarpcException e = YarpcException.from(cancel);

    assertThat(e.code()).isSameAs(Code.CANCELLED);
    assertThat(e.getCause()).isSameAs(cancel);
  }

  @Test
  void fromTurnsWrappedCancellationIntoCancelled() {
    assertThat(YarpcException.from(new CompletionException(new CancellationException())).code())
        .isSameAs(Code.CANCELLED);
    CompletableFuture<Object> cancelled = new CompletableFuture<>();
    cancelled.cancel(true);
    assertThat(YarpcException.from(catchThrowable(cancelled::join)).code())
        .isSameAs(Code.CANCELLED);
    assertThat(YarpcException.from(catchThrowable(cancelled::get)).code()).isSameAs(Code.CANCELLED);
  }

  @Test
  void fromTurnsAnythingElseIntoUnknownWithItsMessage() {
    IllegalStateException boom = new IllegalStateException("boom");

    YarpcException e = YarpcException.from(boom);

    assertThat(e.code()).isSameAs(Code.UNKNOWN);
    assertThat(e.getMessage()).isEqualTo("boom");
    assertThat(e.getCause()).isSameAs(boom);
  }

  @Test
  void fromUnwrapsToTheRootBeforeMakingUnknown() {
    IOException io = new IOException("io failed");

    YarpcException e = YarpcException.from(new CompletionException(io));

    assertThat(e.code()).isSameAs(Code.UNKNOWN);
    assertThat(e.getMessage()).isEqualTo("io failed");
    assertThat(e.getCause()).isSameAs(io);
  }

  @Test
  void fromUsesTheClassNameWhenThereIsNoMessage() {
    assertThat(YarpcException.from(new NullPointerException()).getMessage())
        .isEqualTo("java.lang.NullPointerException");
    assertThat(YarpcException.from(new RuntimeException("")).getMessage())
        .isEqualTo("java.lang.RuntimeException");
  }

  @Test
  void fromAWrapperWithoutCauseIsUnknown() {
    CompletionException bare = new CompletionException("no cause", null);

    YarpcException e = YarpcException.from(bare);

    assertThat(e.code()).isSameAs(Code.UNKNOWN);
    assertThat(e.getCause()).isSameAs(bare);
  }

  @Test
  void fromDoesNotLookThroughOtherWrappers() {
    YarpcException inner = YarpcException.of(Code.NOT_FOUND, "x");

    YarpcException e = YarpcException.from(new RuntimeException("outer", inner));

    assertThat(e.code()).isSameAs(Code.UNKNOWN);
    assertThat(e.getMessage()).isEqualTo("outer");
  }

  @Test
  void fromNullIsRejected() {
    assertThatThrownBy(() -> YarpcException.from(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void describe() {
    assertThat(YarpcException.describe(new IOException("m"))).isEqualTo("m");
    assertThat(YarpcException.describe(new IOException())).isEqualTo("java.io.IOException");
  }

  @Test
  void withNameReturnsACopy() {
    IOException cause = new IOException();
    byte[] details = {1, 2};
    YarpcException original =
        YarpcException.withCause(Code.ABORTED, "msg", cause).withDetails(details);

    YarpcException named = original.withName("Conflict");

    assertThat(named).isNotSameAs(original);
    assertThat(original.name()).isNull();
    assertThat(named.name()).isEqualTo("Conflict");
    assertThat(named.code()).isSameAs(Code.ABORTED);
    assertThat(named.getMessage()).isEqualTo("msg");
    assertThat(named.details()).isSameAs(details);
    assertThat(named.getCause()).isSameAs(cause);
  }

  @Test
  void withDetailsReturnsACopy() {
    YarpcException original = YarpcException.of(Code.INTERNAL, "msg").withName("N");
    byte[] details = "status".getBytes(UTF_8);

    YarpcException detailed = original.withDetails(details);

    assertThat(original.details()).isNull();
    assertThat(detailed.details()).isEqualTo(details);
    assertThat(detailed.name()).isEqualTo("N");
    assertThat(detailed.getMessage()).isEqualTo("msg");
    assertThat(detailed.code()).isSameAs(Code.INTERNAL);
  }

  @Test
  void emptyDetailsAndEmptyNameMeanNone() {
    YarpcException e = YarpcException.of(Code.INTERNAL, "m").withDetails(new byte[0]).withName("");

    assertThat(e.details()).isNull();
    assertThat(e.name()).isNull();
    assertThat(e.withDetails(new byte[] {1}).withDetails(null).details()).isNull();
    assertThat(e.withName("n").withName(null).name()).isNull();
  }

  @Test
  void withResponseReturnsACopyCarryingTheResponse() {
    Response response = Response.of(Body.of("partial".getBytes(UTF_8)));
    YarpcException original = YarpcException.of(Code.UNKNOWN, "m").withName("N");

    YarpcException withResponse = original.withResponse(response);

    assertThat(original.response()).isNull();
    assertThat(withResponse.response()).isSameAs(response);
    assertThat(withResponse.name()).isEqualTo("N");
    assertThat(withResponse.withName("M").response()).as("kept by later copies").isSameAs(response);
    assertThat(withResponse).as("responses are ignored by equals").isEqualTo(original);
    response.body().release();
  }

  @Test
  void equalsAndHashCode() {
    YarpcException a =
        YarpcException.of(Code.NOT_FOUND, "m").withName("n").withDetails(new byte[] {1, 2});
    YarpcException b =
        YarpcException.withCause(Code.NOT_FOUND, "m", new IOException())
            .withName("n")
            .withDetails(new byte[] {1, 2});

    assertThat(a).isEqualTo(b);
    assertThat(a.hashCode()).isEqualTo(b.hashCode());
    assertThat(a).isNotEqualTo(a.withName("other"));
    assertThat(a).isNotEqualTo(a.withDetails(new byte[] {3}));
    assertThat(a)
        .isNotEqualTo(
            YarpcException.of(Code.INTERNAL, "m").withName("n").withDetails(new byte[] {1, 2}));
    assertThat(a)
        .isNotEqualTo(
            YarpcException.of(Code.NOT_FOUND, "other")
                .withName("n")
                .withDetails(new byte[] {1, 2}));
    assertThat(a).isNotEqualTo(null);
    assertThat(a).isNotEqualTo("code:not-found");
  }

  @Test
  void unprocessedIsAMarkThatCopiesKeep() {
    YarpcException plain = YarpcException.of(Code.UNAVAILABLE, "down");
    assertThat(plain.unprocessed()).isFalse();
    YarpcException marked = plain.withUnprocessed();
    assertThat(marked.unprocessed()).isTrue();
    assertThat(marked.withUnprocessed()).isSameAs(marked);
    assertThat(marked.withName("n").unprocessed()).isTrue();
    assertThat(marked.withDetails(new byte[] {1}).unprocessed()).isTrue();
    assertThat(marked.withResponse(Response.of(Body.empty())).unprocessed()).isTrue();
    assertThat(
            YarpcException.wrapping(Code.UNAVAILABLE, "ctx", new IOException("x"))
                .withUnprocessed()
                .redacted()
                .unprocessed())
        .isTrue();
    assertThat(marked).as("not part of equality").isEqualTo(plain);
    assertThat(YarpcException.from(new CompletionException(marked)).unprocessed()).isTrue();
  }
}
