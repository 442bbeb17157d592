package io.yarpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.UnaryOutbound;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The call path owns the deadline: when it passes, or the caller gives up, the transport's own future
 * is cancelled, also when an outbound middleware hands back a future of its own.
 */
class OutboundCancellationTest {
  /** An outbound whose calls never answer; it records the futures it returned. */
  private static final class SilentOutbound implements UnaryOutbound {
    final List<CompletableFuture<Response>> calls = new CopyOnWriteArrayList<>();

    @Override
    public CompletableFuture<Response> call(Request request) {
      request.body().release();
      CompletableFuture<Response> f = new CompletableFuture<>();
      calls.add(f);
      return f;
    }

    @Override
    public String transportName() {
      return "silent";
    }

    @Override
    public void start() {}

    @Override
    public void stop() {}

    @Override
    public boolean isRunning() {
      return true;
    }
  }

  private static Request request(Duration timeout) {
    return Request.of(
        RequestMeta.builder()
            .procedure("p")
            .encoding("raw")
            .deadline(Deadline.after(timeout))
            .build(),
        Body.of(new byte[] {1}));
  }

  private static YarpcException failure(CompletableFuture<?> f) throws Exception {
    try {
      f.get(10, TimeUnit.SECONDS);
      throw new AssertionError("expected a failure");
    } catch (ExecutionException e) {
      return YarpcException.from(e.getCause());
    }
  }

  @Test
  void theDeadlineCancelsTheTransportsFutureThroughAMiddlewareThatMakesItsOwn() throws Exception {
    SilentOutbound out = new SilentOutbound();
    Dispatcher client =
        Dispatcher.builder("client")
            .outbound("svc", Outbounds.unary(out))
            .unaryOutboundMiddleware((r, next) -> next.handle(r).thenApply(x -> x)) // a new future
            .build();
    client.start();
    try {
      YarpcException e = failure(client.clientConfig("svc").call(request(Duration.ofMillis(50))));
      assertThat(e.code()).isEqualTo(Code.DEADLINE_EXCEEDED);
      assertThat(out.calls).hasSize(1);
      // the caller's future completes first (with deadline-exceeded), then the exchange is stopped
      for (int i = 0; i < 500 && !out.calls.get(0).isCancelled(); i++) {
        Thread.sleep(10);
      }
      assertThat(out.calls.get(0).isCancelled()).as("the exchange was told to stop").isTrue();
    } finally {
      client.stop();
    }
  }

  /**
   * A middleware's {@code whenComplete} action on the transport's future runs when the deadline stops the
   * exchange: the transport's future is cancelled before the middleware's own.
   */
  @Test
  void theDeadlineRunsAMiddlewaresCompletionAction() throws Exception {
    SilentOutbound out = new SilentOutbound();
    CompletableFuture<Throwable> seen = new CompletableFuture<>();
    Dispatcher client =
        Dispatcher.builder("client")
            .outbound("svc", Outbounds.unary(out))
            .unaryOutboundMiddleware(
                (r, next) -> next.handle(r).whenComplete((response, error) -> seen.complete(error)))
            .build();
    client.start();
    try {
      YarpcException e = failure(client.clientConfig("svc").call(request(Duration.ofMillis(50))));
      assertThat(e.code()).isEqualTo(Code.DEADLINE_EXCEEDED);
      assertThat(seen.get(10, TimeUnit.SECONDS)).isInstanceOf(CancellationException.class);
    } finally {
      client.stop();
    }
  }

  @Test
  void aCallerGivingUpCancelsTheTransportsFutureToo() throws Exception {
    SilentOutbound out = new SilentOutbound();
    ClientConfig direct = ClientConfig.of("client", "svc", Outbounds.unary(out));
    CompletableFuture<Response> call = direct.call(request(Duration.ofSeconds(30)));
    assertThat(call.cancel(false)).isTrue();
    assertThat(out.calls.get(0).isCancelled()).isTrue();
  }
}
