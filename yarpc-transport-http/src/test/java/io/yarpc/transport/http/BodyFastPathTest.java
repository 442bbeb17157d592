package io.yarpc.transport.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.yarpc.Dispatcher;
import io.yarpc.netty.internal.NettyIo;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The receive path without redundant copies: request bodies reach the handler, and response bodies reach
 * the caller, as byte access over the buffers Netty received (HTTP/1.1) or the stream's own copy of its
 * DATA frames (HTTP/2, see {@code ReceivedContent}) — heap arrays by default, so decoders parse in place —
 * never through a stream (an h2c body with a {@code content-length} into heap: one array made for it,
 * unpooled, which the allocator below does not see); and every buffer the transport allocated is released
 * once everything is done (counted with an allocator that remembers each buffer, on top of the paranoid
 * leak detector).
 */
class BodyFastPathTest {
  /** What the handler saw of one request body. */
  record Seen(
      boolean byteAccess,
      int buffers,
      boolean allHeap,
      boolean allDirect,
      boolean sameMemoryTwice,
      long crc,
      boolean immutable,
      Body body) {}

  @ParameterizedTest(name = "http2={0} heap={1}")
  @CsvSource({"false,true", "true,true", "false,false", "true,false"})
  void bodiesAreViewsOverReceivedBuffersAndAllAreReleased(boolean http2, boolean heap)
      throws Exception {
    TrackingAllocator serverAlloc = new TrackingAllocator();
    TrackingAllocator clientAlloc = new TrackingAllocator();
    HttpTransport serverTransport =
        HttpTransport.builder().allocator(serverAlloc).receiveIntoHeap(heap).build();
    HttpTransport clientTransport =
        HttpTransport.builder().allocator(clientAlloc).receiveIntoHeap(heap).build();
    HttpInbound inbound = serverTransport.inbound();
    ConcurrentLinkedQueue<Seen> seen = new ConcurrentLinkedQueue<>();
    Dispatcher server = Dispatcher.builder("fast-path").inbound(inbound).build();
    byte[] responseBytes = random(3 << 20, 2);
    server.register(
        Procedure.builder("inspect")
            .unary(
                request -> {
                  Body body = request.body();
                  List<ByteBuffer> first = body.byteBuffers();
                  List<ByteBuffer> second = body.byteBuffers();
                  boolean same = true;
                  boolean allHeap = true;
                  boolean allDirect = true;
                  CRC32 crc = new CRC32();
                  for (int i = 0; i < first.size(); i++) {
                    ByteBuffer a = first.get(i);
                    ByteBuffer b = second.get(i);
                    allHeap &=
                        a.hasArray(); // heap views expose their array, so decoders parse in place
                    allDirect &= a.isDirect();
                    same &= a.isDirect() ? a.equals(b) : sameArray(a, b);
                    crc.update(a.duplicate());
                  }
                  seen.add(
                      new Seen(
                          body.hasByteAccess(),
                          first.size(),
                          !allDirect,
                          allDirect,
                          same,
                          crc.getValue(),
                          body.isImmutable(),
                          body));
                  return CompletableFuture.completedFuture(Response.of(Body.of(responseBytes)));
                })
            .build());
    server.start();
    HttpOutbound out =
        clientTransport.singleOutboundBuilder(inbound.hostPort()).http2(http2).build();
    out.start();
    try {
      byte[] requestBytes = random(4 << 20, 1);
      RequestMeta meta =
          RequestMeta.builder()
              .caller("client")
              .service("fast-path")
              .procedure("inspect")
              .encoding("raw")
              .deadline(Deadline.after(Duration.ofSeconds(20)))
              .build();
      Response response =
          out.call(Request.of(meta, Body.of(requestBytes))).get(20, TimeUnit.SECONDS);
      try {
        Body body = response.body();
        assertThat(body.hasByteAccess()).isTrue();
        List<ByteBuffer> views = body.byteBuffers();
        assertThat(body.isImmutable())
            .as("h2c into heap: one array of the response's own (ReceivedContent)")
            .isEqualTo(http2 && heap);
        if (http2 && heap) {
          assertThat(views).hasSize(1);
        }
        assertThat(views)
            .allSatisfy(
                v -> {
                  assertThat(v.isDirect()).isEqualTo(!heap);
                  assertThat(v.hasArray()).isEqualTo(heap);
                });
        CRC32 crc = new CRC32();
        views.forEach(v -> crc.update(v.duplicate()));
        assertThat(crc.getValue()).isEqualTo(crc(responseBytes));
      } finally {
        response.body().release();
      }

      Seen s = seen.poll();
      assertThat(s).isNotNull();
      assertThat(s.byteAccess()).isTrue();
      assertThat(s.crc()).isEqualTo(crc(requestBytes));
      assertThat(s.sameMemoryTwice())
          .as("byte access gives views of the same memory, not copies")
          .isTrue();
      if (http2 && heap) {
        // a body with a content-length is copied frame by frame into one array of its own
        assertThat(s.buffers()).isEqualTo(1);
        assertThat(s.immutable()).isTrue();
      } else {
        assertThat(s.buffers())
            .as("the received chunks or pieces, not gathered into one array")
            .isGreaterThan(1);
        assertThat(s.immutable()).isFalse();
      }
      if (heap) {
        assertThat(s.allHeap()).as("received into heap buffers: arrays for decoders").isTrue();
      } else {
        assertThat(s.allDirect()).isTrue();
      }
      // the invocation released the request body when the handler's result completed
      assertThat(s.body().isReleased()).isTrue();
    } finally {
      out.stop();
      server.stop();
      clientTransport.stop();
      serverTransport.stop();
    }
    assertThat(serverAlloc.count()).isPositive();
    assertThat(clientAlloc.count()).isPositive();
    assertThat(serverAlloc.unreleased()).as("server buffers not released").isEmpty();
    assertThat(clientAlloc.unreleased()).as("client buffers not released").isEmpty();
  }

  @Test
  void h2cCopiesEachReceivedBodyByteIntoHeapOnce() throws Exception {
    assumeFalse(
        NettyIo.get().name().equals("nio"),
        "under NIO the JDK's socket read copies into heap first, which no handler can avoid");
    TrackingAllocator serverAlloc = new TrackingAllocator();
    HttpTransport serverTransport = HttpTransport.builder().allocator(serverAlloc).build();
    HttpTransport clientTransport = HttpTransport.builder().build();
    HttpInbound inbound = serverTransport.inbound();
    Dispatcher server = Dispatcher.builder("fast-path").inbound(inbound).build();
    CompletableFuture<List<ByteBuffer>> views = new CompletableFuture<>();
    CompletableFuture<Boolean> immutable = new CompletableFuture<>();
    server.register(
        Procedure.builder("sink")
            .unary(
                request -> {
                  immutable.complete(request.body().isImmutable());
                  views.complete(request.body().byteBuffers());
                  return CompletableFuture.completedFuture(Response.of(Body.empty()));
                })
            .build());
    server.start();
    HttpOutbound out =
        clientTransport.singleOutboundBuilder(inbound.hostPort()).http2(true).build();
    out.start();
    try {
      byte[] requestBytes = random(4 << 20, 3);
      RequestMeta meta =
          RequestMeta.builder()
              .caller("client")
              .service("fast-path")
              .procedure("sink")
              .encoding("raw")
              .deadline(Deadline.after(Duration.ofSeconds(20)))
              .build();
      long before = serverAlloc.heapBytes();
      out.call(Request.of(meta, Body.of(requestBytes))).get(20, TimeUnit.SECONDS).body().release();
      long pooledHeap = serverAlloc.heapBytes() - before;
      // the body's one copy is an array made for it (ReceivedContent): exactly its size, outside
      // the
      // pool; copying the socket's direct reads into pooled heap first, as HTTP/1.1 does, would
      // double it
      List<ByteBuffer> got = views.get(1, TimeUnit.SECONDS);
      assertThat(got).hasSize(1);
      assertThat(got.get(0).hasArray()).as("the body reached the handler in heap").isTrue();
      assertThat(got.get(0).array()).hasSize(requestBytes.length);
      assertThat(immutable.get(1, TimeUnit.SECONDS)).isTrue();
      assertThat(pooledHeap)
          .as("pooled heap the server allocated for a %d-byte h2c request", requestBytes.length)
          .isLessThan(requestBytes.length >> 4);
    } finally {
      out.stop();
      server.stop();
      clientTransport.stop();
      serverTransport.stop();
    }
    assertThat(serverAlloc.unreleased()).as("server buffers not released").isEmpty();
  }

  private static boolean sameArray(ByteBuffer a, ByteBuffer b) {
    return a.hasArray()
        && b.hasArray()
        && a.array() == b.array()
        && a.arrayOffset() == b.arrayOffset();
  }

  private static byte[] random(int size, long seed) {
    byte[] b = new byte[size];
    new Random(seed).nextBytes(b);
    return b;
  }

  private static long crc(byte[] bytes) {
    CRC32 crc = new CRC32();
    crc.update(bytes);
    return crc.getValue();
  }
}
