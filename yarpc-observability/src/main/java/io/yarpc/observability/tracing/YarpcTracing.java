package io.yarpc.observability.tracing;

import static java.util.Objects.requireNonNull;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.baggage.propagation.W3CBaggagePropagator;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.extension.trace.propagation.JaegerPropagator;
import io.yarpc.Call;
import io.yarpc.Dispatcher;
import io.yarpc.observability.tracing.internal.CallTracer;
import io.yarpc.observability.tracing.internal.TracingMiddleware;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;

/**
 * Distributed tracing for a dispatcher through the OpenTelemetry API: one span per call, inbound and
 * outbound, unary, oneway and stream, and the trace context carried over every transport.
 *
 * <pre>{@code
 * OpenTelemetry otel = ...; // your SDK, or GlobalOpenTelemetry.get()
 * Dispatcher.Builder builder = Dispatcher.builder("gateway").inbound(...).outbound(...);
 * YarpcTracing.create(otel).install(builder); // before other middleware: tracing is then outermost
 * Dispatcher dispatcher = builder.build();
 * }</pre>
 *
 * <p><b>Spans.</b> An inbound call gets a {@link io.opentelemetry.api.trace.SpanKind#SERVER SERVER} span,
 * child of the context its caller sent (or a new trace); an outbound call gets a {@link
 * io.opentelemetry.api.trace.SpanKind#CLIENT CLIENT} span, child of the context current when it is made.
 * They follow OpenTelemetry's RPC semantic conventions (1.38 and later): name and {@code rpc.method} =
 * {@code <service>/<procedure>}; {@code rpc.system.name} = {@code grpc} over the gRPC transport, else
 * {@code yarpc}; {@code rpc.status_code} = the YARPC code's name ({@code OK}, {@code DEADLINE_EXCEEDED}...);
 * {@code error.type} on failure; {@code network.peer.address} and {@code network.peer.port} of the caller
 * on server spans; and {@code yarpc.caller}, {@code yarpc.service}, {@code yarpc.procedure}, {@code
 * yarpc.encoding}, {@code yarpc.transport}, {@code yarpc.rpc_type} ({@code unary}, {@code oneway}, {@code
 * streaming}), {@code yarpc.application_error} and {@code yarpc.application_error.name}. A client span
 * has status {@code ERROR} for any failure or application error; a server span only for the codes that
 * are the server's fault ({@code unknown}, {@code deadline-exceeded}, {@code internal}, {@code
 * unavailable}, {@code data-loss}). A server span ends when the handler's result completes, or when the
 * call is cancelled or its deadline passes, whichever is first; a client stream's span ends when the stream
 * does. A call the sampler drops costs its context, its propagation headers and two attributes; nothing
 * else is computed or waited for.
 *
 * <p><b>Propagation.</b> The context travels in the request's propagation headers ({@link
 * io.yarpc.transport.RequestMeta#propagationHeaders()}), which each transport carries where yarpc-go puts
 * its tracer's headers: plain HTTP headers, gRPC metadata, TChannel {@code $tracing$} headers. Inbound
 * calls accept the formats of {@link Builder#accept} (default: {@link PropagationFormat#W3C} and {@link
 * PropagationFormat#JAEGER}; when both are present, W3C wins); outbound calls write those of {@link
 * Builder#emit} (default: both, so yarpc-go services with a Jaeger tracer and W3C-speaking peers both
 * continue the trace). Baggage travels with the trace in the same formats. Not sampled calls propagate
 * their decision like any other.
 *
 * <p><b>In handlers.</b> The server span's context is {@linkplain Context#current() current} while the
 * handler runs on its thread, so outbound calls the handler makes continue the trace, and so do spans the
 * application starts itself. Work continued on another thread must carry it: {@link #wrap(Executor)} and
 * {@link #wrap(Runnable)} carry the OpenTelemetry context together with the YARPC {@link Call} (deadline,
 * cancellation); {@link Call#wrap(Runnable)} alone carries the call but not the trace.
 *
 * <p>Immutable and thread-safe; one instance may be installed on several dispatchers.
 */
public final class YarpcTracing {
  /** The instrumentation scope the spans are reported under. */
  public static final String INSTRUMENTATION_NAME = "io.yarpc";

  private final CallTracer tracer;

  private YarpcTracing(Builder b) {
    var tracerBuilder = b.openTelemetry.tracerBuilder(INSTRUMENTATION_NAME);
    String version = YarpcTracing.class.getPackage().getImplementationVersion();
    if (version != null) {
      tracerBuilder.setInstrumentationVersion(version);
    }
    Tracer otelTracer = tracerBuilder.build();
    this.tracer = new CallTracer(otelTracer, extractor(b.accept), injector(b.emit));
  }

  /** Tracing with the defaults of {@link Builder}. */
  public static YarpcTracing create(OpenTelemetry openTelemetry) {
    return builder(openTelemetry).build();
  }

  /** A builder of tracing that reports to {@code openTelemetry}'s tracer provider. */
  public static Builder builder(OpenTelemetry openTelemetry) {
    return new Builder(requireNonNull(openTelemetry, "openTelemetry"));
  }

  /**
   * Appends the six tracing middleware to {@code builder}: unary, oneway and stream, inbound and outbound.
   * Middleware runs in the order it was added, first outermost: install tracing before other middleware
   * so that its spans cover them and they see the call's context (a logging middleware can then read the
   * trace id). Returns {@code builder}.
   */
  public Dispatcher.Builder install(Dispatcher.Builder builder) {
    requireNonNull(builder, "builder");
    builder.unaryInboundMiddleware(TracingMiddleware.unaryInbound(tracer));
    builder.onewayInboundMiddleware(TracingMiddleware.onewayInbound(tracer));
    builder.streamInboundMiddleware(TracingMiddleware.streamInbound(tracer));
    builder.unaryOutboundMiddleware(TracingMiddleware.unaryOutbound(tracer));
    builder.onewayOutboundMiddleware(TracingMiddleware.onewayOutbound(tracer));
    builder.streamOutboundMiddleware(TracingMiddleware.streamOutbound(tracer));
    return builder;
  }

  /**
   * An executor that runs each task with the OpenTelemetry context and the YARPC {@link Call} that were
   * current when the task was handed to it, restoring what was current before once it ends. Use it for a
   * handler's asynchronous continuations ({@code thenApplyAsync(fn, YarpcTracing.wrap(pool))}) so that
   * outbound calls made there continue the trace, inherit the deadline and are cancelled with the call.
   */
  public static Executor wrap(Executor executor) {
    requireNonNull(executor, "executor");
    return task -> executor.execute(wrap(task));
  }

  /**
   * {@code task}, made to run with the OpenTelemetry context and the YARPC {@link Call} current now (a
   * call: only when one is current).
   */
  public static Runnable wrap(Runnable task) {
    requireNonNull(task, "task");
    Runnable withContext = Context.current().wrap(task);
    Call call = Call.current();
    return call == null ? withContext : call.wrap(withContext);
  }

  private static TextMapPropagator extractor(Set<PropagationFormat> formats) {
    // later propagators override earlier ones: Jaeger first, so W3C wins when a caller sends both
    List<TextMapPropagator> list = new ArrayList<>();
    if (formats.contains(PropagationFormat.JAEGER)) {
      list.add(JaegerPropagator.getInstance());
    }
    if (formats.contains(PropagationFormat.W3C)) {
      list.add(W3CTraceContextPropagator.getInstance());
      list.add(W3CBaggagePropagator.getInstance());
    }
    return TextMapPropagator.composite(list);
  }

  private static TextMapPropagator injector(Set<PropagationFormat> formats) {
    List<TextMapPropagator> list = new ArrayList<>();
    if (formats.contains(PropagationFormat.W3C)) {
      list.add(W3CTraceContextPropagator.getInstance());
      list.add(W3CBaggagePropagator.getInstance());
    }
    if (formats.contains(PropagationFormat.JAEGER)) {
      list.add(JaegerPropagator.getInstance());
    }
    return TextMapPropagator.composite(list);
  }

  /** Builds {@link YarpcTracing}; not thread-safe. */
  public static final class Builder {
    private final OpenTelemetry openTelemetry;
    private Set<PropagationFormat> accept = EnumSet.allOf(PropagationFormat.class);
    private Set<PropagationFormat> emit = EnumSet.allOf(PropagationFormat.class);

    private Builder(OpenTelemetry openTelemetry) {
      this.openTelemetry = openTelemetry;
    }

    /**
     * The formats inbound calls' context is read in; default {@link PropagationFormat#W3C} and {@link
     * PropagationFormat#JAEGER}. When a request carries both, W3C wins. None: every inbound call starts a
     * new trace.
     */
    public Builder accept(PropagationFormat... formats) {
      this.accept = formats(formats);
      return this;
    }

    /**
     * The formats outbound calls' context is written in; default {@link PropagationFormat#W3C} and {@link
     * PropagationFormat#JAEGER}, which costs two or three headers per call and is read by both
     * OpenTelemetry-instrumented peers and yarpc-go services with a Jaeger tracer. None: spans are still
     * recorded, but the next hop starts its own trace.
     */
    public Builder emit(PropagationFormat... formats) {
      this.emit = formats(formats);
      return this;
    }

    private static Set<PropagationFormat> formats(PropagationFormat... formats) {
      Set<PropagationFormat> set = EnumSet.noneOf(PropagationFormat.class);
      for (PropagationFormat f : requireNonNull(formats, "formats")) {
        set.add(requireNonNull(f, "format"));
      }
      return set;
    }

    /** The tracing. */
    public YarpcTracing build() {
      return new YarpcTracing(this);
    }
  }
}
