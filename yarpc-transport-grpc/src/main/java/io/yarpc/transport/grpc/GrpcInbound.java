package io.yarpc.transport.grpc;

import static java.util.Objects.requireNonNull;

import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.ProtoReflectionService;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.yarpc.netty.internal.NettyIo;
import io.yarpc.netty.internal.ReloadingSslContext;
import io.yarpc.tls.TlsConfig;
import io.yarpc.tls.TlsMode;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.Router;
import io.yarpc.transport.Transport;
import io.yarpc.transport.grpc.internal.ConnectionInfos;
import io.yarpc.transport.grpc.internal.ConnectionLimiter;
import io.yarpc.transport.grpc.internal.HeaderCountLimit;
import io.yarpc.transport.grpc.internal.HealthService;
import io.yarpc.transport.grpc.internal.InboundHandler;
import io.yarpc.transport.grpc.internal.ServerTlsNegotiator;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * A gRPC server that serves every {@code /Service/Method} path through the dispatcher's router, as
 * yarpc-go's gRPC inbound does (docs/spec/wire-grpc.md §4): {@code /Svc/Method} is procedure {@code Svc::Method},
 * {@code /__default__/m} is {@code m}; the {@code rpc-*} metadata fills the request's metadata, the rest
 * becomes application headers; the deadline comes from {@code grpc-timeout}. Unary procedures and streams
 * (client, server and bidirectional) are served; oneway procedures are refused with
 * {@code unimplemented}.
 *
 * <p><b>Plain gRPC clients</b> (generated stubs, grpcurl, grpcio: no {@code rpc-*} metadata, often no
 * deadline) are served by default: a call without {@code rpc-service} is for the {@linkplain
 * Builder#defaultService default service}; without {@code rpc-caller}, its caller is the product of its
 * {@code user-agent} ({@code grpc-java-netty}, {@code grpc-python}...) or {@code unknown}; without {@code
 * rpc-encoding}, its encoding comes from the content-type ({@code application/grpc} and {@code
 * application/grpc+proto}: {@code proto}; {@code application/grpc+json}: {@code json}). A unary call without
 * {@code grpc-timeout} gets the {@linkplain Builder#deadlinePolicy deadline policy}'s default timeout
 * ({@value #DEFAULT_TIMEOUT_SECONDS} s unless configured), counted from its headers; {@link
 * DeadlinePolicy#strict()} keeps yarpc-go's {@code missing TTL} instead, answered on the headers. YARPC
 * peers send all of these, so nothing changes for them.
 *
 * <p>Ownership: a request body reaches the handler as byte access over grpc-java's received buffers,
 * without a copy; the dispatcher releases it when the handler's result completes, and stream messages are
 * released by whoever receives them. The inbound releases every response body it writes, and the body of
 * a response attached to an error.
 *
 * <p><b>Health and reflection</b> (both on by default, see {@link Builder#healthService} and {@link
 * Builder#reflection}) are served next to the router by grpc-java's own machinery, not as YARPC
 * procedures: they need no {@code rpc-*} metadata and no deadline, and no middleware sees them. They take
 * precedence over procedures of the same path ({@code /grpc.health.v1.Health/...}, {@code
 * /grpc.reflection.v1.ServerReflection/...}, {@code /grpc.reflection.v1alpha.ServerReflection/...}); turn
 * them off to serve your own.
 * <ul>
 *   <li>{@code grpc.health.v1.Health}: {@code Check} answers {@code SERVING} from start until the dispatcher
 *       begins to stop ({@link #beginDrain()}) or the inbound stops, {@code NOT_SERVING} after, for the empty
 *       name and for every registered service name: each procedure's YARPC service and the gRPC service
 *       part {@code pkg.Svc} of every {@code pkg.Svc::Method} procedure. Other names: {@code NOT_FOUND}.
 *       {@code Watch} sends the current status, then each change ({@code SERVICE_UNKNOWN} for an unknown
 *       name; a service registered after the watch began is reported with the next change); when the
 *       inbound stops, open watches get {@code NOT_SERVING} and then end with {@code UNAVAILABLE}, so they
 *       do not hold up the graceful stop.
 *   <li>Server reflection, {@code grpc.reflection.v1} and {@code v1alpha} (grpc-java's {@code
 *       ProtoReflectionServiceV1} and {@code ProtoReflectionService}): lists the protobuf services
 *       registered on the router (procedures whose {@linkplain io.yarpc.transport.Procedure#schema()
 *       schema} is an {@code io.grpc.protobuf.ProtoFileDescriptorSupplier}, as {@code ProtobufProcedures}
 *       sets) and the health and reflection services, and returns their files, so grpcurl-style tools can
 *       list, describe and call them. Services registered after start are listed on the next reflection
 *       stream.
 * </ul>
 *
 * <p><b>Limits</b> ({@link Builder#limits}, default {@link InboundLimits#defaults()}; docs/spec/wire-grpc.md
 * §4.5) bound what a peer can make the server hold or do. What a peer gets for each:
 * <ul>
 *   <li>{@code maxConnections}: a connection accepted beyond it is closed at once, before anything is read
 *       from it (no HTTP/2 frame is sent), and counted ({@link #refusedConnections()}).
 *   <li>{@code maxConcurrentCallsPerConnection}: announced as {@code SETTINGS_MAX_CONCURRENT_STREAMS}; a
 *       stream beyond it gets {@code RST_STREAM(REFUSED_STREAM)} (grpc clients queue such calls).
 *   <li>{@code maxRequestSize}: a request message longer than it ends the call with {@code
 *       RESOURCE_EXHAUSTED} as soon as its length prefix arrives, before its body is read.
 *   <li>{@code maxHeaderBytes}: announced as {@code SETTINGS_MAX_HEADER_LIST_SIZE}; a header block over it
 *       gets HTTP status 431 and {@code RST_STREAM(PROTOCOL_ERROR)}, and the connection stays; one that
 *       grows past a quarter more while it arrives (a {@code CONTINUATION} flood) gets {@code
 *       GOAWAY(PROTOCOL_ERROR)} and the connection is closed.
 *   <li>{@code maxHeaderCount}: a call with more metadata entries (all but the HTTP/2 pseudo-headers) ends
 *       with {@code RESOURCE_EXHAUSTED} when it starts, before it is routed.
 *   <li>{@code maxRstFramesPerWindow}: counts the {@code RST_STREAM} frames the client sends and those the
 *       server sends because of the client's frames (any code but {@code NO_ERROR} and {@code CANCEL}:
 *       refused streams, protocol errors such as a zero window increment); beyond it the connection gets
 *       {@code GOAWAY(ENHANCE_YOUR_CALM, "too_many_rststreams")} and is closed. grpc-java counts in whole
 *       seconds: the window is rounded up to one.
 *   <li>{@code readTimeout}: a unary call whose request (its message and the client's end) has not arrived
 *       within it, or by its deadline if sooner, both counted from the headers, ends with {@code
 *       DEADLINE_EXCEEDED}; what arrived is released and, when the client is still sending, the stream is
 *       reset ({@code RST_STREAM(CANCEL)}). A stream message the handler asked for that began to arrive
 *       must arrive whole within it, with the same outcome (the handler is cancelled); the time between
 *       messages is not limited.
 *   <li>{@code writeTimeout}: a response that cannot be written for that long (the call is not ready: the
 *       client grants no flow-control window, or does not read) is reset ({@code RST_STREAM(CANCEL)}),
 *       which releases what was queued and cancels a stream's handler. Progress is seen when grpc-java's
 *       call becomes ready again (under 32 KiB queued), so a single message must be written, down to
 *       that, within it.
 *   <li>{@code idleTimeout}: a connection without calls for that long gets {@code GOAWAY} and is closed
 *       (grpc-java's {@code maxConnectionIdle}; at least 1 s).
 *   <li>{@code maxConnectionAge}: the connection gets {@code GOAWAY} after that long (grpc-java adds up to
 *       ±10% jitter; at least 1 s) and is closed once its calls end, or after the grace period.
 *   <li>{@code handshakeTimeout}: a connection whose HTTP/2 preface and first {@code SETTINGS} have not
 *       arrived by then is closed.
 *   <li>{@code permitKeepAliveTime}, {@code permitKeepAliveWithoutCalls}: a client that pings more often,
 *       or pings while it has no calls (unless permitted), gets {@code GOAWAY(ENHANCE_YOUR_CALM,
 *       "too_many_pings")} and is closed (grpc-java's enforcement: two pings too early are tolerated, and
 *       forgotten when the server sends). Pings at the permitted rate are answered and keep nothing open
 *       ({@code idleTimeout} counts calls, not pings).
 *   <li>{@code maxPendingBytesPerConnection}, {@code maxPendingBytes}: not enforced as byte budgets.
 *       grpc-java returns flow-control credit for a message's bytes as its deframer reads them, which it
 *       does only for a message the call asked for, and reads that message to its end; there is no hook to
 *       withhold the credit half-way. What holds: bytes nobody asked for stay within the HTTP/2 windows; a
 *       unary call asks for its one message at once, and a stream when its handler receives; so a
 *       connection holds at most {@code maxConcurrentCallsPerConnection} messages of up to {@code
 *       maxRequestSize} being received, each for at most the read timeout.
 *   <li>{@code maxRequestLineLength}: not used (HTTP/2 has no request line).
 * </ul>
 * Timeouts are checked by one periodic sweep per inbound (an eighth of the shortest timeout, from 10 ms
 * to 1 s), so they fire up to that much late; no call arms a timer of its own.
 *
 * <p><b>TLS</b> ({@link Builder#tls(TlsConfig)}, {@link Builder#tls(TlsConfig, TlsMode)}; plaintext h2c by
 * default). The server presents the config's certificate, offers ALPN {@code h2} (a client that does not
 * offer it is closed after the handshake), and asks for client certificates as the config's {@link
 * io.yarpc.tls.ClientAuth} says, verifying them with its trusted certificates: with {@code REQUIRE}, a
 * client without a certificate those roots verify is refused during the handshake (the client's channel
 * reports {@code UNAVAILABLE}, a YARPC outbound {@code TLS handshake with peer ... failed}). Each
 * connection's first byte tells TLS from plaintext:
 * <ul>
 *   <li>{@link TlsMode#ENFORCED} ({@code tls(config)}): TLS only. A plaintext client's connection is
 *       closed as soon as its first bytes arrive, without an answer, and the refusal is logged (at most
 *       once a second); gRPC clients report {@code UNAVAILABLE} ({@code Network closed for unknown reason}
 *       from grpc-java). (An HTTP/2 {@code GOAWAY} naming the
 *       reason is not sent: grpc-java clients would take it for a connection that closed before their call
 *       was sent and retry it on new connections.)
 *   <li>{@link TlsMode#PERMISSIVE}: TLS and plaintext on one port, each connection served as what it is
 *       (for moving a fleet to TLS: servers permissive, then clients TLS, then servers enforced).
 *   <li>{@link TlsMode#DISABLED}: plaintext only; the config is ignored.
 * </ul>
 * The certificate is read at {@link #start()} (unreadable material fails the start) and again for new
 * connections after {@link TlsConfig#reload()} or when its files change ({@link
 * TlsConfig#reloadCheckInterval()}); open connections keep their session. The limits hold for TLS
 * connections as for plaintext ones: {@code maxConnections} counts them from their acceptance, and {@code
 * handshakeTimeout} runs from the acceptance to the client's first HTTP/2 {@code SETTINGS}, so it covers
 * the TLS handshake. Failed handshakes are logged at most once a second, with their reason.
 *
 * <p><b>The connection</b> of every call, unary or stream, is on its {@link
 * io.yarpc.transport.RequestMeta#connection() RequestMeta.connection()}: the client's and the server's
 * addresses and, over TLS, the session and the client's verified certificate ({@link
 * io.yarpc.transport.ConnectionInfo#peerSubject()}, {@link
 * io.yarpc.transport.ConnectionInfo#peerSubjectAlternativeNames()}) for authorization middleware. One
 * object is made per connection, when it is ready, and shared by its calls.
 *
 * <p>Lifecycle: {@link #start()} binds and listens ({@link #address()} tells the bound address, useful
 * with port 0); {@link #stop()} reports not-serving, stops accepting calls, lets calls in flight finish for
 * at most the grace period, then cancels what is left. Get one from {@link GrpcTransport#inbound} or
 * {@link GrpcTransport#inboundBuilder}.
 */
public final class GrpcInbound extends AbstractLifecycle implements Inbound {
  /** The timeout of unary calls that arrive without a deadline, unless the builder says otherwise. */
  public static final int DEFAULT_TIMEOUT_SECONDS = 60;

  private static final DeadlinePolicy DEFAULT_DEADLINE_POLICY =
      DeadlinePolicy.withDefaultTimeout(Duration.ofSeconds(DEFAULT_TIMEOUT_SECONDS));

  private final GrpcTransport transport;
  private final InetSocketAddress requestedAddress;
  private final InboundLimits limits;
  private final Duration gracePeriod;
  private final Executor executor;
  private final DeadlinePolicy deadlinePolicy;
  private final InboundHandler handler;
  private final HealthService health; // null when turned off
  private final boolean reflection;
  private final TlsConfig tls; // null: plaintext
  private final TlsMode tlsMode;
  private volatile Server server;
  private volatile InetSocketAddress listening; // set once started; kept after stop
  private volatile ConnectionLimiter connections;
  // set in doStart, shut down in doStop (the lifecycle runs them one after the other)
  private EventLoopGroup eventLoops;

  private GrpcInbound(Builder b) {
    this.transport = b.transport;
    this.requestedAddress = b.address;
    this.limits = b.limits;
    this.gracePeriod = b.gracePeriod;
    this.executor = b.executor;
    this.deadlinePolicy = b.deadlinePolicy;
    this.handler =
        new InboundHandler(
            transport.marshaller(),
            b.maxSendMessageSize,
            b.defaultService,
            b.deadlinePolicy,
            b.limits);
    this.health = b.healthService ? new HealthService(handler::serviceNames) : null;
    this.reflection = b.reflection;
    this.tls = b.tlsMode == TlsMode.DISABLED ? null : b.tls;
    this.tlsMode = this.tls == null ? TlsMode.DISABLED : b.tlsMode;
  }

  /**
   * A builder for an inbound of {@code transport} listening on {@code address}; the same as
   * {@link GrpcTransport#inboundBuilder}.
   */
  public static Builder builder(GrpcTransport transport, InetSocketAddress address) {
    return requireNonNull(transport, "transport").inboundBuilder(address);
  }

  @Override
  public void setRouter(Router router) {
    handler.setRouter(requireNonNull(router, "router"));
  }

  /**
   * From now on the health service reports {@code NOT_SERVING} (watchers are told at once); calls keep being
   * served. Called by the dispatcher when its stop begins; idempotent.
   */
  @Override
  public void beginDrain() {
    if (health != null) {
      health.setServing(false);
    }
  }

  @Override
  public String transportName() {
    return GrpcTransport.NAME;
  }

  @Override
  public List<Transport> transports() {
    return List.of(transport);
  }

  /**
   * The address the server listens on.
   *
   * @throws IllegalStateException before {@link #start()}
   */
  public InetSocketAddress address() {
    Server s = server;
    if (s == null) {
      throw new IllegalStateException("grpc inbound is not started");
    }
    for (SocketAddress a : s.getListenSockets()) {
      if (a instanceof InetSocketAddress) {
        return (InetSocketAddress) a;
      }
    }
    throw new IllegalStateException("grpc inbound listens on no internet address");
  }

  /**
   * The address the server listened on when it started (the actual port when built with port 0); null
   * before {@link #start()}. Unlike {@link #address()} it does not ask the server, so it answers while
   * the server shuts down and after it stopped.
   */
  @Override
  public InetSocketAddress listenAddress() {
    return listening;
  }

  /** The deadline policy applied to every call. */
  public DeadlinePolicy deadlinePolicy() {
    return deadlinePolicy;
  }

  /** Whether the inbound serves TLS: {@link TlsMode#DISABLED} without a {@linkplain Builder#tls config}. */
  public TlsMode tlsMode() {
    return tlsMode;
  }

  /** The limits the inbound enforces (see the class comment). */
  public InboundLimits limits() {
    return limits;
  }

  /** Connections open now; 0 before {@link #start()}. */
  public int openConnections() {
    ConnectionLimiter c = connections;
    return c == null ? 0 : c.open();
  }

  /**
   * Connections closed at once since {@link #start()} because {@link InboundLimits#maxConnections()}
   * were open.
   */
  public long refusedConnections() {
    ConnectionLimiter c = connections;
    return c == null ? 0 : c.refused();
  }

  /** Calls in flight: started and not yet complete or cancelled (tests). */
  int callsInFlight() {
    return handler.watch().size();
  }

  /** Whether the server has begun shutting down (tests). */
  boolean isShuttingDown() {
    Server s = server;
    return s != null && s.isShutdown();
  }

  /** The port the server listens on; see {@link #address()}. */
  public int port() {
    return address().getPort();
  }

  @Override
  @SuppressWarnings(
      "deprecation") // ProtoReflectionService serves v1alpha, which tools still ask for
  protected void doStart() throws Exception {
    // the certificate is read now: a start with unreadable material fails before anything runs
    ServerTlsNegotiator negotiator =
        tls == null
            ? null
            : new ServerTlsNegotiator(
                ReloadingSslContext.server(tls, List.of("h2")), tlsMode, "grpc inbound");
    ConnectionLimiter limiter = new ConnectionLimiter(limits.maxConnections());
    // grpc-java takes a server channel factory (the connection limit) only with our event loops.
    EventLoopGroup loops =
        NettyIo.get().newGroup(0, new DefaultThreadFactory("yarpc-grpc-inbound", true));
    NettyServerBuilder b =
        NettyServerBuilder.forAddress(requestedAddress)
            .channelFactory(limiter.serverChannels())
            .bossEventLoopGroup(loops)
            .workerEventLoopGroup(loops)
            .fallbackHandlerRegistry(handler)
            .addStreamTracerFactory(InboundHandler.streamTracers(executor == null))
            .addTransportFilter(new ConnectionInfos())
            .maxInboundMessageSize(limits.maxRequestSize())
            .maxInboundMetadataSize(limits.maxHeaderBytes())
            .maxConcurrentCallsPerConnection(limits.maxConcurrentCallsPerConnection())
            .maxRstFramesPerWindow(
                limits.maxRstFramesPerWindow(), wholeSeconds(limits.rstFramesWindow()))
            .maxConnectionIdle(nanos(limits.idleTimeout()), TimeUnit.NANOSECONDS)
            .handshakeTimeout(nanos(limits.handshakeTimeout()), TimeUnit.NANOSECONDS)
            .permitKeepAliveTime(nanos(limits.permitKeepAliveTime()), TimeUnit.NANOSECONDS)
            .permitKeepAliveWithoutCalls(limits.permitKeepAliveWithoutCalls());
    if (negotiator != null) {
      b.protocolNegotiator(negotiator);
    }
    if (limits.maxConnectionAge() != null) {
      b.maxConnectionAge(nanos(limits.maxConnectionAge()), TimeUnit.NANOSECONDS);
      b.maxConnectionAgeGrace(
          limits.maxConnectionAgeGrace() == null
              ? Long.MAX_VALUE // until its calls finish
              : nanos(limits.maxConnectionAgeGrace()),
          TimeUnit.NANOSECONDS);
    }
    if (health != null) {
      b.addService(handler.headerCountLimit().guard(health.bindService()));
    }
    if (reflection) {
      HeaderCountLimit limit = handler.headerCountLimit();
      b.addService(limit.guard(ProtoReflectionServiceV1.newInstance().bindService()));
      b.addService(limit.guard(ProtoReflectionService.newInstance().bindService()));
    }
    if (executor != null) {
      b.executor(executor);
    } else {
      b.directExecutor(); // call events only complete futures; handlers run on the dispatcher's
      // executor
    }
    try {
      Server started = b.build().start();
      server = started;
      for (SocketAddress a : started.getListenSockets()) {
        if (a instanceof InetSocketAddress) {
          listening = (InetSocketAddress) a;
          break;
        }
      }
    } catch (Exception | Error e) {
      shutDown(loops);
      throw e;
    }
    connections = limiter;
    eventLoops = loops;
    handler.watch().start(loops.next());
    if (health != null) {
      health.setServing(true);
    }
  }

  private static long nanos(Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
  }

  /** grpc-java counts resets per whole seconds: the window rounded up. */
  private static int wholeSeconds(Duration window) {
    long seconds = window.getSeconds() + (window.getNano() > 0 ? 1 : 0);
    return (int) Math.min(Integer.MAX_VALUE, Math.max(1, seconds));
  }

  private static void shutDown(EventLoopGroup loops) {
    loops.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
  }

  /**
   * Reports not-serving, stops accepting calls, ends open health watches, waits for calls in flight at most
   * the grace period, then cancels the rest (whose handlers see their calls cancelled) and closes the
   * connections.
   */
  @Override
  protected void doStop() throws InterruptedException {
    if (health != null) {
      health.setServing(false);
    }
    Server s = server;
    if (s == null) {
      return;
    }
    try {
      s.shutdown();
      if (health != null) {
        health.closeWatches(Status.UNAVAILABLE.withDescription("the server is stopping"));
      }
      if (!s.awaitTermination(gracePeriod.toNanos(), TimeUnit.NANOSECONDS)) {
        s.shutdownNow();
        s.awaitTermination(5, TimeUnit.SECONDS);
      }
    } finally {
      handler.watch().stop();
      EventLoopGroup loops = eventLoops;
      if (loops != null) {
        shutDown(loops);
      }
    }
  }

  @Override
  public String toString() {
    Server s = server;
    return "GrpcInbound{" + (s == null ? requestedAddress : s.getListenSockets()) + "}";
  }

  /** Builds a {@link GrpcInbound}; not thread-safe. Get one from {@link GrpcTransport#inboundBuilder}. */
  public static final class Builder {
    private final GrpcTransport transport;
    private final InetSocketAddress address;
    private InboundLimits limits = InboundLimits.defaults();
    private int maxSendMessageSize;
    private Duration gracePeriod;
    private Executor executor;
    private String defaultService;
    private DeadlinePolicy deadlinePolicy = DEFAULT_DEADLINE_POLICY;
    private boolean healthService = true;
    private boolean reflection = true;
    private TlsConfig tls;
    private TlsMode tlsMode = TlsMode.DISABLED;

    Builder(GrpcTransport transport, InetSocketAddress address) {
      this.transport = transport;
      this.address = address;
      this.maxSendMessageSize = transport.maxSendMessageSize();
      this.gracePeriod = transport.shutdownTimeout();
      this.executor = transport.executor();
    }

    /**
     * What the inbound bounds against peers that send too much, too slowly or too often (default {@link
     * InboundLimits#defaults()}); the class comment says what a peer gets for each. The largest request
     * message accepted is its {@link InboundLimits#maxRequestSize() maxRequestSize}.
     */
    public Builder limits(InboundLimits limits) {
      this.limits = requireNonNull(limits, "limits");
      return this;
    }

    /** The largest response message sent (default: the transport's, unlimited). */
    public Builder maxSendMessageSize(int bytes) {
      this.maxSendMessageSize = GrpcTransport.Builder.positive(bytes, "maxSendMessageSize");
      return this;
    }

    /** How long {@link GrpcInbound#stop()} lets calls in flight finish (default: the transport's). */
    public Builder gracePeriod(Duration gracePeriod) {
      requireNonNull(gracePeriod, "gracePeriod");
      if (gracePeriod.isNegative()) {
        throw new IllegalArgumentException("gracePeriod must not be negative: " + gracePeriod);
      }
      this.gracePeriod = gracePeriod;
      return this;
    }

    /** The executor grpc-java runs this server's call events on (default: the transport's, else direct). */
    public Builder executor(Executor executor) {
      this.executor = requireNonNull(executor, "executor");
      return this;
    }

    /**
     * The service of calls that name none (no {@code rpc-service}, as from a plain gRPC client); default:
     * the dispatcher's name.
     */
    public Builder defaultService(String service) {
      requireNonNull(service, "service");
      if (service.isEmpty()) {
        throw new IllegalArgumentException("defaultService must not be empty");
      }
      this.defaultService = service;
      return this;
    }

    /**
     * Whether the inbound serves {@code grpc.health.v1.Health} ({@code Check} and {@code Watch}; see the
     * class comment); default true. Turned off, health calls are routed like any other path (to a procedure
     * {@code grpc.health.v1.Health::Check} if one is registered).
     */
    public Builder healthService(boolean enabled) {
      this.healthService = enabled;
      return this;
    }

    /**
     * What calls without a deadline, or with a very distant one, are handled with; default: unary calls
     * without {@code grpc-timeout} get {@value GrpcInbound#DEFAULT_TIMEOUT_SECONDS} s, no cap (grpc-java
     * clients send no deadline unless told to). {@link DeadlinePolicy#strict()} refuses unary calls without
     * a deadline with {@code missing TTL}, as yarpc-go does.
     */
    public Builder deadlinePolicy(DeadlinePolicy policy) {
      this.deadlinePolicy = requireNonNull(policy, "policy");
      return this;
    }

    /**
     * Whether the inbound serves gRPC server reflection ({@code grpc.reflection.v1} and {@code v1alpha};
     * see the class comment); default true. Turned off, reflection calls are routed like any other path.
     */
    public Builder reflection(boolean enabled) {
      this.reflection = enabled;
      return this;
    }

    /**
     * Serves TLS only, with {@code config} ({@link TlsMode#ENFORCED}); the same as {@code tls(config,
     * TlsMode.ENFORCED)}.
     *
     * @throws IllegalArgumentException when {@code config} has no certificate
     */
    public Builder tls(TlsConfig config) {
      return tls(config, TlsMode.ENFORCED);
    }

    /**
     * Serves TLS with {@code config} as {@code mode} says (default: plaintext only, {@link
     * TlsMode#DISABLED}); see the class comment. The config's certificate is what the server presents;
     * its trusted certificates verify client certificates when its {@linkplain TlsConfig#clientAuth()
     * client auth} asks for them. {@link TlsMode#DISABLED} ignores the config.
     *
     * @throws IllegalArgumentException when {@code mode} is not {@code DISABLED} and {@code config} has
     *     no certificate
     */
    public Builder tls(TlsConfig config, TlsMode mode) {
      requireNonNull(config, "config");
      requireNonNull(mode, "mode");
      if (mode != TlsMode.DISABLED) {
        config.requireCertificate("the gRPC inbound");
      }
      this.tls = config;
      this.tlsMode = mode;
      return this;
    }

    /** The inbound, not started. */
    public GrpcInbound build() {
      return new GrpcInbound(this);
    }
  }
}
