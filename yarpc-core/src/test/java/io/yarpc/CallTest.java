package io.yarpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Headers;
import io.yarpc.transport.RequestMeta;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class CallTest {
  private final ExecutorService executor = Executors.newSingleThreadExecutor();

  @AfterEach
  void shutdown() {
    executor.shutdownNow();
  }

  private static Call call(String procedure) {
    return new Call(
        RequestMeta.builder()
            .caller("caller-svc")
            .service("callee-svc")
            .procedure(procedure)
            .headers(Headers.of("X-Trace", "t1"))
            .deadline(Deadline.after(Duration.ofSeconds(30)))
            .build());
  }

  @Test
  void noCallIsCurrentOutsideAHandler() {
    assertThat(Call.current()).isNull();
  }

  @Test
  void runMakesTheCallCurrentAndRestoresNothingAfterwards() throws Exception {
    Call call = call("p");

    String result = call.run(() -> Call.current() == call ? "current" : "not current");

    assertThat(result).isEqualTo("current");
    assertThat(Call.current()).isNull();
  }

  @Test
  void nestedRunsRestoreThePreviousCall() throws Exception {
    Call outer = call("outer");
    Call inner = call("inner");
    List<Call> seen = new ArrayList<>();

    outer.run(
        () -> {
          seen.add(Call.current());
          inner.run(
              () -> {
                seen.add(Call.current());
                return null;
              });
          seen.add(Call.current());
          return null;
        });

    assertThat(seen).containsExactly(outer, inner, outer);
    assertThat(Call.current()).isNull();
  }

  @Test
  void runRestoresThePreviousCallWhenTheBodyThrows() throws Exception {
    Call outer = call("outer");
    Call inner = call("inner");
    IllegalStateException failure = new IllegalStateException("boom");

    outer.run(
        () -> {
          assertThatThrownBy(
                  () ->
                      inner.run(
                          () -> {
                            throw failure;
                          }))
              .isSameAs(failure);
          assertThat(Call.current()).isSameAs(outer);
          return null;
        });

    assertThat(Call.current()).isNull();
  }

  @Test
  void runPassesCheckedExceptionsThrough() {
    Exception checked = new Exception("checked");

    assertThatThrownBy(
            () ->
                call("p")
                    .run(
                        () -> {
                          throw checked;
                        }))
        .isSameAs(checked);
    assertThat(Call.current()).isNull();
  }

  @Test
  void wrapCarriesTheCallToAnotherThreadAndRestoresThatThread() throws Exception {
    Call call = call("p");
    AtomicReference<Call> seenInTask = new AtomicReference<>();

    Runnable task = call.wrap(() -> seenInTask.set(Call.current()));
    executor.submit(task).get(5, TimeUnit.SECONDS);
    Call afterwards = executor.submit(Call::current).get(5, TimeUnit.SECONDS);

    assertThat(seenInTask).hasValue(call);
    assertThat(afterwards).isNull();
    assertThat(Call.current()).isNull();
  }

  @Test
  void wrapRestoresTheCallThatWasCurrentWhereItRuns() throws Exception {
    Call outer = call("outer");
    Call inner = call("inner");
    List<Call> seen = new ArrayList<>();
    Runnable wrapped = inner.wrap(() -> seen.add(Call.current()));

    outer.run(
        () -> {
          wrapped.run();
          seen.add(Call.current());
          return null;
        });

    assertThat(seen).containsExactly(inner, outer);
  }

  @Test
  void wrapRestoresWhenTheTaskThrows() throws Exception {
    Call outer = call("outer");
    Runnable failing =
        call("inner")
            .wrap(
                () -> {
                  throw new IllegalStateException("boom");
                });

    outer.run(
        () -> {
          assertThatThrownBy(failing::run).hasMessage("boom");
          assertThat(Call.current()).isSameAs(outer);
          return null;
        });
    assertThatThrownBy(failing::run).hasMessage("boom");
    assertThat(Call.current()).isNull();
  }

  @Test
  void wrapCapturesTheCallNotTheThreadState() throws Exception {
    Call call = call("p");
    Runnable wrapped = call.wrap(() -> assertThat(Call.current()).isSameAs(call));

    CompletableFuture.runAsync(wrapped, executor).get(5, TimeUnit.SECONDS);
    wrapped.run();
  }

  @Test
  void wrapRejectsNull() {
    assertThatThrownBy(() -> call("p").wrap(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void exposesTheMeta() {
    Call call = call("echo");

    assertThat(call.meta().procedure()).isEqualTo("echo");
    assertThat(call.header("x-trace")).isEqualTo("t1");
    assertThat(call.header("X-TRACE")).isEqualTo("t1");
    assertThat(call.header("missing")).isNull();
    assertThat(call.deadline()).isSameAs(call.meta().deadline());
    assertThat(new Call(RequestMeta.builder().build()).deadline()).isNull();
    assertThatThrownBy(() -> new Call(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void responseHeadersAreSnapshots() {
    Call call = call("p");
    assertThat(call.responseHeaders().isEmpty()).isTrue();

    call.setResponseHeader("X-A", "1");
    Headers first = call.responseHeaders();
    call.setResponseHeader("x-a", "2");
    call.setResponseHeader("X-B", "3");
    Headers second = call.responseHeaders();

    assertThat(first.asMap()).containsExactly(org.assertj.core.api.Assertions.entry("x-a", "1"));
    assertThat(second.get("X-A")).isEqualTo("2");
    assertThat(second.get("x-b")).isEqualTo("3");
  }

  @Test
  void notCancelledAtFirst() {
    Call call = call("p");

    assertThat(call.isCancelled()).isFalse();
    assertThat(call.cancellation()).isNull();
  }

  @Test
  void cancelRunsListenersOnce() {
    Call call = call("p");
    AtomicInteger a = new AtomicInteger();
    AtomicInteger b = new AtomicInteger();
    call.onCancel(a::incrementAndGet);
    call.onCancel(b::incrementAndGet);

    call.cancel();
    call.cancel();
    call.cancel(YarpcException.of(Code.DEADLINE_EXCEEDED, "late"));

    assertThat(a).hasValue(1);
    assertThat(b).hasValue(1);
    assertThat(call.isCancelled()).isTrue();
  }

  @Test
  void listenersRunInRegistrationOrder() {
    Call call = call("p");
    List<String> order = new ArrayList<>();
    call.onCancel(() -> order.add("first"));
    call.onCancel(() -> order.add("second"));
    call.onCancel(() -> order.add("third"));

    call.cancel();

    assertThat(order).containsExactly("first", "second", "third");
  }

  @Test
  void aLateListenerRunsImmediately() throws Exception {
    Call call = call("p");
    call.cancel();
    AtomicInteger runs = new AtomicInteger();

    AutoCloseable handle = call.onCancel(runs::incrementAndGet);

    assertThat(runs).hasValue(1);
    handle.close(); // harmless
    call.cancel();
    assertThat(runs).hasValue(1);
  }

  @Test
  void aRemovedListenerDoesNotRun() throws Exception {
    Call call = call("p");
    AtomicInteger removed = new AtomicInteger();
    AtomicInteger kept = new AtomicInteger();
    AutoCloseable handle = call.onCancel(removed::incrementAndGet);
    call.onCancel(kept::incrementAndGet);

    handle.close();
    call.cancel();

    assertThat(removed).hasValue(0);
    assertThat(kept).hasValue(1);
  }

  @Test
  void aFailingListenerDoesNotStopTheOthers() {
    Call call = call("p");
    AtomicInteger after = new AtomicInteger();
    call.onCancel(
        () -> {
          throw new IllegalStateException("listener failed");
        });
    call.onCancel(after::incrementAndGet);

    call.cancel();

    assertThat(after).hasValue(1);
    assertThat(call.isCancelled()).isTrue();
  }

  @Test
  void firstReasonWins() {
    Call call = call("p");
    YarpcException deadline = YarpcException.of(Code.DEADLINE_EXCEEDED, "deadline passed");

    call.cancel(deadline);
    call.cancel();
    call.cancel(YarpcException.of(Code.CANCELLED, "later"));

    assertThat(call.cancellation()).isSameAs(deadline);
  }

  @Test
  void defaultCancellationNamesTheCall() {
    Call call = call("echo");

    call.cancel();

    assertThat(call.cancellation().code()).isSameAs(Code.CANCELLED);
    assertThat(call.cancellation().getMessage())
        .isEqualTo(
            "call to procedure \"echo\" of service \"callee-svc\" from caller \"caller-svc\" was cancelled");
  }

  @Test
  void cancelRejectsNullReason() {
    assertThatThrownBy(() -> call("p").cancel(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void onCancelRejectsNull() {
    assertThatThrownBy(() -> call("p").onCancel(null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void concurrentCancelsRunEachListenerOnceWithOneReason() throws Exception {
    for (int round = 0; round < 20; round++) {
      Call call = call("p");
      AtomicInteger runs = new AtomicInteger();
      call.onCancel(runs::incrementAndGet);
      int threads = 6;
      CyclicBarrier barrier = new CyclicBarrier(threads);
      CountDownLatch done = new CountDownLatch(threads);
      List<YarpcException> reasons = new ArrayList<>();
      for (int i = 0; i < threads; i++) {
        YarpcException reason = YarpcException.of(Code.CANCELLED, "reason %d", i);
        reasons.add(reason);
        new Thread(
                () -> {
                  try {
                    barrier.await(5, TimeUnit.SECONDS);
                    call.cancel(reason);
                    call.onCancel(runs::incrementAndGet); // late: runs at once
                  } catch (Exception e) {
                    throw new RuntimeException(e);
                  } finally {
                    done.countDown();
                  }
                })
            .start();
      }

      assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(runs).hasValue(1 + threads);
      assertThat(reasons).contains(call.cancellation());
    }
  }
}
