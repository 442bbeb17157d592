package io.yarpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.middleware.Middleware;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Handler;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.Router;
import io.yarpc.transport.Transport;
import io.yarpc.transport.UnaryOutbound;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class DispatcherTest {
  private final List<Dispatcher> toStop = new ArrayList<>();

  @AfterEach
  void stopAll() {
    toStop.forEach(Dispatcher::stop);
  }

  private Dispatcher started(Dispatcher d) {
    toStop.add(d);
    d.start();
    return d;
  }

  private static Request request(String procedure, String body, Duration timeout) {
    return Request.of(
        RequestMeta.builder()
            .procedure(procedure)
            .encoding("raw")
            .deadline(timeout == null ? null : Deadline.after(timeout))
            .build(),
        body(body));
  }

  private static Body body(String s) {
    return Body.of(s.getBytes(StandardCharsets.UTF_8));
  }

  private static String text(Response r) {
    try (Body b = r.body()) {
      return new String(b.toByteArray(), StandardCharsets.UTF_8);
    }
  }

  private static YarpcException failure(CompletableFuture<?> f) {
    try {
      f.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return YarpcException.from(e.getCause());
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    throw new AssertionError("expected a failure");
  }

  private static Procedure echo(String name) {
    return Procedure.builder(name)
        .unary(
            req ->
                CompletableFuture.completedFuture(Response.of(Body.of(req.body().toByteArray()))))
        .build();
  }

  /** A server and a client dispatcher joined by a loopback. */
  private final class Pair {
    final LoopbackOutbound loop = new LoopbackOutbound();
    final Dispatcher server;
    final Dispatcher client;

    Pair(Dispatcher.Builder serverBuilder, Dispatcher.Builder clientBuilder) {
      server = started(serverBuilder.inbound(loop).build());
      client =
          started(
              clientBuilder
                  .outbound("server", Outbounds.builder().unary(loop).oneway(loop).build())
                  .build());
    }

    Pair() {
      this(
          Dispatcher.builder("server").shutdownGracePeriod(Duration.ofMillis(100)),
          Dispatcher.builder("client"));
    }

    ClientConfig cc() {
      return client.clientConfig("server");
    }
  }

  // ---- lifecycle ----

  private static final class Recorded extends AbstractLifecycle
      implements Inbound, UnaryOutbound, Transport {
    private final String name;
    private final List<String> log;
    private final List<Transport> transports;
    private final boolean failStart;

    Recorded(String name, List<String> log, boolean failStart, Transport... transports) {
      this.name = name;
      this.log = log;
      this.failStart = failStart;
      this.transports = List.of(transports);
    }

    @Override
    protected void doStart() {
      if (failStart) {
        throw new IllegalStateException(name + " refuses to start");
      }
      log.add("start " + name);
    }

    @Override
    protected void doStop() {
      log.add("stop " + name);
    }

    @Override
    public List<Transport> transports() {
      return transports;
    }

    @Override
    public String transportName() {
      return name;
    }

    @Override
    public void setRouter(Router router) {}

    @Override
    public void beginDrain() {
      log.add("drain " + name);
    }

    @Override
    public CompletableFuture<Response> call(Request request) {
      return CompletableFuture.failedFuture(new UnsupportedOperationException());
    }
  }

  @Test
  void startsTransportsThenOutboundsThenInboundsAndStopsInReverseOnce() {
    List<String> log = Collections.synchronizedList(new ArrayList<>());
    Recorded transport = new Recorded("transport", log, false);
    Recorded out = new Recorded("outbound", log, false, transport);
    Recorded in = new Recorded("inbound", log, false, transport);
    Dispatcher d =
        Dispatcher.builder("svc")
            .inbound(in)
            .outbound("a", Outbounds.unary(out))
            .outbound("b", Outbounds.unary(out))
            .build();
    d.start();
    d.start();
    assertThat(d.isRunning()).isTrue();
    d.stop();
    d.stop();
    assertThat(d.isRunning()).isFalse();
    assertThat(log)
        .containsExactly(
            "start transport",
            "start outbound",
            "start inbound",
            "drain inbound",
            "stop inbound",
            "stop outbound",
            "stop transport");
  }

  @Test
  void stopTellsEveryInboundTheDrainBeginsBeforeWaitingForCallsInFlight() throws Exception {
    List<String> log = Collections.synchronizedList(new ArrayList<>());
    Recorded a = new Recorded("a", log, false);
    Recorded b = new Recorded("b", log, false);
    CompletableFuture<Response> gate = new CompletableFuture<>();
    CountDownLatch entered = new CountDownLatch(1);
    Dispatcher d =
        Dispatcher.builder("svc").inbound(a, b).shutdownGracePeriod(Duration.ofSeconds(20)).build();
    d.register(
        Procedure.builder("gated")
            .unary(
                req -> {
                  entered.countDown();
                  return gate;
                })
            .build());
    d.start();
    RequestMeta meta =
        RequestMeta.builder()
            .caller("c")
            .service("svc")
            .procedure("gated")
            .encoding("raw")
            .deadline(Deadline.after(Duration.ofSeconds(30)))
            .build();
    CompletableFuture<Response> inFlight =
        d.router().choose(meta).unary().handle(Request.of(meta, Body.empty()));
    assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();

    CompletableFuture<Void> stopping = CompletableFuture.runAsync(d::stop);
    for (int i = 0; i < 1000 && !log.contains("drain b"); i++) {
      Thread.sleep(5);
    }
    // both inbounds heard of the drain while the call is still in flight, and neither was stopped
    // yet
    assertThat(log).containsExactly("start a", "start b", "drain a", "drain b");
    assertThat(stopping).isNotDone();
    gate.complete(Response.of(body("done")));
    assertThat(text(inFlight.get(10, TimeUnit.SECONDS))).isEqualTo("done");
    stopping.get(10, TimeUnit.SECONDS);
    assertThat(log).containsExactly("start a", "start b", "drain a", "drain b", "stop b", "stop a");
  }

  @Test
  void aDispatcherThatNeverStartedDoesNotDrainItsInbounds() {
    List<String> log = Collections.synchronizedList(new ArrayList<>());
    Dispatcher d = Dispatcher.builder("svc").inbound(new Recorded("in", log, false)).build();
    d.stop();
    assertThat(log).isEmpty();
  }

  @Test
  void failedStartStopsWhatWasStartedInReverse() {
    List<String> log = Collections.synchronizedList(new ArrayList<>());
    Recorded transport = new Recorded("transport", log, false);
    Recorded out = new Recorded("outbound", log, false, transport);
    Recorded in = new Recorded("inbound", log, true, transport);
    Dispatcher d =
        Dispatcher.builder("svc").inbound(in).outbound("a", Outbounds.unary(out)).build();
    assertThatThrownBy(d::start).hasMessageContaining("inbound refuses to start");
    // the failing inbound cleans up after itself, then the dispatcher stops what had started
    assertThat(log)
        .containsExactly(
            "start transport", "start outbound", "stop inbound", "stop outbound", "stop transport");
    assertThat(d.isRunning()).isFalse();
  }

  @Test
  void serviceNamesAreValidatedLikeYarpcGo() {
    for (String ok : List.of("ab", "keyvalue", "my_service-2")) {
      Dispatcher.validateServiceName(ok);
    }
    for (String bad :
        List.of(
            "a",
            "",
            "1abc",
            "Abc",
            "a--b",
            "abc-",
            "a.b",
            "svc-123e4567-e89b-12d3-a456-426614174000")) {
      assertThatThrownBy(() -> Dispatcher.builder(bad))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("invalid service name");
    }
  }

  // ---- calls ----

  @Test
  void unaryRoundTripRunsOnTheHandlerExecutorNotTheCallerThread() throws Exception {
    AtomicReference<String> thread = new AtomicReference<>();
    Pair p = new Pair();
    p.server.register(
        Procedure.builder("who")
            .unary(
                req -> {
                  thread.set(Thread.currentThread().getName());
                  return CompletableFuture.completedFuture(Response.of(body("me")));
                })
            .build());
    Response r = p.cc().call(request("who", "", Duration.ofSeconds(5))).get(10, TimeUnit.SECONDS);
    assertThat(text(r)).isEqualTo("me");
    assertThat(thread.get()).startsWith("yarpc-server-handler-");
  }

  @Test
  void nonBlockingProceduresRunOnTheTransportThread() throws Exception {
    AtomicReference<Thread> thread = new AtomicReference<>();
    Pair p = new Pair();
    p.server.register(
        Procedure.builder("direct")
            .nonBlocking(true)
            .unary(
                req -> {
                  thread.set(Thread.currentThread());
                  return CompletableFuture.completedFuture(Response.of(Body.empty()));
                })
            .build());
    p.cc()
        .call(request("direct", "", Duration.ofSeconds(5)))
        .get(10, TimeUnit.SECONDS)
        .body()
        .release();
    assertThat(thread.get()).isSameAs(Thread.currentThread());
  }

  @Test
  void callerAndServiceAreFilledFromTheClientConfig() throws Exception {
    AtomicReference<RequestMeta> seen = new AtomicReference<>();
    Pair p = new Pair();
    p.server.register(
        Procedure.builder("meta")
            .unary(
                req -> {
                  seen.set(Call.current().meta());
                  return CompletableFuture.completedFuture(Response.of(Body.empty()));
                })
            .build());
    p.cc()
        .call(request("meta", "", Duration.ofSeconds(5)))
        .get(10, TimeUnit.SECONDS)
        .body()
        .release();
    assertThat(seen.get().caller()).isEqualTo("client");
    assertThat(seen.get().service()).isEqualTo("server");
    assertThat(seen.get().transport()).isEqualTo("loopback");
  }

  @Test
  void handlerExceptionBecomesUnknownWithYarpcMessage() {
    Pair p = new Pair();
    p.server.register(
        Procedure.builder("boom")
            .unary(
                req -> {
                  throw new IllegalStateException("boom");
                })
            .build());
    YarpcException e = failure(p.cc().call(request("boom", "", Duration.ofSeconds(5))));
    assertThat(e.code()).isEqualTo(Code.UNKNOWN);
    assertThat(e.getMessage())
        .isEqualTo(
            "error for service \"server\" and procedure \"boom\": unexpected error (the server"
                + " logged it)");
  }

  @Test
  void aProcedureAtItsConcurrencyLimitRefusesTheNextCallAtOnceAndOthersAreUnaffected()
      throws Exception {
    Pair p = new Pair();
    CountDownLatch entered = new CountDownLatch(2);
    CompletableFuture<Void> release = new CompletableFuture<>();
    p.server.register(
        Procedure.builder("slow")
            .maxConcurrentCalls(2)
            .unary(
                req -> {
                  req.body().release();
                  entered.countDown();
                  return release.thenApply(v -> Response.of(Body.empty()));
                })
            .build());
    p.server.register(
        Procedure.builder("fast")
            .unary(
                req -> {
                  req.body().release();
                  return CompletableFuture.completedFuture(Response.of(Body.empty()));
                })
            .build());
    CompletableFuture<Response> first = p.cc().call(request("slow", "1", Duration.ofSeconds(10)));
    CompletableFuture<Response> second = p.cc().call(request("slow", "2", Duration.ofSeconds(10)));
    assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();

    YarpcException refused = failure(p.cc().call(request("slow", "3", Duration.ofSeconds(10))));
    assertThat(refused.code()).isEqualTo(Code.RESOURCE_EXHAUSTED);
    assertThat(refused.getMessage())
        .isEqualTo(
            "procedure \"slow\" of service \"server\" is at its limit of 2 concurrent calls; try"
                + " again later");
    // another procedure is not held up by this one's limit
    p.cc()
        .call(request("fast", "f", Duration.ofSeconds(10)))
        .get(10, TimeUnit.SECONDS)
        .body()
        .release();

    release.complete(null);
    first.get(10, TimeUnit.SECONDS).body().release();
    second.get(10, TimeUnit.SECONDS).body().release();
    // the places were given back
    CompletableFuture<Response> again = p.cc().call(request("slow", "4", Duration.ofSeconds(10)));
    again.get(10, TimeUnit.SECONDS).body().release();
  }

  @Test
  void unexpectedExceptionsAreLoggedAtMostOnceASecond() throws Exception {
    Pair p = new Pair();
    p.server.register(
        Procedure.builder("boom")
            .unary(
                req -> {
                  throw new IllegalStateException("boom");
                })
            .build());
    java.io.PrintStream err = System.err;
    java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
    long start = System.nanoTime();
    System.setErr(new java.io.PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      for (int i = 0; i < 200; i++) {
        failure(p.cc().call(request("boom", "", Duration.ofSeconds(5))));
      }
    } finally {
      System.setErr(err);
    }
    long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
    String log = captured.toString(StandardCharsets.UTF_8);
    int logged = log.split("with an unexpected exception", -1).length - 1;
    // one line (with its stack trace) a second, not one per failed call
    assertThat(logged).isBetween(1, (int) seconds + 1);
    assertThat(log).contains("java.lang.IllegalStateException: boom");
  }

  @Test
  void aVerboseDispatcherSendsTheUnexpectedExceptionsText() {
    Pair p =
        new Pair(
            Dispatcher.builder("server")
                .shutdownGracePeriod(Duration.ofMillis(100))
                .verboseErrors(true),
            Dispatcher.builder("client"));
    p.server.register(
        Procedure.builder("boom")
            .unary(
                req -> {
                  throw new IllegalStateException("boom");
                })
            .build());
    YarpcException e = failure(p.cc().call(request("boom", "", Duration.ofSeconds(5))));
    assertThat(e.code()).isEqualTo(Code.UNKNOWN);
    assertThat(e.getMessage())
        .isEqualTo("error for service \"server\" and procedure \"boom\": boom");
  }

  @Test
  void aYarpcExceptionAHandlerThrowsIsSentAsItIs() {
    Pair p = new Pair();
    p.server.register(
        Procedure.builder("nope")
            .unary(
                req -> {
                  throw YarpcException.of(Code.NOT_FOUND, "no such key \"k\"");
                })
            .build());
    YarpcException e = failure(p.cc().call(request("nope", "", Duration.ofSeconds(5))));
    assertThat(e.code()).isEqualTo(Code.NOT_FOUND);
    assertThat(e.getMessage()).isEqualTo("no such key \"k\"");
  }

  @Test
  void yarpcExceptionsPassThroughUnchanged() {
    Pair p = new Pair();
    YarpcException thrown = YarpcException.of(Code.NOT_FOUND, "no such key").withName("Missing");
    p.server.register(
        Procedure.builder("nf").unary(req -> CompletableFuture.failedFuture(thrown)).build());
    assertThat(failure(p.cc().call(request("nf", "", Duration.ofSeconds(5))))).isEqualTo(thrown);
  }

  @Test
  void missingTtlIsRejectedOnBothSides() throws Exception {
    Pair p = new Pair();
    p.server.register(echo("echo"));
    Body b = body("x");
    YarpcException client =
        failure(
            p.cc()
                .call(
                    Request.of(
                        RequestMeta.builder().procedure("echo").encoding("raw").build(), b)));
    assertThat(client.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(client.getMessage())
        .isEqualTo(
            "missing TTL: the call to procedure \"echo\" of service \"server\" has no deadline; set"
                + " one with CallOptions.timeout(...) (a stub: withDeadlineAfter), or make the call"
                + " from inside a handler, whose deadline it inherits");
    assertThat(b.isReleased()).isTrue();

    Body b2 = body("x");
    CompletableFuture<Response> server =
        p.server
            .router()
            .choose(
                RequestMeta.builder()
                    .caller("c")
                    .service("server")
                    .procedure("echo")
                    .encoding("raw")
                    .build())
            .unary()
            .handle(
                Request.of(
                    RequestMeta.builder()
                        .caller("c")
                        .service("server")
                        .procedure("echo")
                        .encoding("raw")
                        .build(),
                    b2));
    assertThat(failure(server).getMessage()).isEqualTo("missing TTL");
    assertThat(b2.isReleased()).isTrue();
  }

  @Test
  void handlerOutlivingItsDeadlineYieldsDeadlineExceededAndItsCallIsCancelled() throws Exception {
    CountDownLatch cancelled = new CountDownLatch(1);
    CountDownLatch entered = new CountDownLatch(1);
    Pair p = new Pair();
    p.server.register(
        Procedure.builder("slow")
            .unary(
                req -> {
                  Call.current().onCancel(cancelled::countDown);
                  entered.countDown();
                  return new CompletableFuture<>(); // never completes by itself
                })
            .build());
    Body b = body("payload");
    // Call the server's handler directly so the server-side timeout (not the client's) is observed.
    RequestMeta meta = slowCall(Duration.ofMillis(400));
    CompletableFuture<Response> f =
        p.server.router().choose(meta).unary().handle(Request.of(meta, b));
    YarpcException e = failure(f);
    assertThat(e.code()).isEqualTo(Code.DEADLINE_EXCEEDED);
    assertThat(e.getMessage())
        .startsWith(
            "call to procedure \"slow\" of service \"server\" from caller \"c\" timed out after ");
    assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(cancelled.await(10, TimeUnit.SECONDS)).isTrue();
  }

  /** A call from caller "c" to procedure "slow" of service "server", due {@code timeout} from now. */
  private static RequestMeta slowCall(Duration timeout) {
    return RequestMeta.builder()
        .caller("c")
        .service("server")
        .procedure("slow")
        .encoding("raw")
        .deadline(Deadline.after(timeout))
        .build();
  }

  @Test
  void aCallWhoseDeadlineHasAlreadyPassedTimesOutAfterZeroNotANegativeTime() throws Exception {
    Pair p = new Pair();
    p.server.register(Procedure.builder("slow").unary(req -> new CompletableFuture<>()).build());
    // as an HTTP request with Context-TTL-MS: 0 arrives: its deadline is behind it by the time the
    // dispatcher sees it
    RequestMeta meta = slowCall(Duration.ofMillis(-5));
    YarpcException e =
        failure(p.server.router().choose(meta).unary().handle(Request.of(meta, body("x"))));
    assertThat(e.code()).isEqualTo(Code.DEADLINE_EXCEEDED);
    assertThat(e.getMessage())
        .isEqualTo(
            "call to procedure \"slow\" of service \"server\" from caller \"c\" timed out after 0s");
  }

  @Test
  void aTransportCancellingTheHandlersFutureCancelsTheCall() throws Exception {
    CountDownLatch cancelled = new CountDownLatch(1);
    CountDownLatch entered = new CountDownLatch(1);
    AtomicReference<Call> seen = new AtomicReference<>();
    Pair p = new Pair();
    p.server.register(
        Procedure.builder("held")
            .unary(
                req -> {
                  seen.set(Call.current());
                  Call.current().onCancel(cancelled::countDown);
                  entered.countDown();
                  return new CompletableFuture<>(); // never completes by itself
                })
            .build());
    RequestMeta meta =
        RequestMeta.builder()
            .caller("c")
            .service("server")
            .procedure("held")
            .encoding("raw")
            .deadline(Deadline.after(Duration.ofSeconds(30)))
            .build();
    CompletableFuture<Response> f =
        p.server.router().choose(meta).unary().handle(Request.of(meta, body("x")));
    assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(f.cancel(false)).isTrue();
    assertThat(cancelled.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(seen.get().cancellation().code())
        .as("cancelled by the transport, long before its deadline")
        .isEqualTo(Code.CANCELLED);
  }

  @Test
  void aFinishedCallsDeadlineTimerKeepsNothingOfIt() throws Exception {
    Pair p = new Pair();
    p.server.register(
        Procedure.builder("ok")
            .unary(req -> CompletableFuture.completedFuture(Response.of(body("ok"))))
            .build());
    java.lang.ref.WeakReference<RequestMeta> meta = callWithAnHourToSpare(p);
    for (int i = 0; i < 50 && meta.get() != null; i++) {
      System.gc();
      Thread.sleep(10);
    }
    assertThat(meta.get())
        .as("the call's timer is still queued, due in an hour, but holds nothing of the call")
        .isNull();
  }

  /** Calls the server's "ok" directly with a deadline an hour away; a weak view of its metadata. */
  private static java.lang.ref.WeakReference<RequestMeta> callWithAnHourToSpare(Pair p)
      throws Exception {
    RequestMeta meta =
        RequestMeta.builder()
            .caller("c")
            .service("server")
            .procedure("ok")
            .encoding("raw")
            .deadline(Deadline.after(Duration.ofHours(1)))
            .build();
    CompletableFuture<Response> f =
        p.server.router().choose(meta).unary().handle(Request.of(meta, body("x")));
    assertThat(text(f.get(10, TimeUnit.SECONDS))).isEqualTo("ok");
    return new java.lang.ref.WeakReference<>(meta);
  }

  @Test
  void clientSideDeadlineFailsTheCallLocally() {
    Pair p = new Pair();
    p.server.register(Procedure.builder("never").unary(req -> new CompletableFuture<>()).build());
    YarpcException e = failure(p.cc().call(request("never", "", Duration.ofMillis(30))));
    assertThat(e.code()).isEqualTo(Code.DEADLINE_EXCEEDED);
    assertThat(e.getMessage()).contains("\"never\"");
  }

  @Test
  void requestBodyIsReleasedOnlyWhenTheHandlerCompletes() throws Exception {
    CompletableFuture<Response> gate = new CompletableFuture<>();
    AtomicReference<Body> seen = new AtomicReference<>();
    CountDownLatch entered = new CountDownLatch(1);
    Pair p = new Pair();
    p.server.register(
        Procedure.builder("gated")
            .unary(
                req -> {
                  seen.set(req.body());
                  entered.countDown();
                  return gate;
                })
            .build());
    CompletableFuture<Response> f = p.cc().call(request("gated", "abc", Duration.ofSeconds(10)));
    assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(seen.get().isReleased()).isFalse();
    gate.complete(Response.of(body("done")));
    assertThat(text(f.get(10, TimeUnit.SECONDS))).isEqualTo("done");
    assertThat(seen.get().isReleased()).isTrue();
  }

  @Test
  void lateResponseAfterTimeoutIsReleased() throws Exception {
    CompletableFuture<Response> gate = new CompletableFuture<>();
    Pair p = new Pair();
    p.server.register(Procedure.builder("late").unary(req -> gate).build());
    YarpcException e = failure(p.cc().call(request("late", "", Duration.ofMillis(30))));
    assertThat(e.code()).isEqualTo(Code.DEADLINE_EXCEEDED);
    Body late = body("too late");
    gate.complete(Response.of(late));
    // the client's deadline fired; on a loaded machine the server's may fire a little later, and
    // the
    // late answer then travels back before it is dropped: a bounded wait, not a race
    long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!late.isReleased() && System.nanoTime() < giveUp) {
      Thread.sleep(5);
    }
    assertThat(late.isReleased()).isTrue();
  }

  @Test
  void outboundCallsInsideAHandlerInheritDeadlineCallerProcedureAndCancellation() throws Exception {
    // server "front" calls server "back" from inside its handler, passing nothing by hand.
    LoopbackOutbound backLoop = new LoopbackOutbound();
    Dispatcher back =
        started(
            Dispatcher.builder("back")
                .inbound(backLoop)
                .shutdownGracePeriod(Duration.ofMillis(100))
                .build());
    AtomicReference<RequestMeta> backSaw = new AtomicReference<>();
    CountDownLatch backCancelled = new CountDownLatch(1);
    CountDownLatch backEntered = new CountDownLatch(1);
    back.register(
        Procedure.builder("inner")
            .unary(
                req -> {
                  backSaw.set(Call.current().meta());
                  Call.current().onCancel(backCancelled::countDown);
                  backEntered.countDown();
                  return new CompletableFuture<>();
                })
            .build());

    LoopbackOutbound frontLoop = new LoopbackOutbound();
    Dispatcher front =
        started(
            Dispatcher.builder("front")
                .inbound(frontLoop)
                .outbound("back", Outbounds.unary(backLoop))
                .build());
    ClientConfig toBack = front.clientConfig("back");
    front.register(
        Procedure.builder("outer")
            .unary(
                req ->
                    toBack.call(
                        Request.of(
                            RequestMeta.builder().procedure("inner").encoding("raw").build(),
                            Body.empty())))
            .build());

    RequestMeta meta =
        RequestMeta.builder()
            .caller("c")
            .service("front")
            .procedure("outer")
            .encoding("raw")
            .deadline(Deadline.after(Duration.ofSeconds(30)))
            .build();
    CompletableFuture<Response> outer =
        front.router().choose(meta).unary().handle(Request.of(meta, Body.empty()));
    assertThat(backEntered.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(backSaw.get().callerProcedure()).isEqualTo("outer");
    assertThat(backSaw.get().deadline()).isNotNull();
    assertThat(backSaw.get().deadline().timeRemaining())
        .isLessThanOrEqualTo(Duration.ofSeconds(30));
    // the caller of "outer" goes away: the nested call is cancelled too
    outer.cancel(false);
    assertThat(backCancelled.await(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void middlewareRunsInListOrderOnBothSidesWhicheverTheRegistrationTime() throws Exception {
    List<String> log = Collections.synchronizedList(new ArrayList<>());
    Middleware<Request, Response> in1 =
        (r, next) -> {
          log.add("in1");
          return next.handle(r);
        };
    Middleware<Request, Response> in2 =
        (r, next) -> {
          log.add("in2");
          return next.handle(r);
        };
    Middleware<Request, Response> out1 =
        (r, next) -> {
          log.add("out1");
          return next.handle(r);
        };
    Middleware<Request, Response> out2 =
        (r, next) -> {
          log.add("out2");
          return next.handle(r);
        };
    Pair p =
        new Pair(
            Dispatcher.builder("server").unaryInboundMiddleware(in1, in2),
            Dispatcher.builder("client").unaryOutboundMiddleware(out1, out2));
    p.server.register(echo("echo"));
    assertThat(
            text(
                p.cc()
                    .call(request("echo", "hi", Duration.ofSeconds(5)))
                    .get(10, TimeUnit.SECONDS)))
        .isEqualTo("hi");
    assertThat(log).containsExactly("out1", "out2", "in1", "in2");
  }

  @Test
  void middlewareCanShortCircuitAndOwnsTheBodyItKeeps() throws Exception {
    Middleware<Request, Response> deny =
        (r, next) -> {
          r.body().release();
          return CompletableFuture.failedFuture(YarpcException.of(Code.PERMISSION_DENIED, "nope"));
        };
    Pair p =
        new Pair(
            Dispatcher.builder("server").unaryInboundMiddleware(deny),
            Dispatcher.builder("client"));
    AtomicReference<Boolean> reached = new AtomicReference<>(false);
    p.server.register(
        Procedure.builder("x")
            .unary(
                req -> {
                  reached.set(true);
                  return CompletableFuture.completedFuture(Response.of(Body.empty()));
                })
            .build());
    Body b = body("secret");
    YarpcException e =
        failure(
            p.cc()
                .call(
                    Request.of(
                        RequestMeta.builder()
                            .procedure("x")
                            .encoding("raw")
                            .deadline(Deadline.after(Duration.ofSeconds(5)))
                            .build(),
                        b)));
    assertThat(e.code()).isEqualTo(Code.PERMISSION_DENIED);
    assertThat(reached.get()).isFalse();
    assertThat(b.isReleased()).isTrue();
  }

  @Test
  void onewayHandlersRunAfterTheAck() throws Exception {
    CompletableFuture<String> got = new CompletableFuture<>();
    Pair p = new Pair();
    p.server.register(
        Procedure.builder("fire")
            .oneway(
                req -> {
                  got.complete(new String(req.body().toByteArray(), StandardCharsets.UTF_8));
                  return CompletableFuture.completedFuture(null);
                })
            .build());
    p.cc()
        .callOneway(request("fire", "and forget", Duration.ofSeconds(5)))
        .get(10, TimeUnit.SECONDS);
    assertThat(got.get(10, TimeUnit.SECONDS)).isEqualTo("and forget");
  }

  @Test
  void gracefulStopFinishesInFlightCallsAndRefusesNewOnes() throws Exception {
    CompletableFuture<Response> gate = new CompletableFuture<>();
    CountDownLatch entered = new CountDownLatch(1);
    LoopbackOutbound loop = new LoopbackOutbound();
    Dispatcher server =
        Dispatcher.builder("server")
            .inbound(loop)
            .shutdownGracePeriod(Duration.ofSeconds(20))
            .build();
    server.register(
        Procedure.builder("gated")
            .unary(
                req -> {
                  entered.countDown();
                  return gate;
                })
            .build(),
        echo("echo"));
    server.start();
    RequestMeta meta =
        RequestMeta.builder()
            .caller("c")
            .service("server")
            .procedure("gated")
            .encoding("raw")
            .deadline(Deadline.after(Duration.ofSeconds(30)))
            .build();
    CompletableFuture<Response> inFlight =
        server.router().choose(meta).unary().handle(Request.of(meta, Body.empty()));
    assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();

    CompletableFuture<Void> stopping = CompletableFuture.runAsync(server::stop);
    // Wait until the dispatcher drains; a new call is refused with unavailable.
    YarpcException refused = null;
    for (int i = 0; i < 1000 && refused == null; i++) {
      RequestMeta m = meta.toBuilder().procedure("echo").build();
      CompletableFuture<Response> f =
          server.router().choose(m).unary().handle(Request.of(m, body("x")));
      if (f.isCompletedExceptionally()) {
        refused = failure(f);
      } else {
        f.get(10, TimeUnit.SECONDS).body().release();
        Thread.sleep(5);
      }
    }
    assertThat(refused).isNotNull();
    assertThat(refused.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(stopping).isNotDone();
    gate.complete(Response.of(body("finished")));
    assertThat(text(inFlight.get(10, TimeUnit.SECONDS))).isEqualTo("finished");
    stopping.get(10, TimeUnit.SECONDS);
    assertThat(server.isRunning()).isFalse();
  }

  @Test
  void unknownOutboundKeyAndMissingOutboundKind() {
    Pair p = new Pair();
    assertThatThrownBy(() -> p.client.clientConfig("nope"))
        .isInstanceOf(IllegalArgumentException.class);
    LoopbackOutbound loop = new LoopbackOutbound();
    Dispatcher d =
        started(Dispatcher.builder("client2").outbound("s", Outbounds.unary(loop)).build());
    Body b = body("x");
    YarpcException e =
        failure(
            d.clientConfig("s")
                .callOneway(
                    request("p", "x", Duration.ofSeconds(1))
                        .withMeta(RequestMeta.builder().procedure("p").encoding("raw").build())));
    assertThat(e.code()).isEqualTo(Code.UNIMPLEMENTED);
    b.release();
  }

  @Test
  void handlerReturningNullFutureIsAnError() {
    Pair p = new Pair();
    Handler<Request, Response> bad = req -> null;
    p.server.register(Procedure.builder("null").unary(bad).build());
    YarpcException e = failure(p.cc().call(request("null", "", Duration.ofSeconds(5))));
    assertThat(e.code()).isEqualTo(Code.INTERNAL);
    assertThat(e.getMessage()).isEqualTo("handler returned no future");
  }
}
