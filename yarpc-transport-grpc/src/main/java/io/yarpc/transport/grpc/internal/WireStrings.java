package io.yarpc.transport.grpc.internal;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Decoded metadata names and values that repeat from call to call ({@code rpc-caller: my-service},
 * {@code content-length}, a client's {@code user-agent}), so that decoding them allocates nothing once
 * seen: a fixed table of recent decodings, looked up by the bytes' hash. A slot holds one immutable
 * entry that a miss replaces, so the table never grows and values that change with every call (a
 * request id) only cost what decoding costs anyway. Bytes longer than {@value #MAX_LENGTH} are decoded
 * without the table.
 *
 * <p>Thread-safe without locks: an entry's fields are final, so a thread that reads a slot sees a
 * whole entry, perhaps not the latest one.
 */
final class WireStrings {
  private static final int SLOTS = 256; // a power of two
  static final int MAX_LENGTH = 64;

  /** Metadata names (lower-case ASCII on the wire). */
  static final WireStrings NAMES = new WireStrings(StandardCharsets.US_ASCII);

  /** Metadata values, read as UTF-8. */
  static final WireStrings VALUES = new WireStrings(StandardCharsets.UTF_8);

  private record Entry(byte[] bytes, String text) {}

  private final Charset charset;
  private final Entry[] slots = new Entry[SLOTS];

  private WireStrings(Charset charset) {
    this.charset = charset;
  }

  /** {@code bytes} decoded; the same String as last time when those bytes were decoded recently. */
  String decode(byte[] bytes) {
    if (bytes.length > MAX_LENGTH) {
      return new String(bytes, charset);
    }
    int h = 1;
    for (byte b : bytes) {
      h = 31 * h + b;
    }
    int slot = (h ^ (h >>> 16)) & (SLOTS - 1);
    Entry e = slots[slot];
    if (e != null && Arrays.equals(e.bytes, bytes)) {
      return e.text;
    }
    String text = new String(bytes, charset);
    // a copy: the table must not keep (or see changes to) a caller's array
    slots[slot] = new Entry(bytes.clone(), text);
    return text;
  }
}
