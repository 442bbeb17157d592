package io.yarpc.transport.grpc.internal;

import io.grpc.Context;
import io.grpc.HandlerRegistry;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServerStreamTracer;
import io.grpc.Status;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.HandlerSpec;
import io.yarpc.transport.InboundCalls;
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Router;
import io.yarpc.transport.RpcType;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The inbound's one gRPC handler: registered as the server's fallback registry, it accepts every
 * {@code /Service/Method} path, turns the call's metadata and its connection ({@link ConnectionInfos}:
 * addresses, TLS session, the client's certificate) into a {@link RequestMeta}, asks the router for
 * the procedure, applies the inbound's {@link DeadlinePolicy} and serves the call as a unary call ({@link
 * UnaryServerCall}) or a stream ({@link GrpcServerStream}). Oneway procedures are refused with {@code
 * unimplemented}.
 *
 * <p>Limits: a unary call's request must arrive within the read timeout (and before its deadline, which
 * runs from the headers), and a response must be written within the write timeout (see {@link
 * UnaryServerCall}, {@link GrpcServerStream}); the rest of the inbound's limits are grpc-java settings
 * and the server's {@link HeaderCountLimit} and {@link ConnectionLimiter}.
 *
 * <p>Its {@link #getServices()} — which grpc-java's server reports as its mutable services, and its
 * reflection service indexes — are the router's protobuf services ({@link RegisteredServices}), so
 * reflection lists and describes what the dispatcher serves; {@link #serviceNames()} feeds the health
 * service.
 */
public final class InboundHandler extends HandlerRegistry implements ServerCallHandler<Body, Body> {
  private static final int METHOD_CACHE_LIMIT = 1024;
  private static final ServerCall.Listener<Body> NOOP = new ServerCall.Listener<>() {};

  /** gRPC carries unary calls and streams; oneway is not part of it. */
  private static final Set<RpcType> HANDLED = EnumSet.of(RpcType.UNARY, RpcType.STREAMING);

  private final BodyMarshaller marshaller;
  private final long maxSendMessageSize;
  private final String defaultService;
  private final DeadlinePolicy deadlinePolicy;
  private final long readTimeoutNanos;
  private final long writeTimeoutNanos;
  private final CallWatch watch;
  private final HeaderCountLimit headerCountLimit;
  private final ServerCallHandler<Body, Body> guarded; // this, behind the header count limit
  private final Map<String, ServerMethodDefinition<Body, Body>> methods = new ConcurrentHashMap<>();
  private final RegisteredServices registered;
  private volatile Router router;

  /**
   * A handler that receives with {@code marshaller}, refuses to send more than {@code maxSendMessageSize},
   * gives calls that name no service {@code defaultService} (null: the router's), applies {@code
   * deadlinePolicy} to every call and the read and write timeouts of {@code limits}; its calls' timeouts
   * are checked by {@link #watch()} once that is started.
   */
  public InboundHandler(
      BodyMarshaller marshaller,
      long maxSendMessageSize,
      String defaultService,
      DeadlinePolicy deadlinePolicy,
      InboundLimits limits) {
    this.marshaller = marshaller;
    this.maxSendMessageSize = maxSendMessageSize;
    this.defaultService = defaultService;
    this.deadlinePolicy = deadlinePolicy;
    this.readTimeoutNanos = saturatedNanos(limits.readTimeout());
    this.writeTimeoutNanos = saturatedNanos(limits.writeTimeout());
    long shortest = Math.min(readTimeoutNanos, writeTimeoutNanos);
    if (deadlinePolicy.defaultTimeout() != null) {
      shortest = Math.min(shortest, saturatedNanos(deadlinePolicy.defaultTimeout()));
    }
    if (deadlinePolicy.maxTimeout() != null) {
      shortest = Math.min(shortest, saturatedNanos(deadlinePolicy.maxTimeout()));
    }
    this.watch = new CallWatch(CallWatch.intervalFor(shortest));
    this.registered = new RegisteredServices(marshaller, this);
    this.headerCountLimit = new HeaderCountLimit(limits.maxHeaderCount());
    this.guarded = headerCountLimit.guard(this);
  }

  /**
   * The limit on metadata entries ({@code InboundLimits.maxHeaderCount}) this handler's calls are
   * checked against; the inbound puts its other services (health, reflection) behind it too.
   */
  public HeaderCountLimit headerCountLimit() {
    return headerCountLimit;
  }

  /** What checks the calls' read and write timeouts; the inbound starts and stops it. */
  public CallWatch watch() {
    return watch;
  }

  /**
   * The stream tracers the server must have for the inbound to reset streams (its read and write
   * timeouts; see {@link StreamReset}): {@code directExecutor} says whether the server runs call events
   * on the transport's threads ({@code NettyServerBuilder.directExecutor()}).
   */
  public static ServerStreamTracer.Factory streamTracers(boolean directExecutor) {
    return directExecutor ? StreamReset.directTracers() : StreamReset.tracers();
  }

  /** Sets the router calls are served from. */
  public void setRouter(Router router) {
    this.router = router;
  }

  /**
   * The protobuf services the router serves, for reflection: grpc-java's {@code Server.getMutableServices()}
   * returns the fallback registry's services, and its reflection service reads them at the start of each
   * reflection stream, so services registered after start are listed too.
   */
  @Override
  public List<ServerServiceDefinition> getServices() {
    return registered.definitions(router);
  }

  /** The service names health checks answer for (see {@link RegisteredServices}). */
  public Set<String> serviceNames() {
    return registered.names(router);
  }

  @Override
  public ServerMethodDefinition<?, ?> lookupMethod(String methodName, String authority) {
    ServerMethodDefinition<Body, Body> definition = methods.get(methodName);
    if (definition == null) {
      MethodDescriptor<Body, Body> descriptor =
          MethodDescriptor.<Body, Body>newBuilder()
              .setType(MethodDescriptor.MethodType.UNKNOWN)
              .setFullMethodName(methodName)
              .setRequestMarshaller(marshaller)
              .setResponseMarshaller(marshaller)
              .build();
      definition = ServerMethodDefinition.create(descriptor, guarded);
      if (methods.size() < METHOD_CACHE_LIMIT) {
        methods.put(methodName, definition);
      }
    }
    return definition;
  }

  @Override
  public ServerCall.Listener<Body> startCall(ServerCall<Body, Body> call, Metadata headers) {
    Router r = router;
    if (r == null) {
      call.close(Status.UNAVAILABLE.withDescription("grpc inbound has no router"), new Metadata());
      return NOOP;
    }
    InboundCalls.Routed routed;
    try {
      String procedure = Procedures.toProcedure(call.getMethodDescriptor().getFullMethodName());
      // grpc-java runs startCall in the call's context, whose deadline comes from grpc-timeout.
      io.grpc.Deadline grpcDeadline = Context.current().getDeadline();
      Deadline deadline =
          grpcDeadline == null
              ? null
              : Deadline.after(
                  grpcDeadline.timeRemaining(TimeUnit.NANOSECONDS), TimeUnit.NANOSECONDS);
      RequestMeta meta =
          Metadatas.toRequestMeta(
              headers,
              procedure,
              deadline,
              defaultService != null ? defaultService : r.defaultService(),
              ConnectionInfos.of(call));
      routed = InboundCalls.route(r, meta, "grpc", HANDLED, deadlinePolicy);
    } catch (RuntimeException e) {
      call.close(GrpcErrors.toPlainStatus(YarpcException.from(e)), new Metadata());
      return NOOP;
    }
    HandlerSpec spec = routed.spec();
    StreamReset reset = StreamReset.ofCall(headers);
    return spec.type() == RpcType.UNARY
        ? new UnaryServerCall(
                call,
                routed.meta(),
                spec.unary(),
                maxSendMessageSize,
                headers.containsKey(Metadatas.key(Metadatas.CALLER)),
                reset,
                watch,
                writeTimeoutNanos)
            .start(readTimeoutNanos)
        : new GrpcServerStream(
                call,
                routed.meta(),
                maxSendMessageSize,
                reset,
                watch,
                readTimeoutNanos,
                writeTimeoutNanos)
            .start(spec.streaming());
  }

  private static long saturatedNanos(java.time.Duration d) {
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
  }
}
