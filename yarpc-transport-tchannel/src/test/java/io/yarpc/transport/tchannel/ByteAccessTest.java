package io.yarpc.transport.tchannel;

import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.CallOptions;
import io.yarpc.ClientConfig;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.json.Json;
import io.yarpc.encoding.json.JsonClient;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.middleware.Middleware;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Bodies without copies: received arg3 reaches encodings as byte access over the received frame buffers
 * (heap arrays by default, composed across frames), encodings never fall back to a stream, outgoing
 * bodies with byte access are written from their views, and every received buffer is released exactly
 * once.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ByteAccessTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final TrackingAllocator serverAllocator = new TrackingAllocator();
  private final TrackingAllocator clientAllocator = new TrackingAllocator();
  private final AtomicInteger streamsOpened = new AtomicInteger();
  private final AtomicReference<String> seenByHandler = new AtomicReference<>();
  private Dispatcher server;
  private Dispatcher client;

  /** A body that delegates to another but fails when read as a stream or written by {@code writeTo}. */
  final class ByteAccessOnlyBody extends Body {
    private final Body delegate;
    final AtomicInteger releases = new AtomicInteger();

    ByteAccessOnlyBody(Body delegate) {
      this.delegate = delegate;
    }

    @Override
    public long length() {
      return delegate.length();
    }

    @Override
    public boolean hasByteAccess() {
      return delegate.hasByteAccess();
    }

    @Override
    public List<ByteBuffer> byteBuffers() {
      return delegate.byteBuffers();
    }

    @Override
    public InputStream openStream() {
      streamsOpened.incrementAndGet();
      throw new AssertionError("a body with byte access was read through its stream");
    }

    @Override
    public void writeTo(OutputStream out) {
      streamsOpened.incrementAndGet();
      throw new AssertionError("a body with byte access was written through writeTo");
    }

    @Override
    protected void deallocate() {
      releases.incrementAndGet();
      delegate.release();
    }
  }

  /** A JSON payload. */
  public static final class Payload {
    public String text;
  }

  private void start(boolean receiveIntoHeap) {
    TChannelTransport serverTransport =
        TChannelTransport.builder()
            .serviceName("bytes-server")
            .allocator(serverAllocator)
            .receiveIntoHeap(receiveIntoHeap)
            .build();
    TChannelInbound inbound = serverTransport.inbound();
    Middleware<Request, Response> noStreams =
        (request, next) ->
            next.handle(Request.of(request.meta(), new ByteAccessOnlyBody(request.body())));
    server =
        Dispatcher.builder("bytes-server")
            .inbound(inbound)
            .unaryInboundMiddleware(noStreams)
            .build();
    server.register(
        Raw.procedure("raw-echo", body -> body),
        Json.procedure("json-echo", Payload.class, p -> p),
        Procedure.builder("inspect")
            .unary(
                request -> {
                  Body in = request.body();
                  StringBuilder seen = new StringBuilder("byteAccess=" + in.hasByteAccess());
                  int buffers = 0;
                  boolean heap = true;
                  for (ByteBuffer b : in.byteBuffers()) {
                    buffers++;
                    heap &= b.hasArray();
                  }
                  seen.append(" buffers=")
                      .append(buffers)
                      .append(" heap=")
                      .append(heap)
                      .append(" length=")
                      .append(in.length());
                  seenByHandler.set(seen.toString());
                  return CompletableFuture.completedFuture(
                      Response.of(new ByteAccessOnlyBody(Body.of(in.toByteArray()))));
                })
            .build());
    server.start();
    TChannelTransport clientTransport =
        TChannelTransport.builder()
            .serviceName("bytes-client")
            .allocator(clientAllocator)
            .receiveIntoHeap(receiveIntoHeap)
            .build();
    client =
        Dispatcher.builder("bytes-client")
            .outbound(
                "bytes-server", Outbounds.unary(clientTransport.singleOutbound(inbound.hostPort())))
            .build();
    client.start();
  }

  @AfterEach
  void stop() throws Exception {
    if (client != null) {
      client.stop();
    }
    if (server != null) {
      server.stop();
    }
    serverAllocator.awaitAllReleased(WAIT);
    clientAllocator.awaitAllReleased(WAIT);
    assertThat(streamsOpened.get()).as("bodies read through a stream").isZero();
  }

  private ClientConfig config() {
    return client.clientConfig("bytes-server");
  }

  private static byte[] random(int size) {
    byte[] b = new byte[size];
    new Random(size).nextBytes(b);
    return b;
  }

  @ParameterizedTest(name = "{0} bytes")
  @ValueSource(ints = {0, 1, 65_000, 65_536, 300 * 1024})
  void encodingsParseFromByteAccess(int size) throws Exception {
    start(true);
    byte[] bytes = random(size);
    assertThat(
            RawClient.of(config())
                .call("raw-echo", bytes, CallOptions.timeout(WAIT))
                .get(10, TimeUnit.SECONDS))
        .isEqualTo(bytes);
    Payload p = new Payload();
    p.text = "x".repeat(size);
    assertThat(
            JsonClient.of(config())
                .call("json-echo", p, Payload.class, CallOptions.timeout(WAIT))
                .get(10, TimeUnit.SECONDS)
                .text)
        .isEqualTo(p.text);
  }

  @Test
  void receivedBodiesAreHeapViewsOverTheFrames() throws Exception {
    start(true);
    byte[] bytes = random(300 * 1024);
    ByteAccessOnlyBody request = new ByteAccessOnlyBody(Body.of(bytes));
    RequestMeta meta =
        RequestMeta.builder()
            .procedure("inspect")
            .encoding("raw")
            .deadline(Deadline.after(WAIT))
            .build();
    Response response = config().call(Request.of(meta, request)).get(10, TimeUnit.SECONDS);
    try {
      assertThat(seenByHandler.get())
          .startsWith("byteAccess=true buffers=")
          .endsWith(" heap=true length=307200");
      int buffers = Integer.parseInt(seenByHandler.get().replaceAll(".*buffers=(\\d+).*", "$1"));
      assertThat(buffers)
          .as("one view per received arg3 chunk, composed without a copy")
          .isGreaterThan(4);
      Body body = response.body();
      assertThat(body.hasByteAccess()).isTrue();
      assertThat(body.byteBuffers())
          .hasSizeGreaterThan(4)
          .allSatisfy(b -> assertThat(b.hasArray()).isTrue());
      assertThat(body.toByteArray()).isEqualTo(bytes);
    } finally {
      response.body().release();
    }
    assertThat(request.releases.get())
        .as("the outbound released the request body once")
        .isEqualTo(1);
    // Every buffer either side received or wrote is released, with the connection still open.
    serverAllocator.awaitAllReleased(WAIT);
    clientAllocator.awaitAllReleased(WAIT);
  }

  @Test
  void directReceiveBuffersStillGiveByteAccess() throws Exception {
    start(false);
    byte[] bytes = random(100_000);
    RequestMeta meta =
        RequestMeta.builder()
            .procedure("inspect")
            .encoding("raw")
            .deadline(Deadline.after(WAIT))
            .build();
    Response response = config().call(Request.of(meta, Body.of(bytes))).get(10, TimeUnit.SECONDS);
    try {
      assertThat(seenByHandler.get()).startsWith("byteAccess=true").contains("heap=false");
      assertThat(response.body().byteBuffers()).allSatisfy(b -> assertThat(b.isDirect()).isTrue());
      assertThat(response.body().toByteArray()).isEqualTo(bytes);
    } finally {
      response.body().release();
    }
  }

  @Test
  void manyCallsLeaveNoBufferBehind() throws Exception {
    start(true);
    RawClient raw = RawClient.of(config());
    for (int size :
        new int[] {0, 1, 1024, 1025, 65_490, 65_491, 65_492, 65_493, 131_000, 200_000}) {
      byte[] bytes = random(size);
      assertThat(raw.call("raw-echo", bytes, CallOptions.timeout(WAIT)).get(10, TimeUnit.SECONDS))
          .isEqualTo(bytes);
    }
    serverAllocator.awaitAllReleased(WAIT);
    clientAllocator.awaitAllReleased(WAIT);
  }
}
