package io.grpc.netty;

import io.grpc.internal.ReadableBuffer;
import io.netty.buffer.ByteBuf;

/** Test access to grpc-netty's package-private {@code ReadableBuffer} over a Netty {@link ByteBuf}. */
public final class NettyReadableBuffers {
  private NettyReadableBuffers() {}

  /** grpc-netty's own wrapper, as its transport hands received data to the deframer; owns {@code buf}. */
  public static ReadableBuffer wrap(ByteBuf buf) {
    return new NettyReadableBuffer(buf);
  }
}
