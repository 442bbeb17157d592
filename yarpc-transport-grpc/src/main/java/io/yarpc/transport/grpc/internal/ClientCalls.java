package io.yarpc.transport.grpc.internal;

import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.peer.Peer;
import io.yarpc.peer.PeerChooser;
import io.yarpc.transport.Body;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * What an outbound's calls share: the peer chooser, the marshaller, method descriptors (cached per path)
 * and the per-call options (deadline, size limits, compression).
 */
public final class ClientCalls {
  private static final int METHOD_CACHE_LIMIT = 1024;

  private final PeerChooser chooser;
  private final BodyMarshaller marshaller;
  private final long maxSendMessageSize;
  private final int maxReceiveMessageSize;
  private final String compressor;
  private final Map<String, MethodDescriptor<Body, Body>> unaryMethods = new ConcurrentHashMap<>();
  private final Map<String, MethodDescriptor<Body, Body>> streamMethods = new ConcurrentHashMap<>();

  /**
   * Settings for one outbound.
   *
   * @param compressor a grpc-java compressor name (e.g. {@code gzip}) for requests, or null for none
   */
  public ClientCalls(
      PeerChooser chooser,
      BodyMarshaller marshaller,
      long maxSendMessageSize,
      int maxReceiveMessageSize,
      String compressor) {
    this.chooser = chooser;
    this.marshaller = marshaller;
    this.maxSendMessageSize = maxSendMessageSize;
    this.maxReceiveMessageSize = maxReceiveMessageSize;
    this.compressor = compressor;
  }

  /** Sends a unary call; see {@link UnaryClientCall}. The outbound owns the request body from now on. */
  public CompletableFuture<Response> unary(Request request) {
    return UnaryClientCall.start(this, request);
  }

  /** Opens a stream; see {@link GrpcClientStream}. */
  public CompletableFuture<ClientStream> stream(RequestMeta meta) {
    return GrpcClientStream.open(this, meta);
  }

  /** The chooser that picks each call's peer. */
  public PeerChooser chooser() {
    return chooser;
  }

  /** The largest message this outbound sends. */
  public long maxSendMessageSize() {
    return maxSendMessageSize;
  }

  /** The descriptor for a path; {@code stream} for streaming calls, else unary. */
  MethodDescriptor<Body, Body> method(String fullMethodName, boolean stream) {
    Map<String, MethodDescriptor<Body, Body>> cache = stream ? streamMethods : unaryMethods;
    MethodDescriptor<Body, Body> m = cache.get(fullMethodName);
    if (m == null) {
      m =
          MethodDescriptor.<Body, Body>newBuilder()
              .setType(
                  stream
                      ? MethodDescriptor.MethodType.BIDI_STREAMING
                      : MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(fullMethodName)
              .setRequestMarshaller(marshaller)
              .setResponseMarshaller(marshaller)
              .build();
      if (cache.size() < METHOD_CACHE_LIMIT) {
        cache.put(fullMethodName, m);
      }
    }
    return m;
  }

  /** Call options for a call with this deadline (null: none). */
  CallOptions options(Deadline deadline) {
    CallOptions options = CallOptions.DEFAULT.withMaxInboundMessageSize(maxReceiveMessageSize);
    if (maxSendMessageSize < Integer.MAX_VALUE) {
      options = options.withMaxOutboundMessageSize((int) maxSendMessageSize);
    }
    if (deadline != null) {
      options = options.withDeadlineAfter(deadline.remainingNanos(), TimeUnit.NANOSECONDS);
    }
    if (compressor != null) {
      options = options.withCompression(compressor);
    }
    return options;
  }

  /**
   * The gRPC peer behind a chosen peer (a released one refuses its calls: {@link GrpcPeer#startCall}).
   *
   * @throws YarpcException {@code internal} when another transport made it
   */
  static GrpcPeer grpcPeer(Peer peer) {
    if (peer instanceof GrpcPeer) {
      return (GrpcPeer) peer;
    }
    throw YarpcException.of(
        Code.INTERNAL,
        "peer %s was not made by the grpc transport (%s)",
        peer.identifier(),
        peer.getClass().getName());
  }

  /** The error for a message larger than the send limit. */
  YarpcException tooLarge(String what, long length) {
    return YarpcException.of(
        Code.RESOURCE_EXHAUSTED,
        "%s of %d bytes is larger than the maximum send size of %d bytes",
        what,
        length,
        maxSendMessageSize);
  }

  /** Whether the message is larger than the send limit. */
  boolean tooLarge(Body body) {
    return body.length() > maxSendMessageSize;
  }

  /** The deadline-less check that the meta names a procedure gRPC can address. */
  static String fullMethodName(RequestMeta meta) {
    return Procedures.toFullMethodName(meta.procedure());
  }
}
