package io.yarpc.transport.tchannel.internal;

import java.nio.ByteBuffer;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The 25-byte tracing field ({@code spanid:8 parentid:8 traceid:8 traceflags:1}). This transport starts a
 * root span per outbound call as tchannel-node does (trace id = span id, parent 0, not sampled);
 * responses and error frames echo the request's bytes. Modern tracing context travels in arg2, not here.
 */
final class Tracing {
  private Tracing() {}

  /** A new root span. */
  public static byte[] newRoot() {
    long span = ThreadLocalRandom.current().nextLong();
    return ByteBuffer.allocate(Frames.TRACING_SIZE)
        .putLong(span)
        .putLong(0)
        .putLong(span)
        .put((byte) 0)
        .array();
  }
}
