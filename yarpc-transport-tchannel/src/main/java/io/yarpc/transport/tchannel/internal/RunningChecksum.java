package io.yarpc.transport.tchannel.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.yarpc.transport.tchannel.ChecksumType;
import java.nio.ByteBuffer;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import java.util.zip.Checksum;

/**
 * The running checksum of one call message: CRC-32 or CRC-32C over the raw bytes of every arg chunk in
 * order, without the length prefixes, across all frames (docs/spec/wire-tchannel.md §7.4). For {@link
 * ChecksumType#NONE} and {@link ChecksumType#FARMHASH} it computes nothing ({@link #isVerifiable()} is
 * false). Not thread-safe.
 */
final class RunningChecksum {
  private final ChecksumType type;
  private final Checksum crc;

  /** A checksum of {@code type}, starting from zero bytes. */
  public RunningChecksum(ChecksumType type) {
    this.type = type;
    switch (type) {
      case CRC32:
        crc = new CRC32();
        break;
      case CRC32C:
        crc = new CRC32C();
        break;
      default:
        crc = null;
    }
  }

  /** The type. */
  public ChecksumType type() {
    return type;
  }

  /** Whether this type is computed (and so can be verified and sent). */
  public boolean isVerifiable() {
    return crc != null;
  }

  /** Adds {@code length} bytes of {@code buf} from {@code index}; reads them in place, copies nothing. */
  public void update(ByteBuf buf, int index, int length) {
    if (crc == null || length == 0) {
      return;
    }
    if (buf.hasArray()) {
      crc.update(buf.array(), buf.arrayOffset() + index, length);
      return;
    }
    if (buf instanceof CompositeByteBuf c) { // a frame across reads: each read's part in place
      int k = c.toComponentIndex(index);
      for (int from = index - c.toByteIndex(k), left = length; left > 0; k++, from = 0) {
        ByteBuf part = c.internalComponent(k);
        int n = Math.min(left, part.readableBytes() - from);
        update(part, from, n);
        left -= n;
      }
      return;
    }
    for (ByteBuffer b : buf.nioBuffers(index, length)) {
      crc.update(b);
    }
  }

  /** Adds the bytes of {@code bytes}. */
  public void update(byte[] bytes, int offset, int length) {
    if (crc != null) {
      crc.update(bytes, offset, length);
    }
  }

  /** The value after the bytes added so far (what a frame's {@code csum} field holds); 0 for none. */
  public int value() {
    return crc == null ? 0 : (int) crc.getValue();
  }
}
