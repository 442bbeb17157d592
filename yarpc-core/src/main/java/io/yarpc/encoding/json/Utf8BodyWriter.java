package io.yarpc.encoding.json;

import io.yarpc.transport.Body;
import java.io.Writer;
import java.util.Arrays;

/**
 * A {@link Writer} that encodes UTF-8 straight into one growing array, which then becomes a body without
 * a copy. An {@code OutputStreamWriter} over a byte stream would allocate an 8 KiB encoder buffer per
 * value, the largest cost of encoding a small value. Malformed surrogates become {@code ?}, as with
 * {@code OutputStreamWriter} and {@code String.getBytes}. Not thread-safe; one value per writer.
 */
final class Utf8BodyWriter extends Writer {
  private byte[] bytes = new byte[128];
  private int count;
  private char highSurrogate; // a high surrogate waiting for its low half, or 0

  @Override
  public void write(int c) {
    ensure(4);
    put((char) c);
  }

  @Override
  public void write(char[] chars, int offset, int length) {
    ensure(3L * length + 1);
    for (int i = offset; i < offset + length; i++) {
      put(chars[i]);
    }
  }

  @Override
  public void write(String s, int offset, int length) {
    ensure(3L * length + 1);
    for (int i = offset; i < offset + length; i++) {
      put(s.charAt(i));
    }
  }

  @Override
  public void flush() {}

  @Override
  public void close() {
    endPendingSurrogate();
  }

  /** What was written, as a body over this writer's array. */
  Body toBody() {
    endPendingSurrogate();
    return Body.of(bytes, 0, count);
  }

  /** Encodes {@code c}; room for four more bytes was ensured. */
  private void put(char c) {
    if (highSurrogate != 0) {
      char high = highSurrogate;
      highSurrogate = 0;
      if (Character.isLowSurrogate(c)) {
        int cp = Character.toCodePoint(high, c);
        bytes[count++] = (byte) (0xf0 | (cp >> 18));
        bytes[count++] = (byte) (0x80 | ((cp >> 12) & 0x3f));
        bytes[count++] = (byte) (0x80 | ((cp >> 6) & 0x3f));
        bytes[count++] = (byte) (0x80 | (cp & 0x3f));
        return;
      }
      bytes[count++] = '?';
    }
    if (c < 0x80) {
      bytes[count++] = (byte) c;
    } else if (c < 0x800) {
      bytes[count++] = (byte) (0xc0 | (c >> 6));
      bytes[count++] = (byte) (0x80 | (c & 0x3f));
    } else if (Character.isHighSurrogate(c)) {
      highSurrogate = c;
    } else if (Character.isLowSurrogate(c)) {
      bytes[count++] = '?';
    } else {
      bytes[count++] = (byte) (0xe0 | (c >> 12));
      bytes[count++] = (byte) (0x80 | ((c >> 6) & 0x3f));
      bytes[count++] = (byte) (0x80 | (c & 0x3f));
    }
  }

  private void endPendingSurrogate() {
    if (highSurrogate != 0) {
      highSurrogate = 0;
      ensure(1);
      bytes[count++] = '?';
    }
  }

  /** Room for {@code n} more bytes (one more for a pending surrogate's {@code ?}). */
  private void ensure(long n) {
    long needed = count + n + 1;
    if (needed > bytes.length) {
      if (needed > Integer.MAX_VALUE - 8) {
        throw new OutOfMemoryError("JSON value larger than 2 GiB");
      }
      long doubled = Math.min(Integer.MAX_VALUE - 8L, 2L * bytes.length);
      bytes = Arrays.copyOf(bytes, (int) Math.max(needed, doubled));
    }
  }
}
