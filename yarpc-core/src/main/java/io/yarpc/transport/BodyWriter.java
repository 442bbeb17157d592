package io.yarpc.transport;

import java.io.IOException;
import java.io.OutputStream;

/**
 * Writes a value's serialised bytes; the serialising half of a {@link Body#lazy lazy body}. It may be
 * called more than once (a retried call writes its body again), one call at a time, and writes the same
 * bytes each time.
 */
@FunctionalInterface
public interface BodyWriter {
  /** Writes exactly the promised number of bytes to {@code out}; does not close it. */
  void writeTo(OutputStream out) throws IOException;
}
