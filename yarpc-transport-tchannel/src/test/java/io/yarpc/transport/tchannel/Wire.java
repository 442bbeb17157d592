package io.yarpc.transport.tchannel;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.CRC32C;

/** Hand-built TChannel frames for tests that play a peer byte by byte. */
final class Wire {
  static final int NULL_ID = 0xFFFFFFFF;

  private Wire() {}

  /** A frame: 16-byte header (size counts it) and payload. */
  static byte[] frame(int type, int id, byte[] payload) {
    ByteBuffer b = ByteBuffer.allocate(16 + payload.length);
    b.putShort((short) (16 + payload.length))
        .put((byte) type)
        .put((byte) 0)
        .putInt(id)
        .putLong(0)
        .put(payload);
    return b.array();
  }

  /** An init req with the five headers (host_port 0.0.0.0:0). */
  static byte[] initReq(int id) {
    Map<String, String> h = new LinkedHashMap<>();
    h.put("host_port", "0.0.0.0:0");
    h.put("process_name", "test[1]");
    h.put("tchannel_language", "java");
    h.put("tchannel_language_version", "17");
    h.put("tchannel_version", "test");
    return init(0x01, id, 2, h);
  }

  static byte[] init(int type, int id, int version, Map<String, String> headers) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(version >>> 8);
    out.write(version);
    out.write(headers.size() >>> 8);
    out.write(headers.size());
    headers.forEach(
        (k, v) -> {
          for (String s : new String[] {k, v}) {
            byte[] b = s.getBytes(UTF_8);
            out.write(b.length >>> 8);
            out.write(b.length);
            out.writeBytes(b);
          }
        });
    return frame(type, id, out.toByteArray());
  }

  /** Transport headers {@code nh:1 (k~1 v~1)}: alternating keys and values. */
  static byte[] transportHeaders(String... kv) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(kv.length / 2);
    for (String s : kv) {
      byte[] b = s.getBytes(UTF_8);
      out.write(b.length);
      out.writeBytes(b);
    }
    return out.toByteArray();
  }

  /** The standard headers of a raw call from caller {@code bad-client}. */
  static byte[] rawHeaders() {
    return transportHeaders("as", "raw", "cn", "bad-client");
  }

  /** An empty binary header map, {@code 00 00}. */
  static byte[] noHeaders() {
    return new byte[] {0, 0};
  }

  /** The CRC-32C of the chunks. */
  static int crc32c(byte[]... chunks) {
    CRC32C c = new CRC32C();
    for (byte[] b : chunks) {
      c.update(b);
    }
    return (int) c.getValue();
  }

  /** A call req with CRC-32C over {@code chunks} (use {@link #callReqWithChecksum} for other values). */
  static byte[] callReq(
      int id, int flags, long ttl, String service, byte[] headers, byte[]... chunks) {
    return callReqWithChecksum(id, flags, ttl, service, headers, 3, crc32c(chunks), chunks);
  }

  static byte[] callReqWithChecksum(
      int id,
      int flags,
      long ttl,
      String service,
      byte[] headers,
      int csumType,
      int csum,
      byte[]... chunks) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(flags);
    out.writeBytes(ByteBuffer.allocate(4).putInt((int) ttl).array());
    out.writeBytes(new byte[25]);
    byte[] svc = service.getBytes(UTF_8);
    out.write(svc.length);
    out.writeBytes(svc);
    out.writeBytes(headers);
    out.write(csumType);
    if (csumType != 0) {
      out.writeBytes(ByteBuffer.allocate(4).putInt(csum).array());
    }
    for (byte[] c : chunks) {
      out.write(c.length >>> 8);
      out.write(c.length);
      out.writeBytes(c);
    }
    return frame(0x03, id, out.toByteArray());
  }

  /** A call req continue with checksum type {@code csumType} and the given running value. */
  static byte[] callReqContinue(int id, int flags, int csumType, int csum, byte[]... chunks) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(flags);
    out.write(csumType);
    if (csumType != 0) {
      out.writeBytes(ByteBuffer.allocate(4).putInt(csum).array());
    }
    for (byte[] c : chunks) {
      out.write(c.length >>> 8);
      out.write(c.length);
      out.writeBytes(c);
    }
    return frame(0x13, id, out.toByteArray());
  }

  static byte[] bytes(String s) {
    return s.getBytes(UTF_8);
  }
}
