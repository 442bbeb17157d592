package io.yarpc.testing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.yarpc.Call;
import io.yarpc.ClientConfig;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.middleware.Middleware;
import io.yarpc.peer.Peer;
import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerLease;
import io.yarpc.peer.PeerSubscriber;
import io.yarpc.peer.PeerTransport;
import io.yarpc.retry.Backoff;
import io.yarpc.retry.RetryBudget;
import io.yarpc.retry.RetryMiddleware;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link RetryMiddleware} over a real transport on loopback: what is retried (a call refused before its
 * handler, a refused connection, an idempotent procedure's {@code unavailable}), what is not (a call that
 * reached its handler), the budget in an outage, the deadline, and the body sent again intact and
 * released once. A transport's test extends it, gives the constructor its {@link PeerTransportUnderTest},
 * and says whether its protocol tells a client that the server refused a call before its handler.
 *
 * <p>The client's peers are chosen in strict turn, whatever their status (a test chooser), so a dead peer
 * is chosen as surely as a live one. No test asserts on wall time.
 */
public abstract class RetrySuite {
  /** How long a test waits for a call. */
  protected static final long WAIT_SECONDS = 20;

  private static final String SERVICE = "retry-server";
  private static final String ECHO = "echo";

  private final List<Dispatcher> dispatchers = new ArrayList<>();
  private final BodyTracker tracker = new BodyTracker();

  private final PeerTransportUnderTest underTest;

  /** A suite over the ends of {@code underTest}. */
  protected RetrySuite(PeerTransportUnderTest underTest) {
    this.underTest = underTest;
  }

  /** The port a started inbound of {@link PeerTransportUnderTest#newInbound()} listens on. */
  protected int port(Inbound started) {
    return ((InetSocketAddress) started.listenAddress()).getPort();
  }

  /**
   * Whether a call the server's dispatcher refuses before its handler (here: a procedure at its
   * concurrency limit) reaches the client as {@linkplain YarpcException#unprocessed() unprocessed}: the
   * protocol has a signal for it (HTTP/2 {@code REFUSED_STREAM}, TChannel {@code busy}). Default true.
   */
  protected boolean signalsRefusal() {
    return true;
  }

  /**
   * A code a handler fails with that the wire does not turn into a retry-safe refusal; default {@code
   * unavailable}. (TChannel sends a handler's {@code unavailable} as {@code declined}, which the TChannel
   * protocol makes always retry-safe.)
   */
  protected Code handlerFailureCode() {
    return Code.UNAVAILABLE;
  }

  @AfterEach
  final void stopAll() throws Exception {
    for (int i = dispatchers.size() - 1; i >= 0; i--) {
      dispatchers.get(i).stop();
    }
    tracker.assertAllReleased();
    assertThat(tracker.violations()).isEmpty();
  }

  // -------------------------------------------------------------------------------------------------

  @Test
  void aRefusalBeforeTheHandlerIsRetriedForAnIdempotentProcedureWithTheBodyIntact()
      throws Exception {
    AtomicInteger handled = new AtomicInteger();
    List<byte[]> seen = new ArrayList<>();
    AtomicInteger refused = new AtomicInteger();
    Middleware<Request, Response> failTwice =
        (request, next) -> {
          synchronized (seen) {
            seen.add(request.body().toByteArray());
          }
          return refused.incrementAndGet() <= 2
              ? CompletableFuture.failedFuture(
                  YarpcException.of(Code.UNAVAILABLE, "not yet (before the handler)"))
              : next.handle(request);
        };
    int port = server(failTwice, echo(handled));
    ClientConfig client =
        client(retries().maxAttempts(3).idempotentProcedures(ECHO).build(), null, port);

    byte[] payload = new byte[100_000];
    Arrays.fill(payload, (byte) 'x');
    payload[0] = 'a';
    payload[payload.length - 1] = 'z';
    Response response =
        await(client.call(Request.of(meta(Duration.ofSeconds(10)), pooled(payload))));
    try {
      assertThat(response.body().toByteArray()).isEqualTo(payload);
    } finally {
      response.body().release();
    }
    assertThat(handled).as("the handler ran once").hasValue(1);
    assertThat(seen).hasSize(3).allSatisfy(bytes -> assertThat(bytes).isEqualTo(payload));
  }

  @Test
  void aCallThatReachedItsHandlerIsNotRetried() throws Exception {
    AtomicInteger handled = new AtomicInteger();
    int port =
        server(
            null,
            Procedure.builder("write")
                .unary(
                    request -> {
                      handled.incrementAndGet();
                      return CompletableFuture.failedFuture(
                          YarpcException.of(handlerFailureCode(), "failed while writing"));
                    })
                .build());
    ClientConfig client =
        client(retries().maxAttempts(5).idempotentProcedures(ECHO).build(), null, port);

    assertThatThrownBy(() -> await(client.call(request("write", "w"))))
        .isInstanceOfSatisfying(
            YarpcException.class,
            e -> {
              assertThat(e.code()).isEqualTo(handlerFailureCode());
              assertThat(e.unprocessed()).isFalse();
            });
    assertThat(handled).as("not idempotent: the handler ran once").hasValue(1);
  }

  @Test
  void retriesStayWithinTheBudgetInAnOutage() throws Exception {
    AtomicInteger attempts = new AtomicInteger();
    Middleware<Request, Response> outage =
        (request, next) -> {
          attempts.incrementAndGet();
          return CompletableFuture.failedFuture(YarpcException.of(Code.UNAVAILABLE, "outage"));
        };
    int port = server(outage, echo(new AtomicInteger()));
    RetryBudget budget =
        RetryBudget.builder()
            .percentCanRetry(0.1)
            .minRetriesPerSecond(0)
            .ttl(Duration.ofMinutes(1))
            .build();
    ClientConfig client =
        client(
            retries().maxAttempts(5).idempotentProcedures(ECHO).budget(budget).build(), null, port);

    int calls = 100;
    for (int i = 0; i < calls; i++) {
      assertThatThrownBy(() -> await(client.call(request(ECHO, "x"))))
          .isInstanceOfSatisfying(
              YarpcException.class, e -> assertThat(e.code()).isEqualTo(Code.UNAVAILABLE));
    }
    // 10 % of 100 calls: at most 10 retries, where 4 per call were allowed without the budget
    assertThat(attempts.get()).isGreaterThan(calls).isLessThanOrEqualTo(calls + 10);
  }

  @Test
  void aRefusedConnectionMovesToTheNextPeer() throws Exception {
    AtomicInteger handled = new AtomicInteger();
    int live = server(null, echo(handled, "write"));
    int dead = deadPort();
    ConcurrentLinkedQueue<YarpcException> failedAttempts = new ConcurrentLinkedQueue<>();
    ClientConfig client =
        client(
            retries().maxAttempts(2).build(), // "write" is not idempotent
            recordFailures(failedAttempts),
            dead,
            live);

    int calls = 4;
    for (int i = 0; i < calls; i++) {
      Response r = await(client.call(request("write", "payload " + i)));
      assertThat(new String(r.body().toByteArray(), UTF_8)).isEqualTo("payload " + i);
      r.body().release();
    }
    assertThat(handled).hasValue(calls);
    // the chooser takes turns: each call's first attempt went to the dead peer
    assertThat(failedAttempts)
        .hasSize(calls)
        .allSatisfy(
            e -> {
              assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
              assertThat(e.unprocessed()).as(e.getMessage()).isTrue();
            });
  }

  @Test
  void theServersRefusalBeforeTheHandlerMovesToTheNextPeer() throws Exception {
    assumeTrue(
        signalsRefusal(), "the protocol has no signal for a call refused before its handler");
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger handledBusy = new AtomicInteger();
    Procedure limited =
        Procedure.builder("write")
            .maxConcurrentCalls(1)
            .unary(
                request -> {
                  handledBusy.incrementAndGet();
                  return CompletableFuture.supplyAsync(
                      () -> {
                        try {
                          release.await(WAIT_SECONDS, TimeUnit.SECONDS);
                        } catch (InterruptedException e) {
                          Thread.currentThread().interrupt();
                        }
                        return Response.of(Body.empty());
                      });
                })
            .build();
    int busy = server(null, limited);
    AtomicInteger handled = new AtomicInteger();
    int live = server(null, echo(handled, "write"));
    try {
      // one call holds the busy server's only place
      ClientConfig holder = client(null, null, busy);
      CompletableFuture<Response> held = holder.call(request("write", "hold"));
      eventually(() -> handledBusy.get() == 1);

      ConcurrentLinkedQueue<YarpcException> failedAttempts = new ConcurrentLinkedQueue<>();
      ClientConfig client =
          client(retries().maxAttempts(2).build(), recordFailures(failedAttempts), busy, live);
      int calls = 4;
      for (int i = 0; i < calls; i++) {
        Response r = await(client.call(request("write", "w" + i)));
        assertThat(new String(r.body().toByteArray(), UTF_8)).isEqualTo("w" + i);
        r.body().release();
      }
      assertThat(handled).hasValue(calls);
      assertThat(handledBusy).as("the busy server ran no handler for them").hasValue(1);
      assertThat(failedAttempts)
          .hasSize(calls)
          .allSatisfy(e -> assertThat(e.unprocessed()).as(e.getMessage()).isTrue());
      release.countDown();
      await(held).body().release();
    } finally {
      release.countDown();
    }
  }

  @Test
  void everyAttemptEndsByTheCallsDeadline() throws Exception {
    Middleware<Request, Response> outage =
        (request, next) ->
            CompletableFuture.failedFuture(YarpcException.of(Code.UNAVAILABLE, "outage"));
    int port = server(outage, echo(new AtomicInteger()));
    List<Deadline> attemptDeadlines = new ArrayList<>();
    List<Long> attemptTtls = new ArrayList<>();
    Middleware<Request, Response> recordDeadlines =
        (request, next) -> {
          synchronized (attemptDeadlines) {
            attemptDeadlines.add(request.meta().deadline());
            attemptTtls.add(request.meta().deadline().remainingNanos());
          }
          return next.handle(request);
        };
    Duration perAttempt = Duration.ofMillis(150);
    ClientConfig client =
        client(
            retries()
                .maxAttempts(10)
                .idempotentProcedures(ECHO)
                .perAttemptTimeout(perAttempt)
                .backoff(Backoff.exponential(Duration.ofMillis(20), Duration.ofMillis(100)))
                .build(),
            recordDeadlines,
            port);

    RequestMeta meta = meta(Duration.ofMillis(400));
    assertThatThrownBy(() -> await(client.call(Request.of(meta, pooled("x".getBytes(UTF_8))))))
        .isInstanceOfSatisfying(
            YarpcException.class,
            e -> assertThat(e.code()).isIn(Code.UNAVAILABLE, Code.DEADLINE_EXCEEDED));
    synchronized (attemptDeadlines) {
      assertThat(attemptDeadlines).isNotEmpty().hasSizeLessThanOrEqualTo(10);
      assertThat(attemptTtls)
          .as("no attempt is given more than the per-attempt timeout")
          .allSatisfy(ttl -> assertThat(ttl).isLessThanOrEqualTo(perAttempt.toNanos()));
      assertThat(attemptDeadlines)
          .as("no attempt's deadline is later than the call's")
          .allSatisfy(d -> assertThat(d.compareTo(meta.deadline())).isLessThanOrEqualTo(0));
    }
  }

  @Test
  protected void aSlowAttemptIsAbandonedAndAnIdempotentCallRetried() throws Exception {
    AtomicInteger handled = new AtomicInteger();
    Procedure slowFirst =
        Procedure.builder(ECHO)
            .unary(
                request -> {
                  if (handled.incrementAndGet() == 1) {
                    // never answers: its call ends when the client gives up or its deadline passes
                    CompletableFuture<Response> never = new CompletableFuture<>();
                    Call call = Call.current();
                    call.onCancel(() -> never.completeExceptionally(call.cancellation()));
                    return never;
                  }
                  return CompletableFuture.completedFuture(
                      Response.of(Body.of(request.body().toByteArray())));
                })
            .build();
    int port = server(null, slowFirst);
    ClientConfig client =
        client(
            retries()
                .maxAttempts(2)
                .idempotentProcedures(ECHO)
                // long enough that a loaded machine's scheduling delays cannot time out the second,
                // answering attempt (300 ms did, about 1 run in 10 at load average 17 on 2 cores)
                .perAttemptTimeout(Duration.ofSeconds(1))
                .build(),
            null,
            port);

    Response r =
        await(
            client.call(Request.of(meta(Duration.ofSeconds(15)), pooled("again".getBytes(UTF_8)))));
    assertThat(new String(r.body().toByteArray(), UTF_8)).isEqualTo("again");
    r.body().release();
    assertThat(handled).as("idempotent: ran again after the slow attempt").hasValue(2);
  }

  // -------------------------------------------------------------------------------------------------

  private static RetryMiddleware.Builder retries() {
    return RetryMiddleware.builder()
        .backoff(Backoff.exponential(Duration.ofMillis(1), Duration.ofMillis(5)));
  }

  private static Procedure echo(AtomicInteger handled) {
    return echo(handled, ECHO);
  }

  private static Procedure echo(AtomicInteger handled, String name) {
    return Procedure.builder(name)
        .unary(
            request -> {
              handled.incrementAndGet();
              return CompletableFuture.completedFuture(
                  Response.of(Body.of(request.body().toByteArray())));
            })
        .build();
  }

  /** Starts a server dispatcher with {@code procedures} (and "write" echoing, unless given); its port. */
  private int server(Middleware<Request, Response> inbound, Procedure... procedures) {
    Inbound in = underTest.newInbound();
    Dispatcher.Builder b = Dispatcher.builder(SERVICE).inbound(in);
    if (inbound != null) {
      b.unaryInboundMiddleware(inbound);
    }
    Dispatcher d = b.build();
    List<Procedure> list = new ArrayList<>(List.of(procedures));
    if (list.stream().noneMatch(p -> p.name().equals("write"))) {
      list.add(echo(new AtomicInteger(), "write"));
    }
    d.register(list);
    d.start();
    dispatchers.add(d);
    return port(in);
  }

  /** A started client dispatcher calling {@code ports} in turn, through {@code retry} then {@code inner}. */
  private ClientConfig client(
      RetryMiddleware retry, Middleware<Request, Response> inner, int... ports) {
    PeerTransport transport = underTest.newClientTransport();
    List<String> peers = new ArrayList<>();
    for (int p : ports) {
      peers.add("127.0.0.1:" + p);
    }
    Dispatcher.Builder b =
        Dispatcher.builder("retry-client")
            .outbound(
                SERVICE,
                Outbounds.unary(underTest.outbound(transport, new TakingTurns(transport, peers))));
    List<Middleware<Request, Response>> chain = new ArrayList<>();
    if (retry != null) {
      chain.add(retry);
    }
    if (inner != null) {
      chain.add(inner);
    }
    @SuppressWarnings("unchecked")
    Middleware<Request, Response>[] array = chain.toArray(new Middleware[0]);
    Dispatcher d = b.unaryOutboundMiddleware(array).build();
    d.start();
    dispatchers.add(d);
    return d.clientConfig(SERVICE);
  }

  /** Inner middleware: records the error of every failed attempt. */
  private static Middleware<Request, Response> recordFailures(
      ConcurrentLinkedQueue<YarpcException> failures) {
    return (request, next) ->
        next.handle(request)
            .whenComplete(
                (r, e) -> {
                  if (e != null) {
                    failures.add(YarpcException.from(e));
                  }
                });
  }

  private RequestMeta meta(Duration timeout) {
    return meta(ECHO, timeout);
  }

  private static RequestMeta meta(String procedure, Duration timeout) {
    return RequestMeta.builder()
        .service(SERVICE)
        .procedure(procedure)
        .encoding("raw")
        .deadline(Deadline.after(timeout))
        .build();
  }

  private Request request(String procedure, String text) {
    return Request.of(
        meta(procedure, Duration.ofSeconds(10)),
        tracker.track(Body.of(text.getBytes(UTF_8)), text));
  }

  /** A body in pooled direct memory (which the leak detector watches), tracked for exactly-once release. */
  private Body pooled(byte[] bytes) {
    ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer(bytes.length);
    buf.writeBytes(bytes);
    return tracker.track(Body.ofBuffers(List.of(buf.nioBuffer()), buf::release), "pooled request");
  }

  /** A port of 127.0.0.1 where nothing listens: connections to it are refused. */
  private static int deadPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static <T> T await(CompletableFuture<T> f) throws Exception {
    try {
      return f.get(WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw YarpcException.from(e.getCause());
    }
  }

  private static void eventually(java.util.function.BooleanSupplier condition)
      throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("condition not met within " + WAIT_SECONDS + " s");
      }
      Thread.sleep(5);
    }
  }

  /**
   * Chooses its peers in strict turn, whatever their status, so that a test knows which peer each attempt
   * goes to.
   */
  private static final class TakingTurns extends AbstractLifecycle implements PeerChooser {
    private final PeerTransport transport;
    private final List<String> identifiers;
    private final PeerSubscriber subscriber = changed -> {};
    private final List<Peer> peers = new ArrayList<>();
    private final AtomicInteger next = new AtomicInteger();

    TakingTurns(PeerTransport transport, List<String> identifiers) {
      this.transport = transport;
      this.identifiers = identifiers;
    }

    @Override
    protected void doStart() {
      for (String id : identifiers) {
        peers.add(transport.retainPeer(id, subscriber));
      }
    }

    @Override
    protected void doStop() {
      for (String id : identifiers) {
        transport.releasePeer(id, subscriber);
      }
      peers.clear();
    }

    @Override
    public CompletableFuture<PeerLease> choose(RequestMeta meta) {
      Peer peer = peers.get(Math.floorMod(next.getAndIncrement(), peers.size()));
      return CompletableFuture.completedFuture(
          new PeerLease() {
            @Override
            public Peer peer() {
              return peer;
            }

            @Override
            public void finish(Throwable error) {}
          });
    }
  }
}
