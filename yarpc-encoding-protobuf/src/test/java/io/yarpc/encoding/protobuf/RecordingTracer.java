package io.yarpc.encoding.protobuf;

import io.grpc.Attributes;
import io.grpc.ClientStreamTracer;
import io.grpc.Metadata;
import io.grpc.Status;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A grpc-java {@link ClientStreamTracer} that records the events it gets, in order. */
final class RecordingTracer extends ClientStreamTracer {
  final List<String> events = new CopyOnWriteArrayList<>();
  volatile long outboundBytes;
  volatile long inboundBytes;

  /** Makes one recording tracer per call. */
  static final class Factory extends ClientStreamTracer.Factory {
    final List<RecordingTracer> tracers = new CopyOnWriteArrayList<>();

    /** Puts this factory in every call's options, as grpc-java's instrumentation interceptors do. */
    io.grpc.ClientInterceptor interceptor() {
      return new io.grpc.ClientInterceptor() {
        @Override
        public <Q, R> io.grpc.ClientCall<Q, R> interceptCall(
            io.grpc.MethodDescriptor<Q, R> method,
            io.grpc.CallOptions options,
            io.grpc.Channel next) {
          return next.newCall(method, options.withStreamTracerFactory(Factory.this));
        }
      };
    }

    @Override
    public ClientStreamTracer newClientStreamTracer(StreamInfo info, Metadata headers) {
      RecordingTracer t = new RecordingTracer();
      tracers.add(t);
      return t;
    }
  }

  @Override
  public void streamCreated(Attributes transportAttrs, Metadata headers) {
    events.add("streamCreated");
  }

  @Override
  public void outboundHeaders() {
    events.add("outboundHeaders");
  }

  @Override
  public void outboundMessage(int seqNo) {
    events.add("outboundMessage(" + seqNo + ")");
  }

  @Override
  public void outboundMessageSent(int seqNo, long optionalWireSize, long optionalUncompressedSize) {
    events.add("outboundMessageSent(" + seqNo + ")");
    outboundBytes += optionalUncompressedSize;
  }

  @Override
  public void inboundHeaders() {
    events.add(
        "inboundHeaders"); // grpc-java's inboundHeaders(Metadata) calls this: seen once per call
  }

  @Override
  public void inboundMessage(int seqNo) {
    events.add("inboundMessage(" + seqNo + ")");
  }

  @Override
  public void inboundMessageRead(int seqNo, long optionalWireSize, long optionalUncompressedSize) {
    events.add("inboundMessageRead(" + seqNo + ")");
    inboundBytes += optionalUncompressedSize;
  }

  @Override
  public void inboundTrailers(Metadata trailers) {
    events.add("inboundTrailers");
  }

  @Override
  public void streamClosed(Status status) {
    events.add("streamClosed(" + status.getCode() + ")");
  }
}
