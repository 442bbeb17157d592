package io.yarpc.discovery;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.peer.ChooserStatus;
import io.yarpc.peer.Peer;
import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerLease;
import io.yarpc.peer.PeerList;
import io.yarpc.peer.PeerSubscriber;
import io.yarpc.peer.PeerTransport;
import io.yarpc.peer.RoundRobinPeerList;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpTransport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/** Real servers, a client whose calls run all the time, and wrappers that count what a list does. */
final class Fixtures {
  private Fixtures() {}

  /** An HTTP server on 127.0.0.1 whose procedure {@code who} answers its name and counts its calls. */
  static final class Server implements AutoCloseable {
    final String name;
    final AtomicInteger calls = new AtomicInteger();
    private final Dispatcher dispatcher;
    private final HttpInbound inbound;

    Server(String name) {
      this.name = name;
      HttpTransport t = HttpTransport.builder().eventLoopThreads(1).build();
      inbound = t.inbound();
      dispatcher = Dispatcher.builder("users").inbound(inbound).build();
      dispatcher.register(
          Raw.procedure(
              "who",
              body -> {
                calls.incrementAndGet();
                return name.getBytes(UTF_8);
              }));
      dispatcher.start();
    }

    int port() {
      return inbound.listenAddress().getPort();
    }

    String hostPort() {
      return "127.0.0.1:" + port();
    }

    @Override
    public void close() {
      dispatcher.stop();
    }
  }

  /** A peer transport that counts the retains and releases of each identifier, then passes them on. */
  static final class CountingTransport implements PeerTransport {
    private final PeerTransport delegate;
    final Map<String, AtomicInteger> retains = new ConcurrentHashMap<>();
    final Map<String, AtomicInteger> releases = new ConcurrentHashMap<>();

    CountingTransport(PeerTransport delegate) {
      this.delegate = delegate;
    }

    @Override
    public Peer retainPeer(String identifier, PeerSubscriber subscriber) {
      Peer p = delegate.retainPeer(identifier, subscriber);
      retains.computeIfAbsent(identifier, k -> new AtomicInteger()).incrementAndGet();
      return p;
    }

    @Override
    public void releasePeer(String identifier, PeerSubscriber subscriber) {
      releases.computeIfAbsent(identifier, k -> new AtomicInteger()).incrementAndGet();
      delegate.releasePeer(identifier, subscriber);
    }

    static Map<String, Integer> snapshot(Map<String, AtomicInteger> counts) {
      Map<String, Integer> out = new TreeMap<>();
      counts.forEach((k, v) -> out.put(k, v.get()));
      return out;
    }
  }

  /** A round-robin list that records every update it is given ({@code +[a] -[b]}). */
  static final class RecordingList implements PeerChooser, PeerList {
    final RoundRobinPeerList list;
    final List<String> updates = new CopyOnWriteArrayList<>();

    RecordingList(PeerTransport transport) {
      this.list = RoundRobinPeerList.builder(transport).build();
    }

    @Override
    public void update(List<String> additions, List<String> removals) {
      updates.add("+" + additions + " -" + removals);
      list.update(additions, removals);
    }

    List<String> peers() {
      return list.peerIdentifiers();
    }

    @Override
    public CompletableFuture<PeerLease> choose(RequestMeta meta) {
      return list.choose(meta);
    }

    @Override
    public String waitReason() {
      return list.waitReason();
    }

    @Override
    public ChooserStatus introspect() {
      return list.introspect();
    }

    @Override
    public void start() {
      list.start();
    }

    @Override
    public void stop() {
      list.stop();
    }

    @Override
    public boolean isRunning() {
      return list.isRunning();
    }
  }

  /** A client dispatcher with the outbound {@code users} over {@code chooser}. */
  static Dispatcher client(HttpTransport http, PeerChooser chooser) {
    return Dispatcher.builder("client")
        .outbound("users", Outbounds.builder().unary(http.outbound(chooser)).build())
        .build();
  }

  /**
   * Callers that call {@code who} through the client's {@code users} outbound without pause until
   * {@link #stop()}; every failed call is recorded.
   */
  static final class Callers implements AutoCloseable {
    final AtomicInteger succeeded = new AtomicInteger();
    final List<Throwable> failures = new CopyOnWriteArrayList<>();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final List<Thread> threads = new ArrayList<>();

    Callers(Dispatcher client, int count) {
      RawClient raw = RawClient.of(client.clientConfig("users"));
      for (int i = 0; i < count; i++) {
        Thread t =
            new Thread(
                () -> {
                  while (running.get()) {
                    try {
                      raw.call("who", new byte[0], CallOptions.timeout(Duration.ofSeconds(5)))
                          .get(10, TimeUnit.SECONDS);
                      succeeded.incrementAndGet();
                    } catch (Exception e) {
                      failures.add(e);
                    }
                  }
                },
                "caller-" + i);
        t.start();
        threads.add(t);
      }
    }

    /** Stops calling and waits for the calls in flight. */
    void stop() throws InterruptedException {
      running.set(false);
      for (Thread t : threads) {
        t.join(TimeUnit.SECONDS.toMillis(20));
      }
    }

    @Override
    public void close() throws InterruptedException {
      stop();
    }
  }

  /** Waits until {@code condition} holds, at most {@code seconds}; returns whether it did. */
  static boolean await(int seconds, BooleanSupplier condition) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > until) {
        return false;
      }
      Thread.sleep(10);
    }
    return true;
  }
}
