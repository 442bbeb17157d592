package io.yarpc.transport.grpc;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.ErrorInfo;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.yarpc.transport.Body;
import io.yarpc.transport.grpc.testing.echo.EchoRequest;
import io.yarpc.transport.grpc.testing.echo.EchoResponse;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Shared bits of the interop tests: the Echo service's names, hand-made protobuf bodies, stub helpers. */
final class EchoSupport {
  static final String SERVICE = "yarpc.test.echo.Echo";
  static final String UNARY = SERVICE + "::Unary";
  static final String CLIENT_STREAM = SERVICE + "::ClientStream";
  static final String SERVER_STREAM = SERVICE + "::ServerStream";
  static final String BIDI = SERVICE + "::Bidi";
  static final long WAIT_SECONDS = 10;

  private EchoSupport() {}

  /** Parses a request the way an encoding would: from byte access. */
  static EchoRequest request(Body body) throws InvalidProtocolBufferException {
    List<ByteBuffer> views = body.byteBuffers();
    return views.size() == 1
        ? EchoRequest.parseFrom(views.get(0))
        : EchoRequest.parseFrom(body.toByteArray());
  }

  /** Parses a response the way an encoding would: from byte access. */
  static EchoResponse response(Body body) throws InvalidProtocolBufferException {
    List<ByteBuffer> views = body.byteBuffers();
    return views.size() == 1
        ? EchoResponse.parseFrom(views.get(0))
        : EchoResponse.parseFrom(body.toByteArray());
  }

  static EchoRequest req(String message) {
    return EchoRequest.newBuilder().setMessage(message).build();
  }

  static EchoResponse resp(String message) {
    return EchoResponse.newBuilder().setMessage(message).build();
  }

  static Body body(com.google.protobuf.MessageLite m) {
    return Body.of(m.toByteArray());
  }

  /** The status an error carries in both directions: FAILED_PRECONDITION with an ErrorInfo detail. */
  static com.google.rpc.Status errorStatus() {
    return com.google.rpc.Status.newBuilder()
        .setCode(io.grpc.Status.Code.FAILED_PRECONDITION.value())
        .setMessage("precondition failed")
        .addDetails(
            Any.pack(
                ErrorInfo.newBuilder()
                    .setReason("TEST_REASON")
                    .setDomain("yarpc.io")
                    .putMetadata("key", "value")
                    .build()))
        .addDetails(
            Any.pack(EchoResponse.newBuilder().setPayload(ByteString.copyFromUtf8("more")).build()))
        .build();
  }

  /** A plain channel whose calls carry rpc-caller, rpc-service and rpc-encoding, as yarpc expects. */
  /** A stock grpc-java channel: no interceptor, so no {@code rpc-*} metadata and no deadline. */
  static ManagedChannel plainChannel(int port) {
    return NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
  }

  /** The metadata a YARPC peer sends ahead of every call. */
  static Metadata yarpcHeaders(String caller, String service) {
    Metadata md = new Metadata();
    md.put(Metadata.Key.of("rpc-caller", Metadata.ASCII_STRING_MARSHALLER), caller);
    md.put(Metadata.Key.of("rpc-service", Metadata.ASCII_STRING_MARSHALLER), service);
    md.put(Metadata.Key.of("rpc-encoding", Metadata.ASCII_STRING_MARSHALLER), "proto");
    return md;
  }

  static void shutdown(ManagedChannel channel) throws InterruptedException {
    if (channel != null) {
      channel.shutdownNow();
      channel.awaitTermination(WAIT_SECONDS, TimeUnit.SECONDS);
    }
  }

  /** Collects a response stream. */
  static final class Collector<T> implements StreamObserver<T> {
    final List<T> values = new ArrayList<>();
    final CompletableFuture<List<T>> done = new CompletableFuture<>();

    @Override
    public synchronized void onNext(T value) {
      values.add(value);
    }

    @Override
    public synchronized void onError(Throwable t) {
      done.completeExceptionally(t);
    }

    @Override
    public synchronized void onCompleted() {
      done.complete(new ArrayList<>(values));
    }

    List<T> await() throws Exception {
      return done.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }
  }
}
