package io.yarpc.retry;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Handler;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The retry decisions and body ownership, against a scripted outbound (the transports' tests run it for real). */
class RetryMiddlewareTest {
  private final AtomicInteger released = new AtomicInteger();
  private final List<String> sent = new ArrayList<>(); // the body each attempt's outbound read
  private final List<Body> views = new ArrayList<>();

  private static RetryMiddleware.Builder quick() {
    return RetryMiddleware.builder()
        .backoff(Backoff.exponential(Duration.ofNanos(1), Duration.ofNanos(1)));
  }

  /** An outbound that fails with {@code errors} in turn, then echoes; it releases each body it reads. */
  private Handler<Request, Response> outbound(YarpcException... errors) {
    AtomicInteger n = new AtomicInteger();
    return request -> {
      synchronized (sent) {
        sent.add(new String(request.body().toByteArray(), UTF_8));
        views.add(request.body());
      }
      request.body().release();
      int i = n.getAndIncrement();
      return i < errors.length
          ? CompletableFuture.failedFuture(errors[i])
          : CompletableFuture.completedFuture(Response.of(Body.of("ok".getBytes(UTF_8))));
    };
  }

  private Request request(String procedure) {
    return request(procedure, Duration.ofSeconds(10));
  }

  private Request request(String procedure, Duration timeout) {
    return Request.of(
        RequestMeta.builder()
            .service("svc")
            .procedure(procedure)
            .encoding("raw")
            .deadline(Deadline.after(timeout))
            .build(),
        Body.ofBuffers(
            List.of(ByteBuffer.wrap("body".getBytes(UTF_8))), released::incrementAndGet));
  }

  /**
   * The request body was released once. The call's future completes on the thread that ends the last
   * attempt (a retry's, or the timer's), and that thread releases the body after it woke the waiting test
   * thread: this waits for the release (at most 10 s, a guard, not a timing assertion).
   */
  private void assertReleasedOnce() throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (released.get() == 0 && System.nanoTime() < end) {
      Thread.sleep(1);
    }
    assertThat(released).as("the request body, once, after the last attempt").hasValue(1);
  }

  private static <T> T await(CompletableFuture<T> f) throws Exception {
    try {
      return f.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw YarpcException.from(e.getCause());
    }
  }

  private static YarpcException unavailable() {
    return YarpcException.of(Code.UNAVAILABLE, "down");
  }

  @Test
  void anUnprocessedCallIsRetriedWhateverTheProcedureAndTheBodyReleasedOnce() throws Exception {
    RetryMiddleware retry = quick().maxAttempts(3).build();
    Response r =
        await(
            retry.handle(
                request("write"),
                outbound(
                    unavailable().withUnprocessed(),
                    YarpcException.of(Code.RESOURCE_EXHAUSTED, "busy").withUnprocessed())));
    assertThat(r.body().toByteArray()).isEqualTo("ok".getBytes(UTF_8));
    assertThat(sent).containsExactly("body", "body", "body");
    assertThat(views).allSatisfy(v -> assertThat(v.isReleased()).isTrue());
    assertReleasedOnce();
  }

  @Test
  void aCallThatMayHaveReachedItsHandlerIsRetriedOnlyWhenIdempotent() throws Exception {
    RetryMiddleware retry = quick().idempotentProcedures("get").build();
    assertThatThrownBy(() -> await(retry.handle(request("write"), outbound(unavailable()))))
        .isEqualTo(unavailable());
    assertThat(sent).hasSize(1);
    assertThat(released).hasValue(1);

    sent.clear();
    await(retry.handle(request("get"), outbound(unavailable()))).body().release();
    assertThat(sent).hasSize(2);
  }

  @Test
  void onlyTheRetryableCodesAreRetried() throws Exception {
    RetryMiddleware retry =
        quick().idempotentProcedures("get").retryableCodes(Code.ABORTED).build();
    assertThatThrownBy(() -> await(retry.handle(request("get"), outbound(unavailable()))))
        .isEqualTo(unavailable());
    await(retry.handle(request("get"), outbound(YarpcException.of(Code.ABORTED, "conflict"))))
        .body()
        .release();
    assertThat(sent).hasSize(3);
  }

  @Test
  void theLastAttemptsErrorIsReturnedAfterMaxAttempts() throws Exception {
    RetryMiddleware retry = quick().maxAttempts(2).build();
    YarpcException last = YarpcException.of(Code.UNAVAILABLE, "second").withUnprocessed();
    assertThatThrownBy(
            () ->
                await(
                    retry.handle(
                        request("write"),
                        outbound(unavailable().withUnprocessed(), last, unavailable()))))
        .isEqualTo(last);
    assertThat(sent).hasSize(2);
    assertReleasedOnce();
  }

  @Test
  void noRetryWithoutBudget() {
    RetryMiddleware retry = quick().budget(RetryBudget.none()).build();
    assertThatThrownBy(
            () -> await(retry.handle(request("write"), outbound(unavailable().withUnprocessed()))))
        .isEqualTo(unavailable());
    assertThat(sent).hasSize(1);
  }

  @Test
  void noRetryWhoseBackoffEndsPastTheDeadline() {
    RetryMiddleware retry =
        RetryMiddleware.builder()
            .backoff(Backoff.exponential(Duration.ofHours(1), Duration.ofHours(1)))
            .build();
    // a delay is random in [0, 1 h]: past the 10 s deadline but for a 1-in-360 chance, so try a few
    int retried = 0;
    for (int i = 0; i < 5; i++) {
      CompletableFuture<Response> f =
          retry.handle(request("write"), outbound(unavailable().withUnprocessed()));
      if (!f.isDone()) {
        retried++;
        f.cancel(false);
      }
    }
    assertThat(retried).isLessThan(5);
  }

  @Test
  void aBodyReadFromAStreamIsReadOnceAndSentByEveryAttempt() throws Exception {
    AtomicInteger streamClosed = new AtomicInteger();
    Body stream =
        Body.of(
            new ByteArrayInputStream("streamed".getBytes(UTF_8)) {
              @Override
              public void close() {
                streamClosed.incrementAndGet();
              }
            },
            -1);
    Request request = Request.of(request("write").meta(), stream);
    await(quick().build().handle(request, outbound(unavailable().withUnprocessed())))
        .body()
        .release();
    assertThat(sent).containsExactly("streamed", "streamed");
    assertThat(stream.isReleased()).isTrue();
    assertThat(streamClosed).hasPositiveValue();
  }

  @Test
  void aCallerThatGivesUpStopsTheRetriesAndTheBodyIsReleased() throws Exception {
    RetryMiddleware retry =
        RetryMiddleware.builder()
            // full jitter: the delay is anything up to the cap; an hour keeps it longer than any
            // pause of a loaded machine between the call and its cancel, and a day's deadline lets
            // the retry be scheduled (a backoff past the deadline fails the call at once instead)
            .backoff(Backoff.exponential(Duration.ofHours(1), Duration.ofHours(1)))
            .build();
    CompletableFuture<Response> f =
        retry.handle(
            request("write", Duration.ofDays(1)), outbound(unavailable().withUnprocessed()));
    assertThat(f).as("waiting for its retry").isNotDone();
    assertThat(f.cancel(false)).isTrue();
    assertThat(released).hasValue(1); // the cancelling thread released it
    assertThat(sent).hasSize(1);
  }

  @Test
  void aRetryStartsWhileTheCommonForkJoinPoolIsBusy() throws Exception {
    // an application keeps every worker of the common pool busy; retries do not wait for it
    int workers = ForkJoinPool.getCommonPoolParallelism();
    CountDownLatch busy = new CountDownLatch(workers);
    CountDownLatch release = new CountDownLatch(1);
    for (int i = 0; i < workers; i++) {
      ForkJoinPool.commonPool()
          .execute(
              () -> {
                busy.countDown();
                try {
                  release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              });
    }
    try {
      assertThat(busy.await(10, TimeUnit.SECONDS)).isTrue();
      Response r =
          await(
              quick().build().handle(request("write"), outbound(unavailable().withUnprocessed())));
      assertThat(r.body().toByteArray()).isEqualTo("ok".getBytes(UTF_8));
      r.body().release();
      assertThat(sent).containsExactly("body", "body");
    } finally {
      release.countDown();
    }
    assertReleasedOnce();
  }

  @Test
  void attemptsAfterTheFirstStartOnTheGivenExecutor() throws Exception {
    List<String> threads = new ArrayList<>();
    RetryMiddleware retry =
        quick()
            .executor(
                task ->
                    new Thread(
                            () -> {
                              threads.add(Thread.currentThread().getName());
                              task.run();
                            },
                            "my-retries")
                        .start())
            .build();
    await(retry.handle(request("write"), outbound(unavailable().withUnprocessed())))
        .body()
        .release();
    assertThat(threads).containsExactly("my-retries");
    assertThat(sent).containsExactly("body", "body");
  }

  @Test
  void anExecutorThatRefusesTheRetryFailsTheCallAsUnavailableAndReleasesTheBody() throws Exception {
    RetryMiddleware retry =
        quick()
            .executor(
                task -> {
                  throw new RejectedExecutionException("full");
                })
            .build();
    assertThatThrownBy(
            () -> await(retry.handle(request("write"), outbound(unavailable().withUnprocessed()))))
        .isInstanceOf(YarpcException.class)
        .hasMessage("the retry executor refused attempt 2 of svc::write: full")
        .extracting(e -> ((YarpcException) e).code())
        .isEqualTo(Code.UNAVAILABLE);
    assertThat(sent).containsExactly("body");
    assertReleasedOnce();
  }

  @Test
  void theResponseOfADiscardedAttemptIsReleased() throws Exception {
    Body carried = Body.of("error body".getBytes(UTF_8));
    YarpcException withResponse =
        unavailable().withUnprocessed().withResponse(Response.of(carried));
    await(quick().build().handle(request("write"), outbound(withResponse))).body().release();
    assertThat(carried.isReleased()).isTrue();
  }

  @Test
  void oneAttemptPassesTheCallThrough() throws Exception {
    Request request = request("write");
    Handler<Request, Response> next = r -> CompletableFuture.completedFuture(Response.of(r.body()));
    Response r = await(quick().maxAttempts(1).build().handle(request, next));
    assertThat(r.body()).isSameAs(request.body());
    r.body().release();
  }

  @Test
  void badSettingsAreRefused() {
    assertThatThrownBy(() -> RetryMiddleware.builder().maxAttempts(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxAttempts must be from 1 to 10: 0");
    assertThatThrownBy(() -> RetryMiddleware.builder().maxAttempts(11))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RetryMiddleware.builder().retryableCodes(Code.OK))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("ok is not an error code and cannot be retried");
    assertThatThrownBy(() -> RetryMiddleware.builder().idempotentProcedures(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("procedure names must not be empty");
    assertThatThrownBy(() -> RetryMiddleware.builder().perAttemptTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("timeout must be positive: PT0S");
    assertThatThrownBy(() -> RetryMiddleware.builder().backoff(null))
        .isInstanceOf(NullPointerException.class);
  }
}
