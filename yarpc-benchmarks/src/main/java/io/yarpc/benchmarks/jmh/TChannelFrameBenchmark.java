package io.yarpc.benchmarks.jmh;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.PreferHeapByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.yarpc.benchmarks.load.LoadMessages;
import io.yarpc.benchmarks.proto.EchoMessage;
import io.yarpc.transport.Body;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.tchannel.ChecksumType;
import io.yarpc.transport.tchannel.internal.CallCodec;
import io.yarpc.transport.tchannel.internal.CallFrame;
import io.yarpc.transport.tchannel.internal.FrameDecoder;
import io.yarpc.transport.tchannel.internal.Frames;
import io.yarpc.transport.tchannel.internal.MessageAssembler;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * TChannel call-request frames of the echo message (350 B, 10 KiB, 1 MiB payloads; frames of at most
 * 64 KiB, so 1 MiB is 17 frames):
 *
 * <ul>
 *   <li>{@link #encode}: {@code CallCodec.encodeRequest} — transport headers, arg1, arg2 and arg3 cut
 *       into frames with their checksum — for a body with byte access ({@code body=heap}: arg3 referenced,
 *       not copied) or the protobuf encoding's lazy body ({@code body=lazy}: serialised once into a pooled
 *       buffer); the frames are released at once.
 *   <li>{@link #decode}: the receive side, from the bytes of all frames in one heap buffer (as a heap
 *       receive reads them): frames cut as retained slices, parsed ({@code CallFrame.parse}), reassembled
 *       ({@code MessageAssembler}, checksum verified), request metadata decoded and arg3 taken as a
 *       byte-access body, then released.
 *   <li>{@link #receive}: the same through the frame decoder, the bytes arriving in socket reads that
 *       frames span, the body then read as a parser reads it.
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(
    value = 1,
    jvmArgsAppend = {"-Xms1g", "-Xmx1g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class TChannelFrameBenchmark {
  /** Payload bytes. */
  @Param({"350", "10240", "1048576"})
  public int size;

  /** The checksum the frames carry: {@code NONE} or {@code CRC32} (the outbound's default). */
  @Param({"CRC32", "NONE"})
  public String checksum;

  /** The request body on the encode side: {@code heap} (byte access) or {@code lazy} (protobuf's). */
  @Param({"heap", "lazy"})
  public String body;

  private static final byte[] TRACING = new byte[Frames.TRACING_SIZE];

  private final ByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
  private ChecksumType checksumType;
  private RequestMeta meta;
  private EchoMessage message;
  private byte[] bytes;
  private ByteBuf received;

  /** Builds the message and its frames' bytes. */
  @Setup
  public void setup() throws IOException {
    checksumType = ChecksumType.valueOf(checksum);
    meta =
        RequestMeta.builder()
            .caller("bench-client")
            .service("bench-server")
            .procedure("yarpc.benchmarks.Echo::Unary")
            .encoding("proto")
            .transport("tchannel")
            .build();
    message = LoadMessages.message(size);
    bytes = message.toByteArray();
    List<ByteBuf> frames =
        CallCodec.encodeRequest(
            alloc, 1, meta, Body.of(bytes), 1000, TRACING, checksumType, Frames.MAX_FRAME_SIZE);
    received = Unpooled.buffer();
    for (ByteBuf f : frames) {
      received.writeBytes(f, f.readerIndex(), f.readableBytes());
      f.release();
    }
    // the receive side's channel: the frame decoder, with a heap-preferring pooled allocator
    channel = new EmbeddedChannel(new FrameDecoder());
    channel.config().setAllocator(new PreferHeapByteBufAllocator(alloc));
    scratch = new byte[received.readableBytes()];
  }

  /** Frees the received bytes. */
  @TearDown(Level.Trial)
  public void tearDown() {
    received.release();
    channel.finishAndReleaseAll();
  }

  /** A call req's frames, built and released. */
  @Benchmark
  public int encode() throws IOException {
    Body b =
        body.equals("heap")
            ? Body.of(bytes)
            : Body.lazy(message.getSerializedSize(), message::writeTo);
    List<ByteBuf> frames =
        CallCodec.encodeRequest(
            alloc, 1, meta, b, 1000, TRACING, checksumType, Frames.MAX_FRAME_SIZE);
    int n = 0;
    for (ByteBuf f : frames) {
      n += f.readableBytes();
      f.release();
    }
    b.release();
    return n;
  }

  /** A call req's frames cut, parsed and reassembled into request metadata and a body. */
  @Benchmark
  public long decode() throws Exception {
    ByteBuf in = received.duplicate();
    MessageAssembler assembler = null;
    CallFrame first = null;
    try {
      while (in.readableBytes() >= 2) {
        int frameSize = in.getUnsignedShort(in.readerIndex());
        ByteBuf frame = in.readRetainedSlice(frameSize);
        try {
          CallFrame f = CallFrame.parse(frame);
          if (first == null) {
            first = f;
            assembler = new MessageAssembler(true, f.checksumType(), 16L << 20);
          }
          if (assembler.add(f)) {
            break;
          }
        } finally {
          frame.release();
        }
      }
      RequestMeta decoded =
          CallCodec.decodeRequestMeta(
              first.service(),
              first.headers(),
              first.ttl(),
              assembler.argBytes(0),
              assembler.argBytes(1));
      Body b = assembler.takeBody();
      long n = b.length() + decoded.procedure().length();
      b.release();
      return n;
    } finally {
      if (assembler != null) {
        assembler.release();
      }
    }
  }

  /** The bytes of one socket read in {@link #receive}: not a divisor of the frame size. */
  private static final int READ = 40_000;

  private EmbeddedChannel channel;
  private byte[] scratch;

  /**
   * A call req received as a server receives it: its bytes arrive in reads of {@value #READ} bytes
   * (each copied into a pooled heap buffer, as a heap receive under epoll does), the frame decoder cuts
   * frames across them, every frame is parsed and reassembled while the message's earlier chunks are
   * held, and the body is read as a parser reads it (in place from one array, else copied into a scratch
   * array once).
   */
  @Benchmark
  public long receive() throws Exception {
    ByteBuf in = received.duplicate();
    MessageAssembler assembler = null;
    CallFrame first = null;
    boolean complete = false;
    try {
      while (in.isReadable()) {
        int n = Math.min(READ, in.readableBytes());
        ByteBuf read = channel.alloc().heapBuffer(n);
        read.writeBytes(in, n);
        channel.writeInbound(read);
        for (ByteBuf frame; (frame = channel.readInbound()) != null; ) {
          try {
            CallFrame f = CallFrame.parse(frame);
            if (first == null) {
              first = f;
              assembler = new MessageAssembler(true, f.checksumType(), 16L << 20);
            }
            complete = assembler.add(f);
          } finally {
            frame.release();
          }
        }
      }
      if (!complete) {
        throw new IllegalStateException("the message did not complete");
      }
      Body b = assembler.takeBody();
      long n = b.length();
      if (b.arrayView() == null) {
        b.copyTo(scratch, 0);
      }
      b.release();
      return n + first.ttl();
    } finally {
      if (assembler != null) {
        assembler.release();
      }
    }
  }
}
