package io.yarpc.middleware;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.transport.Handler;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class MiddlewareTest {
  private final List<String> events = new ArrayList<>();

  private Handler<String, String> handler() {
    return input -> {
      events.add("handler(" + input + ")");
      return CompletableFuture.completedFuture("result:" + input);
    };
  }

  private Middleware<String, String> recording(String name) {
    return (input, next) -> {
      events.add(name + " in(" + input + ")");
      return next.handle(input + "+" + name)
          .thenApply(
              out -> {
                events.add(name + " out(" + out + ")");
                return out + "+" + name;
              });
    };
  }

  @Test
  void firstMiddlewareIsOutermost() {
    Handler<String, String> h =
        Middleware.apply(handler(), List.of(recording("a"), recording("b"), recording("c")));

    String result = h.handle("x").join();

    assertThat(events)
        .containsExactly(
            "a in(x)",
            "b in(x+a)",
            "c in(x+a+b)",
            "handler(x+a+b+c)",
            "c out(result:x+a+b+c)",
            "b out(result:x+a+b+c+c)",
            "a out(result:x+a+b+c+c+b)");
    assertThat(result).isEqualTo("result:x+a+b+c+c+b+a");
  }

  @Test
  void nullsAreSkipped() {
    Handler<String, String> h =
        Middleware.apply(
            handler(), Arrays.asList(null, recording("a"), null, recording("b"), null));

    assertThat(h.handle("x").join()).isEqualTo("result:x+a+b+b+a");
    assertThat(events)
        .containsExactly(
            "a in(x)",
            "b in(x+a)",
            "handler(x+a+b)",
            "b out(result:x+a+b)",
            "a out(result:x+a+b+b)");
  }

  @Test
  void emptyOrAllNullChainLeavesTheHandler() {
    Handler<String, String> handler = handler();

    assertThat(Middleware.apply(handler, List.of())).isSameAs(handler);
    assertThat(Middleware.apply(handler, Arrays.asList(null, null))).isSameAs(handler);
  }

  @Test
  void aMiddlewareMayAnswerWithoutCallingNext() {
    Middleware<String, String> reject =
        (input, next) ->
            CompletableFuture.failedFuture(new IllegalStateException("rejected " + input));

    Handler<String, String> h =
        Middleware.apply(handler(), List.of(recording("a"), reject, recording("b")));

    assertThat(h.handle("x")).isCompletedExceptionally();
    assertThatThrownBy(() -> h.handle("y").join()).hasRootCauseMessage("rejected y+a");
    assertThat(events).containsOnly("a in(x)", "a in(y)");
  }

  @Test
  void aMiddlewareMayCallNextMoreThanOnce() {
    Middleware<String, String> retryOnce =
        (input, next) -> next.handle(input).thenCompose(first -> next.handle(input + "!"));

    Handler<String, String> h = Middleware.apply(handler(), List.of(retryOnce));

    assertThat(h.handle("x").join()).isEqualTo("result:x!");
    assertThat(events).containsExactly("handler(x)", "handler(x!)");
  }

  @Test
  void theChainIsCopiedWhenApplied() {
    List<Middleware<String, String>> chain = new ArrayList<>(List.of(recording("a")));
    Handler<String, String> h = Middleware.apply(handler(), chain);

    chain.add(recording("late"));
    chain.set(0, recording("replaced"));

    assertThat(h.handle("x").join()).isEqualTo("result:x+a+a");
  }

  @Test
  void eachCallRunsTheWholeChainAgain() {
    Handler<String, String> h = Middleware.apply(handler(), List.of(recording("a")));

    h.handle("1").join();
    h.handle("2").join();

    assertThat(events)
        .containsExactly(
            "a in(1)",
            "handler(1+a)",
            "a out(result:1+a)",
            "a in(2)",
            "handler(2+a)",
            "a out(result:2+a)");
  }

  @Test
  void chainComposesInTheSameOrder() {
    Middleware<String, String> combined = Middleware.chain(recording("a"), null, recording("b"));

    Handler<String, String> h = Middleware.apply(handler(), List.of(recording("outer"), combined));

    assertThat(h.handle("x").join()).isEqualTo("result:x+outer+a+b+b+a+outer");
    assertThat(events).startsWith("outer in(x)", "a in(x+outer)", "b in(x+outer+a)");
  }

  @Test
  void emptyChainJustCallsNext() {
    Middleware<String, String> none = Middleware.chain();

    assertThat(none.handle("x", handler()).join()).isEqualTo("result:x");
  }

  @Test
  void nullHandlerOrChainIsRejected() {
    assertThatThrownBy(() -> Middleware.apply(null, List.<Middleware<String, String>>of()))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("handler");
    assertThatThrownBy(() -> Middleware.apply(handler(), null))
        .isInstanceOf(NullPointerException.class);
  }
}
