package io.yarpc.observability.metrics.internal;

import static java.util.Objects.requireNonNull;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.yarpc.errors.Code;
import io.yarpc.observability.observer.internal.CallObserver;
import io.yarpc.observability.observer.internal.Direction;
import io.yarpc.observability.observer.internal.ObservedCall;
import io.yarpc.observability.observer.internal.Outcome;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.RpcType;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The service graph as yarpc-go's observability middleware keeps it ({@code internal/observability/
 * graph.go}): one {@link Edge} per distinct tag tuple, its meters made once and found again for every
 * later call through a concurrent map keyed by the raw tuple — a call costs one small key object and a
 * map lookup, no string building; scrubbing and meter registration happen once per edge.
 *
 * <p><b>Bounded.</b> A peer chooses some of the tags of the calls it sends (caller, encoding, routing key
 * and delegate) and a caller chooses the procedure names it calls, so the number of edges is capped per
 * direction ({@code maxEdges}); past the cap, a call of a tuple not seen before is counted on its
 * direction's overflow edge, whose {@code source}, {@code dest}, {@code procedure}, {@code encoding},
 * {@code routing_key} and {@code routing_delegate} are {@value #OVERFLOW} (the dispatcher, {@code
 * direction}, {@code rpc_type} and {@code transport} stay: their values are few). Reaching the cap is
 * logged once per direction. Names of unknown procedures and services never get here: the router refuses
 * them before any inbound middleware.
 */
public final class MetricsGraph implements CallObserver {
  /** The value of the tags of the overflow edges. */
  public static final String OVERFLOW = "__overflow__";

  /** The value of a dropped tag (yarpc-go's {@code _droppedTagValue}). */
  public static final String DROPPED = "__dropped__";

  /** yarpc-go's tag names, in its order. */
  public static final List<String> TAG_NAMES =
      List.of(
          "source",
          "dest",
          "transport",
          "procedure",
          "encoding",
          "routing_key",
          "routing_delegate",
          "direction",
          "rpc_type");

  private static final Logger log = LoggerFactory.getLogger(MetricsGraph.class);

  /**
   * The raw tag tuple of an edge: values before scrubbing, a dropped tag {@link #DROPPED} — except the
   * direction and rpc type, which stay in the key when their tags are dropped, since an edge's meters
   * depend on them (edges that differ only there then share their meters, which have the same tags).
   */
  private record EdgeKey(
      String dispatcher,
      Direction direction,
      RpcType rpcType,
      String source,
      String dest,
      String transport,
      String procedure,
      String encoding,
      String routingKey,
      String routingDelegate) {}

  private final MeterRegistry registry;
  private final int maxEdges;
  private final boolean dropSource;
  private final boolean dropDest;
  private final boolean dropTransport;
  private final boolean dropProcedure;
  private final boolean dropEncoding;
  private final boolean dropRoutingKey;
  private final boolean dropRoutingDelegate;
  private final boolean dropDirection;
  private final boolean dropRpcType;

  private final Map<EdgeKey, Edge> edges = new ConcurrentHashMap<>();
  private final Map<EdgeKey, Edge> overflowEdges = new ConcurrentHashMap<>();
  private final AtomicInteger[] edgeCounts = {new AtomicInteger(), new AtomicInteger()};
  private final boolean[] capLogged = new boolean[2];
  // streams_active state per exported tag set: edges whose raw tuples scrub alike share one gauge
  private final Map<Tags, AtomicLong> activeStreams = new ConcurrentHashMap<>();

  /**
   * A graph registering its meters in {@code registry}, with at most {@code maxEdges} edges per
   * direction, and the tags named in {@code droppedTags} (from {@link #TAG_NAMES}) set to {@value
   * #DROPPED}.
   */
  public MetricsGraph(MeterRegistry registry, int maxEdges, Set<String> droppedTags) {
    this.registry = requireNonNull(registry, "registry");
    this.maxEdges = maxEdges;
    this.dropSource = droppedTags.contains("source");
    this.dropDest = droppedTags.contains("dest");
    this.dropTransport = droppedTags.contains("transport");
    this.dropProcedure = droppedTags.contains("procedure");
    this.dropEncoding = droppedTags.contains("encoding");
    this.dropRoutingKey = droppedTags.contains("routing_key");
    this.dropRoutingDelegate = droppedTags.contains("routing_delegate");
    this.dropDirection = droppedTags.contains("direction");
    this.dropRpcType = droppedTags.contains("rpc_type");
  }

  /** Edges made so far, overflow edges included (for tests). */
  public int edgeCount() {
    return edges.size() + overflowEdges.size();
  }

  @Override
  public void begin(ObservedCall call) {
    call.attach(this, edge(call));
  }

  private Edge edge(ObservedCall call) {
    RequestMeta m = call.meta();
    EdgeKey key =
        new EdgeKey(
            call.dispatcher(),
            call.direction(),
            call.rpcType(),
            dropSource ? DROPPED : m.caller(),
            dropDest ? DROPPED : m.service(),
            dropTransport ? DROPPED : m.transport(),
            dropProcedure ? DROPPED : m.procedure(),
            dropEncoding ? DROPPED : m.encoding(),
            dropRoutingKey ? DROPPED : m.routingKey(),
            dropRoutingDelegate ? DROPPED : m.routingDelegate());
    Edge e = edges.get(key);
    return e != null ? e : newEdge(key, call);
  }

  private Edge newEdge(EdgeKey key, ObservedCall call) {
    int d = call.direction().ordinal();
    if (edgeCounts[d].get() < maxEdges) {
      synchronized (this) {
        Edge e = edges.get(key);
        if (e != null) {
          return e;
        }
        if (edgeCounts[d].get() < maxEdges) {
          e = makeEdge(key);
          edges.put(key, e);
          edgeCounts[d].incrementAndGet();
          return e;
        }
      }
    }
    return overflowEdge(key, call);
  }

  private Edge overflowEdge(EdgeKey key, ObservedCall call) {
    EdgeKey overflow =
        new EdgeKey(
            key.dispatcher(),
            key.direction(),
            key.rpcType(),
            OVERFLOW,
            OVERFLOW,
            key.transport(),
            OVERFLOW,
            OVERFLOW,
            OVERFLOW,
            OVERFLOW);
    Edge e = overflowEdges.get(overflow);
    if (e == null) {
      synchronized (this) {
        e = overflowEdges.get(overflow);
        if (e == null) {
          e = makeEdge(overflow);
          overflowEdges.put(overflow, e);
        }
        int d = call.direction().ordinal();
        if (!capLogged[d]) {
          capLogged[d] = true;
          log.warn(
              "dispatcher {} has {} metric edges for {} calls, its limit (maxEdges): calls of tag"
                  + " combinations not seen before are counted with the tags set to {}",
              key.dispatcher(),
              maxEdges,
              call.direction().value(),
              OVERFLOW);
        }
      }
    }
    return e;
  }

  private Edge makeEdge(EdgeKey key) {
    String transport = key.transport().isEmpty() ? "unknown" : key.transport();
    Tags tags =
        Tags.of(
                "component", "yarpc",
                "dispatcher", TagValues.scrub(key.dispatcher()),
                "source", TagValues.scrub(key.source()),
                "dest", TagValues.scrub(key.dest()),
                "transport", TagValues.scrub(transport),
                "procedure", TagValues.scrub(key.procedure()),
                "encoding", TagValues.scrub(key.encoding()),
                "routing_key", TagValues.scrub(key.routingKey()),
                "routing_delegate", TagValues.scrub(key.routingDelegate()))
            .and(
                "direction",
                dropDirection ? DROPPED : key.direction().value(),
                "rpc_type",
                dropRpcType ? DROPPED : key.rpcType().toString());
    boolean streaming = key.rpcType() == RpcType.STREAMING;
    return new Edge(
        registry,
        tags,
        key.rpcType() == RpcType.UNARY,
        streaming,
        key.direction() == Direction.INBOUND,
        streaming ? activeStreams.computeIfAbsent(tags, t -> new AtomicLong()) : null);
  }

  // In each method the count a reader waits for comes last (calls; streams_active when a stream
  // closes): whoever sees it sees everything else the call recorded.

  @Override
  public void end(ObservedCall call, Outcome outcome) {
    Edge e = (Edge) call.attachment(this);
    if (call.panicked()) {
      e.panics.increment();
    }
    if (call.hasDeadline()) {
      e.ttl.record(millis(call.ttlNanos()));
    }
    if (call.requestBytes() >= 0) {
      e.requestSize.record(call.requestBytes());
    }
    double elapsed = millis(call.elapsedNanos());
    if (outcome.isSuccess()) {
      e.successes.increment();
      e.successLatency.record(elapsed);
      if (e.responseSize != null && call.responseBytes() >= 0) {
        e.responseSize.record(call.responseBytes());
      }
    } else {
      e.failureLatency(outcome.isCallerFailure()).record(elapsed);
      e.countFailure(outcome, true);
      if (outcome.isServerFailure()
          && outcome.code() == Code.DEADLINE_EXCEEDED
          && call.hasDeadline()) {
        e.timeoutTtl().record(millis(call.ttlNanos()));
      }
    }
    e.calls.increment();
  }

  @Override
  public void streamOpened(ObservedCall call, Outcome outcome) {
    Edge e = (Edge) call.attachment(this);
    if (outcome.isSuccess()) {
      e.successes.increment();
      e.streamsActive.incrementAndGet();
    } else {
      if (call.panicked()) {
        e.panics.increment();
      }
      e.countFailure(outcome, false);
    }
    e.calls.increment();
  }

  @Override
  public void streamMessage(ObservedCall call, boolean sent, long bytes, String error) {
    Edge e = (Edge) call.attachment(this);
    if (sent) {
      if (e.streamResponseSize != null && bytes >= 0) {
        e.streamResponseSize.record(bytes);
      }
      if (error == null) {
        e.sendSuccesses.increment();
      } else {
        e.streamFailures(true, error).increment();
      }
      e.sends.increment();
    } else {
      if (error == null) {
        e.receiveSuccesses.increment();
        if (e.streamRequestSize != null && bytes >= 0) {
          e.streamRequestSize.record(bytes);
        }
      } else {
        e.streamFailures(false, error).increment();
      }
      e.receives.increment();
    }
  }

  @Override
  public void streamClosed(ObservedCall call, Outcome outcome) {
    Edge e = (Edge) call.attachment(this);
    if (call.panicked()) {
      e.panics.increment();
    }
    e.streamDuration.record(millis(call.elapsedNanos()));
    if (!outcome.isSuccess()) {
      e.countFailure(outcome, false);
    }
    e.streamsActive.decrementAndGet();
  }

  private static double millis(long nanos) {
    return nanos / 1_000_000.0;
  }

  @Override
  public String toString() {
    return "MetricsGraph{" + registry.getClass().getSimpleName() + ", " + edgeCount() + " edges}";
  }
}
