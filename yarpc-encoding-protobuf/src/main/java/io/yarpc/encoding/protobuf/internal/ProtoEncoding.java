package io.yarpc.encoding.protobuf.internal;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.MessageLite;
import java.io.IOException;
import java.io.OutputStream;

/**
 * The binary encode path: writes a message into a transport's output without a buffer of its own.
 *
 * <p>protobuf's {@code writeTo(OutputStream)} allocates a buffer of up to 4 KiB per call for its encoder.
 * A message of at most {@link #MAX_SCRATCH} bytes is instead serialised into the thread's {@link
 * Scratch} array (the one the decode paths use) and written to the output in one piece; the output
 * (a transport's stream over a pooled buffer) copies it as it would copy protobuf's buffer. Larger
 * messages go through protobuf's own stream encoder, whose 4 KiB buffer is small next to them.
 */
public final class ProtoEncoding {
  /** The largest message serialised through the thread's scratch array: 64 KiB. */
  public static final int MAX_SCRATCH = 64 << 10;

  private ProtoEncoding() {}

  /**
   * Writes {@code message}, whose serialised size is {@code size}, to {@code out}.
   *
   * @throws IllegalStateException when the message's size is not {@code size} (a message changed
   *     after its size was taken; protobuf's messages are immutable, so only a broken implementation)
   * @throws IOException when {@code out} fails
   */
  public static void writeTo(MessageLite message, int size, OutputStream out) throws IOException {
    if (size > MAX_SCRATCH) {
      message.writeTo(out);
      return;
    }
    byte[] scratch = Scratch.take(size);
    try {
      CodedOutputStream coded = CodedOutputStream.newInstance(scratch, 0, size);
      message.writeTo(coded);
      coded.checkNoSpaceLeft();
      out.write(scratch, 0, size);
    } finally {
      Scratch.giveBack(scratch);
    }
  }
}
