package io.yarpc.transport.grpc;

import static java.util.Objects.requireNonNull;

import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Checks;
import io.yarpc.peer.HasPeerChooser;
import io.yarpc.peer.PeerChooser;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.StreamOutbound;
import io.yarpc.transport.Transport;
import io.yarpc.transport.UnaryOutbound;
import io.yarpc.transport.grpc.internal.ClientCalls;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Sends unary calls and opens streams over gRPC to the peers a {@link PeerChooser} picks, as yarpc-go's
 * gRPC outbound does (docs/spec/wire-grpc.md §4): procedure {@code Svc::Method} goes to {@code /Svc/Method},
 * {@code m} to {@code /__default__/m}; the request's metadata travels as {@code rpc-*} metadata, its
 * application headers as plain metadata (a header named {@code rpc-...}, or with CR, LF or NUL in its
 * value, fails the call with {@code invalid-argument}, and so does any value that is not printable ASCII,
 * which gRPC metadata cannot carry; empty values are not sent); the deadline as {@code grpc-timeout}.
 *
 * <p>Responses: headers come from the response metadata and trailers; a gRPC error status becomes a
 * {@link YarpcException} with the same code, the name from {@code rpc-error-name} and the
 * {@code google.rpc.Status} of {@code grpc-status-details-bin} as details; a response message that came
 * with an error travels in {@link YarpcException#response()}. A response from another service than the
 * one called ({@code rpc-service}) fails with {@code internal}.
 *
 * <p>Ownership: the outbound owns a request body from the call on and releases it once handed to
 * grpc-java; the caller owns the response body, which is byte access over grpc-java's received buffers
 * (release it after decoding). Cancelling the returned future cancels the call on the wire; anything that
 * arrives later is released here. Stream messages follow {@link io.yarpc.transport.MessageStream}.
 *
 * <p>Lifecycle: starting the outbound starts its chooser, stopping it stops the chooser (which releases
 * its peers). Get one from {@link GrpcTransport#outbound}, {@link GrpcTransport#singleOutbound} or
 * {@link GrpcTransport#outboundBuilder}.
 */
public final class GrpcOutbound extends AbstractLifecycle
    implements UnaryOutbound, StreamOutbound, HasPeerChooser {
  private final GrpcTransport transport;
  private final ClientCalls calls;
  private volatile boolean running;
  private volatile boolean stopped;

  private GrpcOutbound(Builder b) {
    this.transport = b.transport;
    this.calls =
        new ClientCalls(
            b.chooser,
            transport.marshaller(),
            b.maxSendMessageSize,
            b.maxReceiveMessageSize,
            b.compressor);
  }

  /**
   * A builder for an outbound of {@code transport} whose calls go to the peers {@code chooser} picks; the
   * same as {@link GrpcTransport#outboundBuilder}.
   */
  public static Builder builder(GrpcTransport transport, PeerChooser chooser) {
    return requireNonNull(transport, "transport").outboundBuilder(chooser);
  }

  /** The chooser that picks the peer of each call. */
  @Override
  public PeerChooser chooser() {
    return calls.chooser();
  }

  @Override
  public String transportName() {
    return GrpcTransport.NAME;
  }

  @Override
  public List<Transport> transports() {
    return List.of(transport);
  }

  @Override
  public CompletableFuture<Response> call(Request request) {
    requireNonNull(request, "request");
    if (!running) {
      request.body().release();
      return CompletableFuture.failedFuture(notRunning());
    }
    return calls.unary(request);
  }

  @Override
  public CompletableFuture<ClientStream> callStream(RequestMeta meta) {
    requireNonNull(meta, "meta");
    if (!running) {
      return CompletableFuture.failedFuture(notRunning());
    }
    return calls.stream(meta);
  }

  private YarpcException notRunning() {
    return Checks.notRunning("grpc outbound");
  }

  @Override
  protected void doStart() {
    calls.chooser().start();
    running = true;
  }

  @Override
  protected void doStop() {
    running = false;
    stopped = true;
    calls.chooser().stop();
  }

  @Override
  public String toString() {
    return "GrpcOutbound{" + calls.chooser() + "}";
  }

  /** Builds a {@link GrpcOutbound}; not thread-safe. Get one from {@link GrpcTransport#outboundBuilder}. */
  public static final class Builder {
    private final GrpcTransport transport;
    private final PeerChooser chooser;
    private int maxReceiveMessageSize;
    private long maxSendMessageSize;
    private String compressor;

    Builder(GrpcTransport transport, PeerChooser chooser) {
      this.transport = transport;
      this.chooser = chooser;
      this.maxReceiveMessageSize = transport.maxReceiveMessageSize();
      this.maxSendMessageSize = transport.maxSendMessageSize();
    }

    /** The largest response message accepted (default: the transport's, 64 MiB). */
    public Builder maxReceiveMessageSize(int bytes) {
      this.maxReceiveMessageSize = GrpcTransport.Builder.positive(bytes, "maxReceiveMessageSize");
      return this;
    }

    /** The largest request message sent (default: the transport's, unlimited). */
    public Builder maxSendMessageSize(int bytes) {
      this.maxSendMessageSize = GrpcTransport.Builder.positive(bytes, "maxSendMessageSize");
      return this;
    }

    /**
     * Compresses request messages with this grpc-java compressor, e.g. {@code "gzip"} (default: none).
     * Responses are decompressed whatever the server chose.
     */
    public Builder compressor(String name) {
      this.compressor = requireNonNull(name, "name");
      return this;
    }

    /** The outbound, not started. */
    public GrpcOutbound build() {
      return new GrpcOutbound(this);
    }
  }
}
