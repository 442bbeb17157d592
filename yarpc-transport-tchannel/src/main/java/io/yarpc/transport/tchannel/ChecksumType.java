package io.yarpc.transport.tchannel;

/**
 * The checksum a TChannel call message carries over its args (protocol v2, docs/spec/wire-tchannel.md §7.4): one
 * running value over the raw bytes of every arg chunk of the message, carried from frame to frame.
 *
 * <p>Receiving: all four types are parsed; {@link #CRC32} and {@link #CRC32C} are verified (a mismatch is
 * answered with a bad-request error frame), {@link #FARMHASH} is not verified (tchannel-node hashes only
 * the last chunk of each frame and tchannel-go cannot read it). Responses reuse the request's type, except
 * that a farmhash request is answered with {@link #NONE}. Sending: an outbound may use {@link #NONE},
 * {@link #CRC32} (tchannel-go's and this transport's default) or {@link #CRC32C} (tchannel-node's default),
 * never {@link #FARMHASH}.
 */
public enum ChecksumType {
  /** No checksum (type 0x00, no checksum bytes on the wire). */
  NONE(0x00, 0),
  /** CRC-32, IEEE/zlib polynomial (type 0x01; the spec's "Adler-32" label is wrong). */
  CRC32(0x01, 4),
  /** farmhash Fingerprint32 (type 0x02): parsed, never verified, never sent. */
  FARMHASH(0x02, 4),
  /** CRC-32C, Castagnoli polynomial (type 0x03). */
  CRC32C(0x03, 4);

  private final int code;
  private final int size;

  ChecksumType(int code, int size) {
    this.code = code;
    this.size = size;
  }

  /** The type byte on the wire. */
  public int code() {
    return code;
  }

  /** How many checksum bytes follow the type byte: 0 or 4. */
  public int size() {
    return size;
  }

  /** The type with this wire byte, or {@code null} when the byte names no type. */
  public static ChecksumType fromCode(int code) {
    switch (code) {
      case 0x00:
        return NONE;
      case 0x01:
        return CRC32;
      case 0x02:
        return FARMHASH;
      case 0x03:
        return CRC32C;
      default:
        return null;
    }
  }
}
