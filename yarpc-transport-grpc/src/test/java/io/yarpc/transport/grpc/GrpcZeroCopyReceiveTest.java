package io.yarpc.transport.grpc;

import static io.yarpc.transport.grpc.GrpcTestBed.WAIT;
import static io.yarpc.transport.grpc.GrpcTestBed.await;
import static io.yarpc.transport.grpc.GrpcTestBed.eventually;
import static io.yarpc.transport.grpc.GrpcTestBed.failure;
import static io.yarpc.transport.grpc.GrpcTestBed.meta;
import static io.yarpc.transport.grpc.GrpcTestBed.streamMeta;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.Call;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.Response;
import io.yarpc.transport.StreamMessage;
import io.yarpc.transport.grpc.internal.ReceiveStats;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The fast path: what an encoding receives is byte access over grpc-java's own received buffers (direct
 * memory, never copied into an array, never read through a stream), and every such buffer is released
 * exactly once — after the unary handler's result completes, after a stream message is consumed, after
 * the client is done with a response — including when the handler throws and when the client cancels.
 *
 * <p>Evidence: the bodies' views are direct buffers (a copy would be a heap array); the transports'
 * {@link io.yarpc.transport.grpc.internal.ReceiveStats} count detached messages, copies and releases; the
 * bodies handed to handlers report {@link Body#isReleased()}; response bodies count their releases; and
 * Netty's paranoid leak detector (with the yarpc-testing extension) fails any test that drops a buffer.
 */
class GrpcZeroCopyReceiveTest {
  private static final int MIB = 1024 * 1024;

  private final Queue<Body> handlerBodies = new ConcurrentLinkedQueue<>();
  private final Queue<String> handlerProblems = new ConcurrentLinkedQueue<>();
  private final AtomicInteger responseReleases = new AtomicInteger();
  private final java.util.concurrent.atomic.AtomicLong heapBytes =
      new java.util.concurrent.atomic.AtomicLong();
  private final CountDownLatch handlerStarted = new CountDownLatch(1);
  private final CountDownLatch handlerCancelled = new CountDownLatch(1);
  private GrpcTestBed bed;

  @AfterEach
  void close() throws Exception {
    if (bed != null) {
      bed.close();
    }
    assertThat(handlerProblems).isEmpty();
  }

  private static byte[] random(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  /**
   * Reads a body the way a decoder must: through byte access only, counting the bytes that are not in
   * grpc-java's (direct) memory.
   */
  private byte[] decode(Body body) {
    if (!body.hasByteAccess()) {
      handlerProblems.add("no byte access");
      return body.toByteArray();
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (ByteBuffer view : body.byteBuffers()) {
      if (!view.isDirect()) {
        heapBytes.addAndGet(view.remaining());
      }
      byte[] chunk = new byte[view.remaining()];
      view.get(chunk);
      out.writeBytes(chunk);
    }
    return out.toByteArray();
  }

  /** A response body that counts its releases. */
  private Body countedResponse(byte[] bytes) {
    return Body.ofBuffers(List.of(ByteBuffer.wrap(bytes)), responseReleases::incrementAndGet);
  }

  private Procedure echo() {
    return Procedure.builder("echo")
        .encoding("raw")
        .unary(
            request -> {
              handlerBodies.add(request.body());
              return CompletableFuture.completedFuture(
                  Response.of(countedResponse(decode(request.body()))));
            })
        .build();
  }

  @Test
  void unaryBodiesAreGrpcBuffersOnBothSides() throws Exception {
    bed = new GrpcTestBed(echo());
    for (int size : new int[] {1, 100, 64 * 1024, 4 * MIB}) {
      byte[] bytes = random(size, size);
      Response response = await(bed.clientConfig().call(Request.of(meta("echo"), Body.of(bytes))));
      try {
        assertThat(decode(response.body())).as("%d bytes", size).isEqualTo(bytes);
      } finally {
        response.body().release();
      }
    }
    assertThat(handlerProblems).isEmpty();
    assertThat(handlerBodies).hasSize(4).allMatch(Body::isReleased);
    ReceiveStats server = bed.serverTransport.receiveStats();
    ReceiveStats client = bed.clientTransport.receiveStats();
    assertThat(server.detached()).as("requests handed on as grpc-java's buffers").isEqualTo(4);
    assertThat(server.copied()).as("requests copied whole").isZero();
    assertThat(client.detached()).as("responses handed on as grpc-java's buffers").isEqualTo(4);
    assertThat(client.copied()).as("responses copied whole").isZero();
    // grpc-java merges runs of tiny network reads into small heap arrays; only those bytes are not
    // views of its direct buffers, and they are a small part of the whole.
    long total = 2L * (1 + 100 + 64 * 1024 + 4 * MIB);
    assertThat(heapBytes.get())
        .as("bytes decoders found outside grpc-java's direct buffers")
        .isEqualTo(server.copiedBytes() + client.copiedBytes())
        .isLessThan(total / 8);
    assertThat(responseReleases).as("each response body released once by the inbound").hasValue(4);
    bed.assertReceiveBuffersReleased();
  }

  @Test
  void requestBodyIsReleasedWhenTheHandlerResultCompletes() throws Exception {
    CompletableFuture<Response> pending = new CompletableFuture<>();
    bed =
        new GrpcTestBed(
            Procedure.builder("hold")
                .encoding("raw")
                .unary(
                    request -> {
                      handlerBodies.add(request.body());
                      handlerStarted.countDown();
                      return pending;
                    })
                .build());
    CompletableFuture<Response> call =
        bed.clientConfig().call(Request.of(meta("hold"), Body.of(random(5000, 1))));
    assertThat(handlerStarted.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    Body request = handlerBodies.peek();
    assertThat(request.isReleased()).as("not released while the handler works").isFalse();
    assertThat(bed.serverTransport.receiveStats().outstanding()).isEqualTo(1);
    pending.complete(Response.of(countedResponse(new byte[] {1})));
    await(call).body().release();
    assertThat(request.isReleased()).isTrue();
    assertThat(bed.serverTransport.receiveStats().outstanding()).isZero();
  }

  @Test
  void requestBodyIsReleasedWhenTheHandlerThrows() throws Exception {
    bed =
        new GrpcTestBed(
            Procedure.builder("throws")
                .encoding("raw")
                .unary(
                    request -> {
                      handlerBodies.add(request.body());
                      decode(request.body());
                      throw new IllegalStateException("thrown");
                    })
                .build(),
            Procedure.builder("fails")
                .encoding("raw")
                .unary(
                    request -> {
                      handlerBodies.add(request.body());
                      return CompletableFuture.failedFuture(
                          YarpcException.of(Code.ABORTED, "failed")
                              .withResponse(Response.of(countedResponse(new byte[] {9}))));
                    })
                .build());
    YarpcException thrown =
        failure(bed.clientConfig().call(Request.of(meta("throws"), Body.of(random(700, 2)))));
    assertThat(thrown.code()).isEqualTo(Code.UNKNOWN);
    assertThat(thrown.getMessage())
        .isEqualTo(
            "error for service \"bed-server\" and procedure \"throws\": unexpected error (the server logged it)");

    CompletableFuture<Response> call =
        bed.clientConfig().call(Request.of(meta("fails"), Body.of(random(700, 3))));
    YarpcException failed;
    try {
      call.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      throw new AssertionError("expected a failure");
    } catch (java.util.concurrent.ExecutionException e) {
      failed = (YarpcException) e.getCause();
    }
    assertThat(failed.code()).isEqualTo(Code.ABORTED);
    assertThat(failed.response()).as("the response message sent with the error").isNotNull();
    try {
      assertThat(decode(failed.response().body())).containsExactly(9);
    } finally {
      failed.response().body().release();
    }
    assertThat(handlerBodies).hasSize(2).allMatch(Body::isReleased);
    assertThat(responseReleases)
        .as("the error's response body released by the inbound")
        .hasValue(1);
    bed.assertReceiveBuffersReleased();
  }

  @Test
  void clientCancellationReleasesRequestAndLateResponse() throws Exception {
    bed =
        new GrpcTestBed(
            Procedure.builder("slow")
                .encoding("raw")
                .unary(
                    request -> {
                      handlerBodies.add(request.body());
                      Call call = Call.current();
                      call.onCancel(handlerCancelled::countDown);
                      handlerStarted.countDown();
                      try {
                        if (!handlerCancelled.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                          handlerProblems.add("never cancelled");
                        }
                      } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                      }
                      // a handler that ignores the cancellation and answers anyway: nobody wants
                      // this response
                      return CompletableFuture.completedFuture(
                          Response.of(countedResponse(new byte[1000])));
                    })
                .build());
    CompletableFuture<Response> call =
        bed.clientConfig().call(Request.of(meta("slow"), Body.of(random(3000, 4))));
    assertThat(handlerStarted.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    call.cancel(true);
    assertThat(handlerCancelled.await(WAIT.toMillis(), TimeUnit.MILLISECONDS))
        .as("the server saw it")
        .isTrue();
    eventually("the unwanted response released", () -> responseReleases.get() == 1);
    eventually("the request body released", () -> handlerBodies.peek().isReleased());
    bed.assertReceiveBuffersReleased();
    assertThat(responseReleases).hasValue(1);
  }

  @Test
  void streamMessagesAreGrpcBuffersAndReleasedByTheirReceiver() throws Exception {
    bed =
        new GrpcTestBed(
            Procedure.builder("stream-echo")
                .encoding("raw")
                .streaming(
                    stream -> {
                      try {
                        for (StreamMessage m;
                            (m = stream.receive().get(WAIT.toMillis(), TimeUnit.MILLISECONDS))
                                != null; ) {
                          handlerBodies.add(m.body());
                          byte[] bytes;
                          try {
                            bytes = decode(m.body());
                          } finally {
                            m.release();
                          }
                          stream
                              .send(StreamMessage.of(countedResponse(bytes)))
                              .get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                        }
                        return CompletableFuture.completedFuture(null);
                      } catch (Exception e) {
                        return CompletableFuture.failedFuture(e);
                      }
                    })
                .build());
    ClientStream stream = await(bed.clientConfig().callStream(streamMeta("stream-echo")));
    for (int i = 0; i < 10; i++) {
      byte[] bytes = random(1000 * (i + 1), i);
      await(stream.send(StreamMessage.of(Body.of(bytes))));
      StreamMessage m = await(stream.receive());
      try {
        assertThat(decode(m.body())).isEqualTo(bytes);
      } finally {
        m.release();
      }
    }
    stream.halfClose();
    assertThat(await(stream.receive())).isNull();
    assertThat(handlerProblems).isEmpty();
    assertThat(heapBytes).as("small messages are single direct views").hasValue(0);
    assertThat(handlerBodies).hasSize(10).allMatch(Body::isReleased);
    assertThat(bed.serverTransport.receiveStats().detached()).isEqualTo(10);
    assertThat(bed.clientTransport.receiveStats().detached()).isEqualTo(10);
    eventually("sent messages released", () -> responseReleases.get() == 10);
    bed.assertReceiveBuffersReleased();
  }

  @Test
  void clientCancelWhileMessagesAreInFlightLeaksNothing() throws Exception {
    AtomicReference<String> outcome = new AtomicReference<>();
    bed =
        new GrpcTestBed(
            Procedure.builder("stall")
                .encoding("raw")
                .streaming(
                    stream -> {
                      try {
                        StreamMessage first =
                            stream.receive().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                        first.release();
                        for (int i = 0; i < 5; i++) { // sends the client never receives
                          stream
                              .send(StreamMessage.of(countedResponse(new byte[10_000])))
                              .get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                        }
                        handlerStarted.countDown();
                        // the client keeps sending; this handler stops receiving, then waits for
                        // the cancellation
                        stream.receive().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                        outcome.set("a message");
                      } catch (java.util.concurrent.ExecutionException e) {
                        outcome.set(YarpcException.from(e.getCause()).code().wireName());
                      } catch (Exception e) {
                        outcome.set(e.toString());
                      }
                      return CompletableFuture.completedFuture(null);
                    })
                .build());
    ClientStream stream = await(bed.clientConfig().callStream(streamMeta("stall")));
    await(stream.send(StreamMessage.of(Body.of(new byte[100]))));
    assertThat(handlerStarted.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    eventually(
        "the client's receive buffer filled",
        () -> bed.clientTransport.receiveStats().detached() == 0);
    stream.cancel();
    eventually("the handler saw the cancellation", () -> outcome.get() != null);
    assertThat(outcome.get()).isIn(Code.CANCELLED.wireName(), "a message");
    eventually("sent messages released", () -> responseReleases.get() == 5);
    assertThat(failure(stream.receive()).code()).isEqualTo(Code.CANCELLED);
    bed.assertReceiveBuffersReleased();
  }

  @Test
  void compressedRequestsFallBackToOneCopy() throws Exception {
    bed = new GrpcTestBed(b -> b, b -> b.compressor("gzip"), echo());
    byte[] bytes = random(50_000, 5);
    Response response = await(bed.clientConfig().call(Request.of(meta("echo"), Body.of(bytes))));
    try {
      assertThat(response.body().toByteArray()).isEqualTo(bytes);
    } finally {
      response.body().release();
    }
    assertThat(bed.serverTransport.receiveStats().copied())
        .as("the gzip request, read once")
        .isEqualTo(1);
    assertThat(bed.serverTransport.receiveStats().detached()).isZero();
    assertThat(bed.serverTransport.receiveStats().copiedBytes()).isEqualTo(50_000);
  }
}
