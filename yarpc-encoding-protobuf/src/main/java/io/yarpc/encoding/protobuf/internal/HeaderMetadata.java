package io.yarpc.encoding.protobuf.internal;

import io.grpc.Metadata;
import io.yarpc.transport.Headers;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * YARPC application headers to grpc {@link Metadata} and back. Keys are lower case on both sides. A
 * binary metadata key (ending in {@code -bin}) travels as a header whose value is the base64 of the bytes,
 * as gRPC itself puts it on the wire; gRPC's own keys ({@code grpc-*}, pseudo headers) and the HTTP
 * headers gRPC manages ({@code content-type}, {@code te}, {@code user-agent}) are not application
 * headers and are skipped, as are header keys grpc does not accept.
 */
final class HeaderMetadata {
  private static final int KEY_CACHE_LIMIT = 4096;

  /** Keys by name: a service reads and writes the same few headers on every call. */
  private static final Map<String, Metadata.Key<String>> ASCII_KEYS = new ConcurrentHashMap<>();

  private static final Map<String, Metadata.Key<byte[]>> BINARY_KEYS = new ConcurrentHashMap<>();

  private HeaderMetadata() {}

  /**
   * The ASCII key named {@code name}.
   *
   * @throws IllegalArgumentException when grpc does not accept the name
   */
  static Metadata.Key<String> asciiKey(String name) {
    Metadata.Key<String> key = ASCII_KEYS.get(name);
    if (key == null) {
      key = Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
      if (ASCII_KEYS.size() < KEY_CACHE_LIMIT) {
        ASCII_KEYS.put(name, key);
      }
    }
    return key;
  }

  /**
   * The binary key named {@code name} (ending in {@code -bin}).
   *
   * @throws IllegalArgumentException when grpc does not accept the name
   */
  static Metadata.Key<byte[]> binaryKey(String name) {
    Metadata.Key<byte[]> key = BINARY_KEYS.get(name);
    if (key == null) {
      key = Metadata.Key.of(name, Metadata.BINARY_BYTE_MARSHALLER);
      if (BINARY_KEYS.size() < KEY_CACHE_LIMIT) {
        BINARY_KEYS.put(name, key);
      }
    }
    return key;
  }

  /** The application headers in {@code metadata} (the last value of a repeated key wins). */
  public static Headers toHeaders(Metadata metadata) {
    if (metadata == null || metadata.keys().isEmpty()) {
      return Headers.empty();
    }
    Headers.Builder b = Headers.builder();
    for (String key : metadata.keys()) {
      if (skipped(key)) {
        continue;
      }
      if (key.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
        byte[] last = null;
        for (byte[] v : metadata.getAll(binaryKey(key))) {
          last = v;
        }
        if (last != null) {
          b.add(key, Base64.getEncoder().withoutPadding().encodeToString(last));
        }
      } else {
        String v = metadata.get(asciiKey(key));
        if (v != null) {
          b.add(key, v);
        }
      }
    }
    return b.build();
  }

  /** {@code headers} added to {@code into} (which is returned). */
  public static Metadata addTo(Headers headers, Metadata into) {
    if (headers.isEmpty()) {
      return into;
    }
    headers.forEach(
        (key, value) -> {
          if (skipped(key)) {
            return;
          }
          try {
            if (key.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
              into.put(binaryKey(key), Base64.getDecoder().decode(value));
            } else {
              into.put(asciiKey(key), value);
            }
          } catch (IllegalArgumentException notValidForGrpc) {
            // a key grpc does not accept, or a -bin value that is not base64: not representable
          }
        });
    return into;
  }

  /** {@code headers} as new metadata. */
  public static Metadata toMetadata(Headers headers) {
    return addTo(headers, new Metadata());
  }

  private static boolean skipped(String key) {
    return key.isEmpty()
        || key.charAt(0) == ':'
        || key.startsWith("grpc-")
        || key.equals("content-type")
        || key.equals("te")
        || key.equals("user-agent");
  }
}
