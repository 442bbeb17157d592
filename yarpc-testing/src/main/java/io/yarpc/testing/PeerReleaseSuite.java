package io.yarpc.testing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.peer.Peer;
import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerLease;
import io.yarpc.peer.PeerSubscriber;
import io.yarpc.peer.PeerTransport;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What a peer transport does when the last holder of a peer releases it (a peer list dropped the
 * address: a DNS or config update, a scale-down) while calls to it are under way, over a real transport on
 * loopback: the calls in flight finish with their answers, and the peer's connections close once the
 * calls are done, or once the last one's deadline has passed. This is the contract of {@link
 * io.yarpc.peer.AbstractPeer#close()}; gRPC's graceful channel shutdown and yarpc-go's TChannel and HTTP
 * peers behave so.
 *
 * <p>A transport's test extends it and gives the constructor its {@link PeerTransportUnderTest}. The client reaches
 * the server through a {@link TcpProxy}, which counts the connections still open. No test asserts on wall
 * time.
 */
public abstract class PeerReleaseSuite {
  /** How long a test waits for a call or a condition. */
  protected static final long WAIT_SECONDS = 20;

  private static final String SERVICE = "release-server";

  private final List<Dispatcher> dispatchers = new ArrayList<>();
  private final List<AutoCloseable> closeables = new ArrayList<>();
  private final CompletableFuture<Void> gate = new CompletableFuture<>();
  private final Semaphore entered = new Semaphore(0);

  private final PeerTransportUnderTest underTest;

  /** A suite over the ends of {@code underTest}. */
  protected PeerReleaseSuite(PeerTransportUnderTest underTest) {
    this.underTest = underTest;
  }

  @AfterEach
  final void stopAll() throws Exception {
    gate.complete(null); // a handler still waiting answers, so the server can stop
    for (int i = dispatchers.size() - 1; i >= 0; i--) {
      dispatchers.get(i).stop();
    }
    for (AutoCloseable c : closeables) {
      c.close();
    }
  }

  // -------------------------------------------------------------------------------------------------

  @Test
  void callsInFlightFinishWithTheirAnswersAfterTheirPeerIsReleased() throws Exception {
    Client client = client(server());
    List<CompletableFuture<Response>> calls = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      calls.add(client.call("slow", "call " + i, Duration.ofSeconds(WAIT_SECONDS)));
    }
    assertThat(entered.tryAcquire(3, WAIT_SECONDS, TimeUnit.SECONDS))
        .as("the three calls reached their handler")
        .isTrue();

    client.chooser.release();
    gate.complete(null);

    for (int i = 0; i < calls.size(); i++) {
      assertThat(text(await(calls.get(i))))
          .as("call %d, in flight when its peer was released", i)
          .isEqualTo("call " + i);
    }
    awaitConnectionsClosed(client, "the released peer's connections close once its calls are done");
  }

  /**
   * A call whose lease was taken before the release and sent after it is refused with {@code
   * unavailable}, marked unprocessed so a retry may send it elsewhere, and names the peer: core's one
   * rule ({@link io.yarpc.peer.AbstractPeer}). It leaves no connection open.
   */
  @Test
  void aCallSentThroughAReleasedPeerIsRefusedAsUnprocessed() throws Exception {
    Client client = client(server());
    assertThat(text(await(client.call("echo", "before", Duration.ofSeconds(WAIT_SECONDS)))))
        .isEqualTo("before");

    client.chooser.release();

    assertRefused(client, client.call("echo", "after", Duration.ofSeconds(WAIT_SECONDS)));
    awaitConnectionsClosed(client, "a released peer closes its connections");
  }

  /**
   * The race: the peer is released after core's check of the lease and before the transport starts the
   * call on it (for gRPC, before grpc-java's {@code newCall}, which would refuse the call on the shut-down
   * channel with an error not marked unprocessed). The transport still refuses it with core's error.
   */
  @Test
  void aPeerReleasedAfterCoresCheckStillRefusesTheCallAsUnprocessed() throws Exception {
    Client client = client(server());
    assertThat(text(await(client.call("echo", "before", Duration.ofSeconds(WAIT_SECONDS)))))
        .isEqualTo("before");

    client.chooser.releaseOnTheTransportsFirstLook = true;

    assertRefused(client, client.call("echo", "racing", Duration.ofSeconds(WAIT_SECONDS)));
    assertThat(client.chooser.released()).as("released during the call").isTrue();
    awaitConnectionsClosed(client, "a released peer closes its connections");
  }

  /**
   * A call waiting for its peer's connection to open when the peer is released either finishes with its
   * answer (it began: the connection opens for it and closes after it) or is refused with core's released
   * error (it had not begun): never cut short by the release. The proxy holds the connection's bytes
   * until after the release, so it is still opening then.
   */
  @Test
  void aCallWaitingForItsConnectionWhenThePeerIsReleasedFinishesOrIsRefused() throws Exception {
    Client client = client(server());
    client.proxy.blackHole();
    CompletableFuture<Response> waiting =
        client.call("echo", "waiting", Duration.ofSeconds(WAIT_SECONDS));
    eventually(() -> client.proxy.acceptedConnections() > 0, () -> "the client connects");

    client.chooser.release();
    client.proxy.forward();

    try {
      assertThat(text(await(waiting))).isEqualTo("waiting");
    } catch (YarpcException e) {
      assertThat(e.getMessage())
          .as("not an answer, so core's refusal: %s", e)
          .isEqualTo("peer " + client.proxy.hostPort() + " was released");
      assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
      assertThat(e.unprocessed()).isTrue();
    }
    awaitConnectionsClosed(client, "the released peer's connection closes once the call is over");
  }

  private static void assertRefused(Client client, CompletableFuture<Response> call) {
    assertThatThrownBy(() -> await(call))
        .isInstanceOfSatisfying(
            YarpcException.class,
            e -> {
              assertThat(e.code()).as("%s", e).isEqualTo(Code.UNAVAILABLE);
              assertThat(e.getMessage())
                  .isEqualTo("peer " + client.proxy.hostPort() + " was released");
              assertThat(e.unprocessed()).as("refused before it was sent: %s", e).isTrue();
            });
  }

  @Test
  void aCallPastItsDeadlineDoesNotKeepAReleasedPeersConnectionOpen() throws Exception {
    Client client = client(server());
    CompletableFuture<Response> stuck = client.call("slow", "stuck", Duration.ofSeconds(3));
    assertThat(entered.tryAcquire(1, WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();

    client.chooser.release();

    assertThatThrownBy(() -> await(stuck))
        .isInstanceOfSatisfying(
            YarpcException.class, e -> assertThat(e.code()).isEqualTo(Code.DEADLINE_EXCEEDED));
    awaitConnectionsClosed(
        client, "the released peer's connection closes once its last call is over");
  }

  // -------------------------------------------------------------------------------------------------

  /** A started server: {@code echo}, and {@code slow}, which answers its text once the gate opens. */
  private InetSocketAddress server() {
    Inbound in = underTest.newInbound();
    Dispatcher d = Dispatcher.builder(SERVICE).inbound(in).build();
    d.register(
        List.of(
            Procedure.builder("echo")
                .unary(request -> CompletableFuture.completedFuture(Response.of(copy(request))))
                .build(),
            Procedure.builder("slow")
                .unary(
                    request -> {
                      Body body = copy(request);
                      entered.release();
                      return gate.thenApply(v -> Response.of(body));
                    })
                .build()));
    d.start();
    dispatchers.add(d);
    return (InetSocketAddress) in.listenAddress();
  }

  private static Body copy(Request request) {
    return Body.of(request.body().toByteArray());
  }

  /** A started client dispatcher whose one peer is a proxy in front of {@code server}. */
  private Client client(InetSocketAddress server) throws Exception {
    TcpProxy proxy = TcpProxy.start(server);
    closeables.add(proxy);
    PeerTransport transport = underTest.newClientTransport();
    OnePeer chooser = new OnePeer(transport, proxy.hostPort());
    Dispatcher d =
        Dispatcher.builder("release-client")
            .outbound(SERVICE, Outbounds.unary(underTest.outbound(transport, chooser)))
            .build();
    d.start();
    dispatchers.add(d);
    return new Client(d, chooser, proxy);
  }

  private record Client(Dispatcher dispatcher, OnePeer chooser, TcpProxy proxy) {
    CompletableFuture<Response> call(String procedure, String text, Duration timeout) {
      RequestMeta meta =
          RequestMeta.builder()
              .service(SERVICE)
              .procedure(procedure)
              .encoding("raw")
              .deadline(Deadline.after(timeout))
              .build();
      return dispatcher.clientConfig(SERVICE).call(Request.of(meta, Body.of(text.getBytes(UTF_8))));
    }
  }

  private static String text(Response response) {
    try {
      return new String(response.body().toByteArray(), UTF_8);
    } finally {
      response.body().release();
    }
  }

  private static <T> T await(CompletableFuture<T> f) throws Exception {
    try {
      return f.get(WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw YarpcException.from(e.getCause());
    }
  }

  /** Waits until every connection through {@code client}'s proxy has closed ({@code why} they should). */
  private static void awaitConnectionsClosed(Client client, String why)
      throws InterruptedException {
    eventually(
        () -> client.proxy.openConnections() == 0,
        () -> why + ": " + client.proxy.openConnections() + " still open");
  }

  /** Waits until {@code condition} holds; fails with {@code message}, made when the wait fails. */
  private static void eventually(BooleanSupplier condition, Supplier<String> message)
      throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError(message.get());
      }
      Thread.sleep(10);
    }
  }

  /**
   * Retains one peer on start and hands it to every call, also after {@link #release()} gave it back to
   * the transport (a list that dropped a peer may still hold a lease on it). With {@link
   * #releaseOnTheTransportsFirstLook}, a lease releases the peer when the transport first reads its
   * {@link PeerLease#peer()}, after core's {@link io.yarpc.peer.PeerCalls} has checked it (reads from
   * the {@code io.yarpc.peer} package are core's).
   */
  private static final class OnePeer extends AbstractLifecycle implements PeerChooser {
    private static final StackWalker STACK = StackWalker.getInstance();

    private final PeerTransport transport;
    private final String identifier;
    private final PeerSubscriber subscriber = changed -> {};
    private volatile Peer peer;
    private boolean released; // guarded by this
    volatile boolean releaseOnTheTransportsFirstLook;

    OnePeer(PeerTransport transport, String identifier) {
      this.transport = transport;
      this.identifier = identifier;
    }

    @Override
    protected void doStart() {
      peer = transport.retainPeer(identifier, subscriber);
    }

    @Override
    protected void doStop() {
      release();
    }

    /** Gives the peer back to the transport: its last holder, so the transport closes it. */
    synchronized void release() {
      if (!released) {
        released = true;
        transport.releasePeer(identifier, subscriber);
      }
    }

    synchronized boolean released() {
      return released;
    }

    @Override
    public CompletableFuture<PeerLease> choose(RequestMeta meta) {
      Peer p = peer;
      boolean releaseOnLook = releaseOnTheTransportsFirstLook;
      return CompletableFuture.completedFuture(
          new PeerLease() {
            @Override
            public Peer peer() {
              if (releaseOnLook && !readByCore()) {
                release();
              }
              return p;
            }

            @Override
            public void finish(Throwable error) {}
          });
    }

    private static boolean readByCore() {
      return STACK.walk(
          frames ->
              frames
                  .skip(2) // readByCore and peer()
                  .findFirst()
                  .map(f -> f.getClassName().startsWith("io.yarpc.peer."))
                  .orElse(false));
    }
  }
}
