package io.yarpc;

import static java.util.Objects.requireNonNull;

import io.yarpc.DispatcherStatus.State;
import io.yarpc.internal.DaemonThreads;
import io.yarpc.internal.HandlerInvoker;
import io.yarpc.internal.MapRouter;
import io.yarpc.middleware.Middleware;
import io.yarpc.peer.ChooserStatus;
import io.yarpc.peer.HasPeerChooser;
import io.yarpc.peer.PeerChooser;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.HandlerSpec;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.Lifecycle;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.Router;
import io.yarpc.transport.RpcType;
import io.yarpc.transport.ServerStream;
import io.yarpc.transport.Transport;
import io.yarpc.transport.TransportComponent;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * A service's YARPC runtime: its name, the inbounds that receive calls, the procedures they serve, the
 * outbounds that reach other services, and the middleware around both.
 *
 * <pre>{@code
 * Dispatcher dispatcher = Dispatcher.builder("keyvalue")
 *     .inbound(httpInbound)
 *     .outbound("users", Outbounds.unary(grpcOutbound))
 *     .build();
 * dispatcher.register(Raw.procedure("echo", body -> body));
 * dispatcher.start();
 * ClientConfig users = dispatcher.clientConfig("users");
 * }</pre>
 *
 * <p><b>Lifecycle.</b> {@link #start()} starts every transport, then every outbound, then every inbound
 * (each shared component once); if one fails, what was started is stopped in reverse order. {@link
 * #stop()} first refuses new calls with {@code unavailable} and tells every inbound that the drain begins
 * ({@link Inbound#beginDrain()}: health checks report not-serving from then on), waits for in-flight calls
 * to finish (at most the {@linkplain Builder#shutdownGracePeriod grace period}), then stops inbounds,
 * outbounds and transports. Both are idempotent.
 *
 * <p><b>Middleware</b> is applied when procedures are registered and when client configs are built, in
 * list order (the first is outermost).
 *
 * <p><b>Execution.</b> Handlers run on the dispatcher's handler executor, never on a transport's I/O
 * thread, unless their procedure is marked {@linkplain Procedure#isNonBlocking() non-blocking}.
 *
 * <p><b>Introspection.</b> {@link #introspect()} returns a {@link DispatcherStatus}: the state, the
 * procedures with their calls in flight, the inbounds and where they listen, the outbounds and their
 * peers. It is what an admin page shows ({@code io.yarpc.observability.admin} in {@code
 * yarpc-observability}).
 */
public final class Dispatcher implements Lifecycle {
  private static final Logger log = LoggerFactory.getLogger(Dispatcher.class);
  private static final Pattern UUID =
      Pattern.compile("[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}");

  private final String name;
  private final List<Inbound> inbounds;
  private final Map<String, Outbounds> outbounds;
  private final Builder config;
  private final Executor executor;
  private final ExecutorService ownedExecutor;
  private final MapRouter router;
  private final HandlerInvoker invoker;
  private final boolean verboseErrors;
  private final boolean logLifecycle;
  private final Map<String, ClientConfig> clientConfigs = new LinkedHashMap<>();
  private final AtomicInteger inFlight = new AtomicInteger();
  // Calls being handled per registered procedure; the same counters as the procedures' invokers.
  private final Map<ProcedureKey, AtomicInteger> procedureCalls = new ConcurrentHashMap<>();
  private final Object drainLock = new Object();
  private volatile boolean draining;
  // Written under this object's lock, read without it (isRunning, introspect).
  private volatile State state = State.NEW;

  private record ProcedureKey(String service, String name, String encoding) {}

  private Dispatcher(Builder b) {
    this.name = b.name;
    this.config = b;
    this.inbounds = List.copyOf(b.inbounds);
    this.outbounds = Collections.unmodifiableMap(new LinkedHashMap<>(b.outbounds));
    this.verboseErrors = b.verboseErrors;
    this.logLifecycle = b.logLifecycle;
    if (b.executor != null) {
      this.executor = b.executor;
      this.ownedExecutor = null;
    } else {
      this.ownedExecutor = defaultExecutor(name);
      this.executor = ownedExecutor;
    }
    this.router = new MapRouter(name);
    this.invoker =
        new HandlerInvoker(
            new HandlerInvoker.Host() {
              @Override
              public Executor executor() {
                return executor;
              }

              @Override
              public boolean isDraining() {
                return draining;
              }

              @Override
              public void track(int delta) {
                if (inFlight.addAndGet(delta) == 0 && delta < 0) {
                  synchronized (drainLock) {
                    drainLock.notifyAll();
                  }
                }
              }

              @Override
              public String name() {
                return name;
              }

              @Override
              public boolean verboseErrors() {
                return verboseErrors;
              }
            });
    outbounds.forEach((key, out) -> clientConfigs.put(key, buildClientConfig(key, out)));
  }

  /** A builder for a dispatcher whose service is called {@code name}. */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  /** The service name. */
  public String name() {
    return name;
  }

  /** The router every inbound serves from. */
  public Router router() {
    return router;
  }

  /** The inbounds, in the order given. */
  public List<Inbound> inbounds() {
    return inbounds;
  }

  /** Outbounds by outbound key. */
  public Map<String, Outbounds> outbounds() {
    return outbounds;
  }

  /** Calls currently being handled. */
  public int inFlightCalls() {
    return inFlight.get();
  }

  /**
   * A snapshot of what the dispatcher is doing now: its state, its procedures with their calls in flight,
   * its inbounds with their listening addresses, and its outbounds with their peer choosers' peers
   * (status, unavailable reason, pending requests). See {@link DispatcherStatus} for what each part
   * holds.
   *
   * <p>Thread-safe, and callable in any state (before {@link #start()}, while it drains, after {@link
   * #stop()}). It takes no dispatcher-wide lock and blocks no call: it reads the router, the counters and
   * what each component's introspection methods report ({@link Inbound#listenAddress()}, {@link
   * io.yarpc.peer.PeerChooser#introspect()} of outbounds that implement {@link
   * io.yarpc.peer.HasPeerChooser}), which must not block either. A component whose method throws is
   * shown without its address or peers (the exception is logged at DEBUG) rather than failing the
   * snapshot.
   */
  public DispatcherStatus introspect() {
    State current = state;
    int calls = inFlight.get();
    List<DispatcherStatus.ProcedureStatus> procedures = new ArrayList<>();
    for (Procedure p : router.procedures()) {
      AtomicInteger counter = procedureCalls.get(keyOf(p));
      procedures.add(
          new DispatcherStatus.ProcedureStatus(
              p.service(),
              p.name(),
              p.encoding(),
              p.handlerSpec().type(),
              p.signature(),
              counter == null ? 0 : counter.get()));
    }
    List<DispatcherStatus.InboundStatus> inboundStatuses = new ArrayList<>();
    for (Inbound in : inbounds) {
      inboundStatuses.add(
          new DispatcherStatus.InboundStatus(
              in.transportName(), listenAddress(in), in.isRunning()));
    }
    List<DispatcherStatus.OutboundStatus> outboundStatuses = new ArrayList<>();
    outbounds.forEach(
        (key, o) -> {
          String service = o.serviceName().isEmpty() ? key : o.serviceName();
          // one entry per distinct object: an HTTP outbound often serves both unary and oneway
          Map<TransportComponent, EnumSet<RpcType>> types = new IdentityHashMap<>();
          List<TransportComponent> order = new ArrayList<>();
          addType(types, order, o.unary(), RpcType.UNARY);
          addType(types, order, o.oneway(), RpcType.ONEWAY);
          addType(types, order, o.stream(), RpcType.STREAMING);
          for (TransportComponent c : order) {
            ChooserStatus chooser =
                c instanceof HasPeerChooser ? introspect(((HasPeerChooser) c).chooser()) : null;
            outboundStatuses.add(
                new DispatcherStatus.OutboundStatus(
                    key, service, types.get(c), c.transportName(), c.isRunning(), chooser));
          }
        });
    return new DispatcherStatus(
        name, current, calls, procedures, inboundStatuses, outboundStatuses);
  }

  /** The inbound's address; null (logged at DEBUG) when asking fails, so one bug spoils no snapshot. */
  private static SocketAddress listenAddress(Inbound in) {
    try {
      return in.listenAddress();
    } catch (RuntimeException e) {
      log.debug("{}.listenAddress() failed", in, e);
      return null;
    }
  }

  /** The chooser's status; its kind with no peers (logged at DEBUG) when asking fails. */
  private static ChooserStatus introspect(PeerChooser chooser) {
    try {
      return chooser.introspect();
    } catch (RuntimeException e) {
      log.debug("{}.introspect() failed", chooser, e);
      String kind = chooser.getClass().getSimpleName();
      return new ChooserStatus(kind.isEmpty() ? chooser.getClass().getName() : kind, List.of());
    }
  }

  private static void addType(
      Map<TransportComponent, EnumSet<RpcType>> types,
      List<TransportComponent> order,
      TransportComponent c,
      RpcType type) {
    if (c == null) {
      return;
    }
    EnumSet<RpcType> set = types.get(c);
    if (set == null) {
      set = EnumSet.noneOf(RpcType.class);
      types.put(c, set);
      order.add(c);
    }
    set.add(type);
  }

  /**
   * Registers procedures, wrapping each handler in the inbound middleware and the invocation rules (see
   * {@link Builder}). May be called before or after {@link #start()}.
   *
   * @throws IllegalArgumentException when a procedure clashes with one already registered
   */
  public void register(List<Procedure> procedures) {
    for (Procedure p : procedures) {
      AtomicInteger calls = new AtomicInteger();
      router.register(p, invoker.wrap(p, withMiddleware(p.handlerSpec()), calls));
      procedureCalls.put(keyOf(p), calls);
      log.debug("dispatcher {} registered {}", name, p);
    }
  }

  private ProcedureKey keyOf(Procedure p) {
    return new ProcedureKey(p.service().isEmpty() ? name : p.service(), p.name(), p.encoding());
  }

  /** Registers procedures; see {@link #register(List)}. */
  public void register(Procedure... procedures) {
    register(List.of(procedures));
  }

  private HandlerSpec withMiddleware(HandlerSpec spec) {
    switch (spec.type()) {
      case UNARY:
        return HandlerSpec.unary(Middleware.apply(spec.unary(), config.unaryInbound));
      case ONEWAY:
        return HandlerSpec.oneway(Middleware.apply(spec.oneway(), config.onewayInbound));
      default:
        return HandlerSpec.streaming(Middleware.apply(spec.streaming(), config.streamInbound));
    }
  }

  /**
   * The client config for the outbounds registered under {@code outboundKey}.
   *
   * @throws IllegalArgumentException when there is no such key
   */
  public ClientConfig clientConfig(String outboundKey) {
    ClientConfig cc = clientConfigs.get(outboundKey);
    if (cc == null) {
      throw new IllegalArgumentException(
          "no outbounds for \"" + outboundKey + "\"; known: " + clientConfigs.keySet());
    }
    return cc;
  }

  private ClientConfig buildClientConfig(String key, Outbounds out) {
    String service = out.serviceName().isEmpty() ? key : out.serviceName();
    return ClientConfig.create(
        name, service, out, config.unaryOutbound, config.onewayOutbound, config.streamOutbound);
  }

  /** Starts transports, then outbounds, then inbounds; see the class comment. */
  @Override
  public synchronized void start() {
    if (state == State.RUNNING) {
      return;
    }
    if (state == State.STOPPING || state == State.STOPPED) {
      throw new IllegalStateException(
          "dispatcher \"" + name + "\" was stopped and cannot start again");
    }
    for (Inbound in : inbounds) {
      in.setRouter(router);
    }
    List<Lifecycle> started = new ArrayList<>();
    try {
      for (Lifecycle c : startOrder()) {
        c.start();
        started.add(c);
      }
    } catch (RuntimeException e) {
      Collections.reverse(started);
      for (Lifecycle c : started) {
        try {
          c.stop();
        } catch (RuntimeException suppressed) {
          e.addSuppressed(suppressed);
        }
      }
      state = State.STOPPED;
      shutdownExecutor();
      throw e;
    }
    draining = false;
    state = State.RUNNING;
    log.atLevel(logLifecycle ? Level.INFO : Level.DEBUG)
        .log(
            "dispatcher {} started with {} inbound(s) and {} outbound key(s)",
            name,
            inbounds.size(),
            outbounds.size());
  }

  /** Transports, then outbounds, then inbounds; each object once. */
  private List<Lifecycle> startOrder() {
    Set<Lifecycle> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    List<Lifecycle> order = new ArrayList<>();
    List<TransportComponent> outboundComponents = new ArrayList<>();
    for (Outbounds o : outbounds.values()) {
      for (TransportComponent c : new TransportComponent[] {o.unary(), o.oneway(), o.stream()}) {
        if (c != null) {
          outboundComponents.add(c);
        }
      }
    }
    List<TransportComponent> all = new ArrayList<>(outboundComponents);
    all.addAll(inbounds);
    for (TransportComponent c : all) {
      for (Transport t : c.transports()) {
        if (seen.add(t)) {
          order.add(t);
        }
      }
    }
    for (TransportComponent c : all) {
      if (seen.add(c)) {
        order.add(c);
      }
    }
    return order;
  }

  /**
   * Refuses new calls, tells every inbound the drain begins ({@link Inbound#beginDrain()}), waits for
   * in-flight calls (at most the grace period), then stops inbounds, outbounds and transports. Errors from
   * components are collected and thrown together at the end.
   */
  @Override
  public void stop() {
    synchronized (this) {
      if (state == State.STOPPING || state == State.STOPPED) {
        return;
      }
      if (state != State.RUNNING) {
        state = State.STOPPED;
        shutdownExecutor();
        return;
      }
      state = State.STOPPING;
      draining = true;
    }
    RuntimeException failure = null;
    for (Inbound in : inbounds) {
      try {
        in.beginDrain();
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    awaitDrained(config.shutdownGracePeriod);
    List<Lifecycle> order = startOrder();
    Collections.reverse(order);
    for (Lifecycle c : order) {
      try {
        c.stop();
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    shutdownExecutor();
    synchronized (this) {
      state = State.STOPPED;
    }
    log.atLevel(logLifecycle ? Level.INFO : Level.DEBUG).log("dispatcher {} stopped", name);
    if (failure != null) {
      throw failure;
    }
  }

  private void awaitDrained(Duration grace) {
    long deadline = System.nanoTime() + grace.toNanos();
    synchronized (drainLock) {
      while (inFlight.get() > 0) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          log.warn(
              "dispatcher {} stopping with {} call(s) still in flight after {}",
              name,
              inFlight.get(),
              grace);
          return;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(drainLock, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  private void shutdownExecutor() {
    if (ownedExecutor != null) {
      ownedExecutor.shutdown();
    }
  }

  /**
   * Whether the dispatcher is started and not stopping: false from the moment {@link #stop()} begins
   * (while calls drain), so a health check built on it reports not-serving during the drain. A volatile
   * read: cheap, never blocks (not even while {@link #start()} runs).
   */
  @Override
  public boolean isRunning() {
    return state == State.RUNNING;
  }

  private static ExecutorService defaultExecutor(String name) {
    return DaemonThreads.elasticPool("yarpc-" + name + "-handler-", 1024);
  }

  /**
   * Checks a service name as yarpc-go does: at least 2 characters, starts with {@code [a-z]}, only
   * {@code [a-z0-9_-]}, no {@code --}, does not end with {@code -}, contains no UUID.
   *
   * @throws IllegalArgumentException saying what is wrong
   */
  public static void validateServiceName(String name) {
    requireNonNull(name, "name");
    String problem = null;
    if (name.length() < 2) {
      problem = "must be at least 2 characters";
    } else if (name.charAt(0) < 'a' || name.charAt(0) > 'z') {
      problem = "must start with a lower-case letter";
    } else if (!name.matches("[a-z0-9_-]+")) {
      problem = "may only contain a-z, 0-9, '_' and '-'";
    } else if (name.contains("--")) {
      problem = "must not contain \"--\"";
    } else if (name.endsWith("-")) {
      problem = "must not end with '-'";
    } else if (UUID.matcher(name).find()) {
      problem = "must not contain a UUID";
    }
    if (problem != null) {
      throw new IllegalArgumentException("invalid service name \"" + name + "\": " + problem);
    }
  }

  /** Builds a {@link Dispatcher}; not thread-safe. */
  public static final class Builder {
    private final String name;
    private final List<Inbound> inbounds = new ArrayList<>();
    private final Map<String, Outbounds> outbounds = new LinkedHashMap<>();
    private final List<Middleware<Request, Response>> unaryInbound = new ArrayList<>();
    private final List<Middleware<Request, Void>> onewayInbound = new ArrayList<>();
    private final List<Middleware<ServerStream, Void>> streamInbound = new ArrayList<>();
    private final List<Middleware<Request, Response>> unaryOutbound = new ArrayList<>();
    private final List<Middleware<Request, Void>> onewayOutbound = new ArrayList<>();
    private final List<Middleware<RequestMeta, ClientStream>> streamOutbound = new ArrayList<>();
    private Executor executor;
    private Duration shutdownGracePeriod = Duration.ofSeconds(6);
    private boolean verboseErrors;
    private boolean logLifecycle = true;

    private Builder(String name) {
      validateServiceName(name);
      this.name = name;
    }

    /**
     * The name of the service being built, for code that configures a builder on its behalf (metrics
     * tag their meters with it, as yarpc-go's {@code dispatcher} tag).
     */
    public String name() {
      return name;
    }

    /** Adds inbounds. */
    public Builder inbound(Inbound... inbounds) {
      for (Inbound in : inbounds) {
        this.inbounds.add(requireNonNull(in, "inbound"));
      }
      return this;
    }

    /** Registers the outbounds for {@code key} (the remote service name unless overridden). */
    public Builder outbound(String key, Outbounds outbounds) {
      requireNonNull(key, "key");
      if (this.outbounds.putIfAbsent(key, requireNonNull(outbounds, "outbounds")) != null) {
        throw new IllegalArgumentException("outbounds for \"" + key + "\" were already set");
      }
      return this;
    }

    /** Appends unary inbound middleware (first outermost). */
    @SafeVarargs
    public final Builder unaryInboundMiddleware(Middleware<Request, Response>... middleware) {
      unaryInbound.addAll(List.of(middleware));
      return this;
    }

    /** Appends oneway inbound middleware (first outermost). */
    @SafeVarargs
    public final Builder onewayInboundMiddleware(Middleware<Request, Void>... middleware) {
      onewayInbound.addAll(List.of(middleware));
      return this;
    }

    /** Appends stream inbound middleware (first outermost). */
    @SafeVarargs
    public final Builder streamInboundMiddleware(Middleware<ServerStream, Void>... middleware) {
      streamInbound.addAll(List.of(middleware));
      return this;
    }

    /** Appends unary outbound middleware (first outermost). */
    @SafeVarargs
    public final Builder unaryOutboundMiddleware(Middleware<Request, Response>... middleware) {
      unaryOutbound.addAll(List.of(middleware));
      return this;
    }

    /** Appends oneway outbound middleware (first outermost). */
    @SafeVarargs
    public final Builder onewayOutboundMiddleware(Middleware<Request, Void>... middleware) {
      onewayOutbound.addAll(List.of(middleware));
      return this;
    }

    /** Appends stream outbound middleware (first outermost). */
    @SafeVarargs
    public final Builder streamOutboundMiddleware(
        Middleware<RequestMeta, ClientStream>... middleware) {
      streamOutbound.addAll(List.of(middleware));
      return this;
    }

    /**
     * The executor handlers run on. Default: a dispatcher-owned pool of daemon threads, shut down by
     * {@link #stop()}: as many threads as processors (at least 2) take calls from a queue, and a call that
     * has waited 2 ms behind busy threads gets a thread of its own, so a handler may block (it holds the
     * calls queued behind it for about 2 ms) and quick handlers cost no thread wake-up each; up to 1,024
     * threads and as many calls waiting, beyond that calls fail with {@code resource-exhausted}. A given
     * executor is not shut down by the dispatcher. Use {@code Runnable::run} to run every handler on the
     * transport's thread (only for handlers that never block), or mark such procedures {@linkplain
     * Procedure#isNonBlocking() non-blocking}.
     */
    public Builder handlerExecutor(Executor executor) {
      this.executor = requireNonNull(executor, "executor");
      return this;
    }

    /** How long {@link #stop()} waits for in-flight calls; default 6 s, as yarpc-go's HTTP inbound. */
    public Builder shutdownGracePeriod(Duration gracePeriod) {
      if (requireNonNull(gracePeriod, "gracePeriod").isNegative()) {
        throw new IllegalArgumentException("grace period must not be negative");
      }
      this.shutdownGracePeriod = gracePeriod;
      return this;
    }

    /**
     * Whether callers are told the text of a handler's unexpected exception (one that is not a {@code
     * YarpcException}: a bug, not an answer); default false. Either way the call fails with {@code
     * unknown}, {@code error for service "S" and procedure "P": ...}, and the dispatcher logs the exception
     * with its stack trace (slf4j, WARN, logger {@code io.yarpc.internal.HandlerInvoker}; at most once a
     * second, the others counted, so a caller who can trigger a bug cannot flood the log); by default the
     * caller reads {@code unexpected error (the server logged it)} after the colon, as grpc-java and Armeria
     * keep internal text to the server; true sends the exception's message (or class name when it has
     * none), as yarpc-go sends {@code err.Error()}. Turn it on for development, not on an open network.
     * {@code YarpcException}s a handler throws are sent as they are in both cases.
     */
    public Builder verboseErrors(boolean verbose) {
      this.verboseErrors = verbose;
      return this;
    }

    /**
     * Whether {@link #start()} and {@link #stop()} each log a line at INFO (default true; logger {@code
     * io.yarpc.Dispatcher}); false logs those two lines at DEBUG, for dispatchers started by the hundred,
     * as the transport conformance kit starts two per test. Warnings and errors are logged either way.
     */
    public Builder logLifecycle(boolean log) {
      this.logLifecycle = log;
      return this;
    }

    /** The dispatcher. */
    public Dispatcher build() {
      return new Dispatcher(this);
    }
  }
}
