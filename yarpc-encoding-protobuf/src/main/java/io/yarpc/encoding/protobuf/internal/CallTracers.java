package io.yarpc.encoding.protobuf.internal;

import io.grpc.Attributes;
import io.grpc.CallOptions;
import io.grpc.ClientStreamTracer;
import io.grpc.Metadata;
import io.grpc.Status;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drives the {@link ClientStreamTracer} factories a stub put in its {@link CallOptions} (grpc-java's own
 * instrumentation: census, OpenTelemetry, custom tracers) through one call over a {@code YarpcChannel},
 * in the order grpc-java's transports drive them for one attempt: {@code streamCreated}, {@code
 * outboundHeaders}, per message sent {@code outboundMessage}, sizes and {@code outboundMessageSent}, then
 * {@code inboundHeaders(Metadata)}, per message received {@code inboundMessage}, sizes and {@code
 * inboundMessageRead}, and last {@code inboundTrailers} and {@code streamClosed} (once; a call that failed
 * before it went out, e.g. past its deadline, gets {@code streamClosed} alone). Message sizes are
 * the encoded YARPC bodies' (the transport's compression is not seen here, so wire and uncompressed sizes
 * are the same).
 *
 * <p>Thread-safety: outbound events come from the caller's thread, inbound ones from the call's serial
 * executor (grpc-java's calling rules keep each side sequential); closing is once, from either. A tracer
 * that throws is logged and does not fail the call.
 */
final class CallTracers {
  private static final Logger log = LoggerFactory.getLogger(CallTracers.class);
  private static final ClientStreamTracer[] NONE = new ClientStreamTracer[0];

  private final ClientStreamTracer[] tracers;
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile boolean started;
  private int sent;
  private int received;

  private CallTracers(ClientStreamTracer[] tracers) {
    this.tracers = tracers;
  }

  /** The tracers of {@code options}' factories for a call sending {@code headers}. */
  static CallTracers create(CallOptions options, Metadata headers) {
    List<ClientStreamTracer.Factory> factories = options.getStreamTracerFactories();
    if (factories.isEmpty()) {
      return new CallTracers(NONE);
    }
    ClientStreamTracer.StreamInfo info =
        ClientStreamTracer.StreamInfo.newBuilder()
            .setCallOptions(options)
            .setPreviousAttempts(0)
            .setIsTransparentRetry(false)
            .build();
    ClientStreamTracer[] tracers = new ClientStreamTracer[factories.size()];
    for (int i = 0; i < tracers.length; i++) {
      tracers[i] = factories.get(i).newClientStreamTracer(info, headers);
    }
    return new CallTracers(tracers);
  }

  /** The call is going out with {@code headers}. */
  void started(Metadata headers) {
    started = true;
    for (ClientStreamTracer t : tracers) {
      safely(
          () -> {
            t.streamCreated(Attributes.EMPTY, headers);
            t.outboundHeaders();
          });
    }
  }

  /** A message of {@code size} bytes was sent. */
  void sent(long size) {
    if (tracers.length == 0) {
      return;
    }
    int seq = sent++;
    for (ClientStreamTracer t : tracers) {
      safely(
          () -> {
            t.outboundMessage(seq);
            t.outboundUncompressedSize(size);
            t.outboundWireSize(size);
            t.outboundMessageSent(seq, size, size);
          });
    }
  }

  /** The response headers arrived. */
  void headers(Metadata headers) {
    for (ClientStreamTracer t : tracers) {
      safely(() -> t.inboundHeaders(headers)); // its default calls inboundHeaders(), as grpc-java's
    }
  }

  /** A message of {@code size} bytes was received. */
  void received(long size) {
    if (tracers.length == 0) {
      return;
    }
    int seq = received++;
    for (ClientStreamTracer t : tracers) {
      safely(
          () -> {
            t.inboundMessage(seq);
            t.inboundWireSize(size);
            t.inboundUncompressedSize(size);
            t.inboundMessageRead(seq, size, size);
          });
    }
  }

  /** The call closed with {@code status} and {@code trailers}; only the first close counts. */
  void closed(Status status, Metadata trailers) {
    if (tracers.length == 0 || !closed.compareAndSet(false, true)) {
      return;
    }
    boolean wentOut = started; // a call that failed before it went out gets streamClosed alone
    for (ClientStreamTracer t : tracers) {
      safely(
          () -> {
            if (wentOut) {
              t.inboundTrailers(trailers);
            }
            t.streamClosed(status);
          });
    }
  }

  private static void safely(Runnable event) {
    try {
      event.run();
    } catch (RuntimeException e) {
      log.warn("a grpc ClientStreamTracer threw; the call goes on", e);
    }
  }
}
