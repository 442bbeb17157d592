package io.grpc.netty;

import io.netty.buffer.ByteBufAllocator;

/** Test access to the pooled allocator grpc-netty gives its channels (for memory baselines). */
public final class GrpcNettyAllocator {
  private GrpcNettyAllocator() {}

  /** The allocator grpc-netty's servers and channels use (direct buffers preferred). */
  public static ByteBufAllocator get() {
    return Utils.getByteBufAllocator(false);
  }
}
