package io.yarpc.encoding.protobuf;

import com.google.protobuf.Any;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.yarpc.Call;
import io.yarpc.encoding.protobuf.testing.EchoGrpc;
import io.yarpc.encoding.protobuf.testing.EchoRequest;
import io.yarpc.encoding.protobuf.testing.EchoResponse;
import io.yarpc.errors.Code;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The test service: a plain grpc-java {@code EchoImplBase}, written as for a grpc server. It reports what
 * the handler saw (headers through {@link Call#current()} and the grpc {@link Context}, the deadline) and
 * fails on request, in each of the ways a grpc service can.
 */
class EchoService extends EchoGrpc.EchoImplBase {
  static final BadRequest BAD_REQUEST =
      BadRequest.newBuilder()
          .addFieldViolations(
              BadRequest.FieldViolation.newBuilder().setField("message").setDescription("too rude"))
          .build();
  static final ErrorInfo ERROR_INFO =
      ErrorInfo.newBuilder().setReason("RUDE").setDomain("yarpc.io").putMetadata("k", "v").build();

  final AtomicInteger cancellations = new AtomicInteger();
  final CountDownLatch cancelled = new CountDownLatch(1);

  /** The thread that ran the last {@code setOnCancelHandler} handler of an {@code await-cancel} call. */
  volatile String cancelHandlerThread;

  @Override
  public void unary(EchoRequest request, StreamObserver<EchoResponse> responseObserver) {
    if (fail(request, responseObserver)) {
      return;
    }
    if (Call.current() != null) { // null when bound to a plain grpc server
      Call.current().setResponseHeader("x-echoed-by", "echo-service");
    }
    responseObserver.onNext(reply(request, 0));
    responseObserver.onCompleted();
  }

  /** Server-stream messages handed to grpc (all calls). */
  final AtomicInteger serverStreamSent = new AtomicInteger();

  /** How often a server stream stopped because {@code isReady()} turned false. */
  final AtomicInteger serverStreamPauses = new AtomicInteger();

  @Override
  public void serverStream(EchoRequest request, StreamObserver<EchoResponse> responseObserver) {
    if (fail(request, responseObserver)) {
      return;
    }
    // Flow control as a grpc service does it: send while the transport is ready, resume on onReady.
    ServerCallStreamObserver<EchoResponse> out =
        (ServerCallStreamObserver<EchoResponse>) responseObserver;
    AtomicInteger next = new AtomicInteger();
    EchoResponse first = reply(request, 0);
    Runnable drain =
        new Runnable() {
          private boolean done;

          @Override
          public synchronized void run() {
            while (!done && out.isReady() && next.get() < request.getCount()) {
              int i = next.getAndIncrement();
              out.onNext(first.toBuilder().setIndex(i).build());
              serverStreamSent.incrementAndGet();
            }
            if (!done && next.get() < request.getCount()) {
              serverStreamPauses.incrementAndGet(); // isReady turned false: wait for onReady
            }
            if (!done && next.get() >= request.getCount()) {
              done = true;
              out.onCompleted();
            }
          }
        };
    out.setOnCancelHandler(this::onCancel);
    out.setOnReadyHandler(drain);
    drain.run();
  }

  @Override
  public StreamObserver<EchoRequest> clientStream(StreamObserver<EchoResponse> responseObserver) {
    return new StreamObserver<>() {
      private final StringBuilder all = new StringBuilder();
      private int count;

      @Override
      public void onNext(EchoRequest value) {
        if (fail(value, responseObserver)) {
          return;
        }
        all.append(value.getMessage());
        count++;
      }

      @Override
      public void onError(Throwable t) {
        onCancel();
      }

      @Override
      public void onCompleted() {
        responseObserver.onNext(
            EchoResponse.newBuilder().setMessage(all.toString()).setIndex(count).build());
        responseObserver.onCompleted();
      }
    };
  }

  @Override
  public StreamObserver<EchoRequest> bidi(StreamObserver<EchoResponse> responseObserver) {
    AtomicInteger index = new AtomicInteger();
    return new StreamObserver<>() {
      @Override
      public void onNext(EchoRequest value) {
        if (fail(value, responseObserver)) {
          return;
        }
        responseObserver.onNext(reply(value, index.getAndIncrement()));
      }

      @Override
      public void onError(Throwable t) {
        onCancel();
      }

      @Override
      public void onCompleted() {
        responseObserver.onCompleted();
      }
    };
  }

  private void onCancel() {
    cancellations.incrementAndGet();
    cancelled.countDown();
  }

  /** The response: the request echoed, plus what the handler saw. */
  static EchoResponse reply(EchoRequest request, int index) {
    EchoResponse.Builder b =
        EchoResponse.newBuilder()
            .setMessage(request.getMessage())
            .setPayload(request.getPayload())
            .setIndex(index);
    Call call = Call.current();
    if (call != null) {
      b.putAllHeaders(call.meta().headers().asMap());
      if (call.deadline() != null) {
        b.setDeadlineMillis(call.deadline().remainingMillis());
      }
    }
    Metadata md = ProtobufProcedures.HEADERS.get();
    if (md != null) {
      String viaContext = md.get(Metadata.Key.of("x-trace", Metadata.ASCII_STRING_MARSHALLER));
      if (viaContext != null) {
        b.putHeaders("context:x-trace", viaContext);
      }
    }
    io.grpc.Deadline grpcDeadline = Context.current().getDeadline();
    if (grpcDeadline != null) {
      b.putHeaders(
          "context:deadline-ms", Long.toString(grpcDeadline.timeRemaining(TimeUnit.MILLISECONDS)));
    }
    return b.build();
  }

  /** Fails the call as {@code request.fail} says; true when it did. */
  private boolean fail(EchoRequest request, StreamObserver<EchoResponse> out) {
    switch (request.getFail()) {
      case "":
        return false;
      case "status-details":
        out.onError(
            StatusProto.toStatusRuntimeException(
                com.google.rpc.Status.newBuilder()
                    .setCode(Status.Code.INVALID_ARGUMENT.value())
                    .setMessage("rude request")
                    .addDetails(Any.pack(BAD_REQUEST))
                    .addDetails(Any.pack(ERROR_INFO))
                    .build()));
        return true;
      case "yarpc-details":
        out.onError(
            ProtobufErrors.newError(Code.FAILED_PRECONDITION, "not now", ERROR_INFO, BAD_REQUEST));
        return true;
      case "throw-yarpc-details":
        throw ProtobufErrors.newError(Code.ALREADY_EXISTS, "exists", ERROR_INFO);
      case "plain-status":
        out.onError(Status.NOT_FOUND.withDescription("no such echo").asRuntimeException());
        return true;
      case "throw":
        throw new IllegalStateException("boom");
      case "on-error":
        out.onError(new IllegalArgumentException("bad echo"));
        return true;
      case "await-cancel":
        // Never answers; the handler's onCancel runs once the call's deadline passes.
        ((ServerCallStreamObserver<EchoResponse>) out)
            .setOnCancelHandler(
                () -> {
                  cancelHandlerThread = Thread.currentThread().getName();
                  onCancel();
                });
        return true;
      case "sleep":
        // Blocks like slow user code; the grpc context is cancelled when the call's deadline
        // passes.
        CountDownLatch contextCancelled = new CountDownLatch(1);
        Context.current().addListener(c -> contextCancelled.countDown(), Runnable::run);
        try {
          if (contextCancelled.await(5, TimeUnit.SECONDS)) {
            onCancel();
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        out.onError(Status.CANCELLED.asRuntimeException());
        return true;
      default:
        out.onError(
            Status.INVALID_ARGUMENT
                .withDescription("unknown failure " + request.getFail())
                .asRuntimeException());
        return true;
    }
  }
}
