package io.yarpc.observability.tracing.internal;

import static io.opentelemetry.api.common.AttributeKey.booleanKey;
import static io.opentelemetry.api.common.AttributeKey.longKey;
import static io.opentelemetry.api.common.AttributeKey.stringKey;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.yarpc.transport.ConnectionInfo;
import io.yarpc.transport.Headers;
import io.yarpc.transport.RequestMeta;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * Starts the span of a call and moves its context in and out of the propagation headers. One per {@link
 * io.yarpc.observability.tracing.YarpcTracing}; thread-safe.
 *
 * <p>Spans follow OpenTelemetry's RPC semantic conventions as of 1.38 and later ({@code rpc.system.name},
 * fully-qualified {@code rpc.method}, {@code rpc.status_code}, {@code error.type}): the span's name is
 * {@code rpc.method}, which is {@code <service>/<procedure>}. Only the two attributes a sampler may use
 * ({@code rpc.system.name} and {@code rpc.method}) are computed for a call that is not sampled; the rest
 * are set only on a recording span.
 */
public final class CallTracer {
  /** {@code grpc} over the gRPC transport (a plain gRPC client can make the call), else {@code yarpc}. */
  static final AttributeKey<String> RPC_SYSTEM_NAME = stringKey("rpc.system.name");

  /** {@code <service>/<procedure>}. */
  static final AttributeKey<String> RPC_METHOD = stringKey("rpc.method");

  /** The YARPC code's name in gRPC's spelling ({@code OK}, {@code DEADLINE_EXCEEDED}...). */
  static final AttributeKey<String> RPC_STATUS_CODE = stringKey("rpc.status_code");

  /** A failed call's code name, an unexpected exception's class, or an application error's name. */
  static final AttributeKey<String> ERROR_TYPE = stringKey("error.type");

  static final AttributeKey<String> NETWORK_PEER_ADDRESS = stringKey("network.peer.address");
  static final AttributeKey<Long> NETWORK_PEER_PORT = longKey("network.peer.port");

  static final AttributeKey<String> YARPC_CALLER = stringKey("yarpc.caller");
  static final AttributeKey<String> YARPC_SERVICE = stringKey("yarpc.service");
  static final AttributeKey<String> YARPC_PROCEDURE = stringKey("yarpc.procedure");
  static final AttributeKey<String> YARPC_ENCODING = stringKey("yarpc.encoding");
  static final AttributeKey<String> YARPC_TRANSPORT = stringKey("yarpc.transport");
  static final AttributeKey<String> YARPC_RPC_TYPE = stringKey("yarpc.rpc_type");
  static final AttributeKey<Boolean> YARPC_APPLICATION_ERROR =
      booleanKey("yarpc.application_error");
  static final AttributeKey<String> YARPC_APPLICATION_ERROR_NAME =
      stringKey("yarpc.application_error.name");

  static final String SYSTEM_GRPC = "grpc";
  static final String SYSTEM_YARPC = "yarpc";

  private final Tracer tracer;
  private final TextMapPropagator extractor;
  private final TextMapPropagator injector;

  /**
   * A tracer that starts spans with {@code tracer}, reads inbound context with {@code extractor} and
   * writes outbound context with {@code injector}.
   */
  public CallTracer(Tracer tracer, TextMapPropagator extractor, TextMapPropagator injector) {
    this.tracer = tracer;
    this.extractor = extractor;
    this.injector = injector;
  }

  /**
   * Starts the server span of an inbound call, child of the context its propagation headers carry (with
   * the baggage they carry), or a root span when they carry none.
   */
  TracedCall startServer(RequestMeta meta, String rpcType) {
    Headers carried = meta.propagationHeaders();
    // nothing to read (a caller that does not trace): every propagator would return the root
    Context parent =
        carried.isEmpty()
            ? Context.root()
            : extractor.extract(Context.root(), carried, HeadersCarrier.GETTER);
    Span span = start(meta, SpanKind.SERVER, parent, rpcType);
    if (span.isRecording()) {
      ConnectionInfo connection = meta.connection();
      SocketAddress remote = connection == null ? null : connection.remoteAddress();
      if (remote instanceof InetSocketAddress) {
        InetSocketAddress inet = (InetSocketAddress) remote;
        span.setAttribute(
            NETWORK_PEER_ADDRESS,
            inet.getAddress() != null ? inet.getAddress().getHostAddress() : inet.getHostString());
        span.setAttribute(NETWORK_PEER_PORT, (long) inet.getPort());
      }
    }
    return new TracedCall(span, parent.with(span), false);
  }

  /** Starts the client span of an outbound call, child of the current context. */
  TracedCall startClient(RequestMeta meta, String rpcType) {
    Context parent = Context.current();
    Span span = start(meta, SpanKind.CLIENT, parent, rpcType);
    return new TracedCall(span, parent.with(span), true);
  }

  private Span start(RequestMeta meta, SpanKind kind, Context parent, String rpcType) {
    String method = meta.service() + '/' + meta.procedure();
    Span span =
        tracer
            .spanBuilder(method)
            .setSpanKind(kind)
            .setParent(parent)
            .setAttribute(RPC_SYSTEM_NAME, system(meta.transport()))
            .setAttribute(RPC_METHOD, method)
            .startSpan();
    if (span.isRecording()) {
      span.setAttribute(YARPC_CALLER, meta.caller());
      span.setAttribute(YARPC_SERVICE, meta.service());
      span.setAttribute(YARPC_PROCEDURE, meta.procedure());
      span.setAttribute(YARPC_ENCODING, meta.encoding());
      span.setAttribute(YARPC_TRANSPORT, meta.transport());
      span.setAttribute(YARPC_RPC_TYPE, rpcType);
    }
    return span;
  }

  static String system(String transport) {
    return SYSTEM_GRPC.equals(transport) ? SYSTEM_GRPC : SYSTEM_YARPC;
  }

  /**
   * {@code meta} with propagation headers holding {@code context} (trace and baggage) in the formats
   * this tracer writes; they replace any the request had. Not sampled contexts are written too, so the
   * next hop keeps the decision.
   */
  RequestMeta inject(RequestMeta meta, Context context) {
    Headers.Builder headers = Headers.builder();
    injector.inject(context, headers, HeadersCarrier.SETTER);
    return meta.toBuilder().propagationHeaders(headers.build()).build();
  }
}
