package io.yarpc.transport.tchannel.internal;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.google.gson.JsonObject;
import com.google.gson.Strictness;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import io.yarpc.internal.JsonErrors;
import java.io.IOException;
import java.io.StringReader;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * arg2 as YARPC uses it: application headers (docs/spec/wire-tchannel.md §10, §12.1). For the {@code json} arg
 * scheme a JSON object of strings ({@code {}} when empty); for every other scheme the binary header map
 * {@code nh:2 (k~2 v~2){nh}} ({@code 00 00} when empty).
 *
 * <p>Reading is lenient where peers differ: an empty arg2 is an empty map in both forms (tchannel-node
 * sends one), JSON {@code null} is an empty map, trailing whitespace and a newline (tchannel-go's encoder)
 * are fine, and JSON numbers and booleans are taken as their text. Anything else malformed is an {@link
 * IllegalArgumentException} saying what is wrong.
 *
 * <p>Decoding with a count limit stops as soon as it is passed, before the rest is decoded: the binary
 * map's count is checked before any entry is read, and JSON is read as a stream, one entry at a time
 * (never as a tree), so a peer's header block costs at most the limit's worth of work. (The byte limit
 * is checked earlier still, on the raw arg2 as it arrives: {@link MessageAssembler}.)
 */
public final class ApplicationHeaders {
  private ApplicationHeaders() {}

  /** The headers hold more entries than the caller allows. */
  public static final class TooManyHeadersException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    TooManyHeadersException(int max) {
      super("more than " + max + " headers");
    }
  }

  /** Whether the arg scheme carries headers as JSON. */
  public static boolean isJson(String argScheme) {
    return "json".equals(argScheme);
  }

  /**
   * Encodes headers for {@code argScheme}.
   *
   * @throws IllegalArgumentException when a key or value does not fit a two-byte length
   */
  public static byte[] encode(Map<String, String> headers, String argScheme) {
    return isJson(argScheme) ? encodeJson(headers) : encodeBinary(headers);
  }

  /** Decodes headers written for {@code argScheme}; keys in the order found (the map is read-only). */
  public static Map<String, String> decode(byte[] bytes, String argScheme) {
    return decode(bytes, argScheme, Integer.MAX_VALUE);
  }

  /**
   * Decodes at most {@code maxCount} headers written for {@code argScheme}; keys in the order found.
   *
   * @throws TooManyHeadersException as soon as the headers turn out to hold more
   */
  public static Map<String, String> decode(byte[] bytes, String argScheme, int maxCount) {
    return isJson(argScheme) ? decodeJson(bytes, maxCount) : decodeBinary(bytes, maxCount);
  }

  /** The binary header map. */
  public static byte[] encodeBinary(Map<String, String> headers) {
    if (headers.size() > 0xFFFF) {
      throw new IllegalArgumentException("too many headers: " + headers.size());
    }
    byte[][] parts = new byte[headers.size() * 2][];
    int size = 2;
    int i = 0;
    for (Map.Entry<String, String> e : headers.entrySet()) {
      for (String s : new String[] {e.getKey(), e.getValue()}) {
        byte[] b = s.getBytes(UTF_8);
        if (b.length > 0xFFFF) {
          throw new IllegalArgumentException(
              "header " + e.getKey() + " is longer than 65535 bytes");
        }
        parts[i++] = b;
        size += 2 + b.length;
      }
    }
    byte[] out = new byte[size];
    out[0] = (byte) (headers.size() >>> 8);
    out[1] = (byte) headers.size();
    int pos = 2;
    for (byte[] p : parts) {
      out[pos++] = (byte) (p.length >>> 8);
      out[pos++] = (byte) p.length;
      System.arraycopy(p, 0, out, pos, p.length);
      pos += p.length;
    }
    return out;
  }

  /** Decodes a binary header map (read-only); an empty array is an empty map. */
  public static Map<String, String> decodeBinary(byte[] bytes) {
    return decodeBinary(bytes, Integer.MAX_VALUE);
  }

  private static Map<String, String> decodeBinary(byte[] bytes, int maxCount) {
    if (bytes.length == 0) {
      return new LinkedHashMap<>();
    }
    if (bytes.length < 2) {
      throw new IllegalArgumentException("header map truncated in its count");
    }
    int count = (bytes[0] & 0xFF) << 8 | bytes[1] & 0xFF;
    if (count > maxCount) {
      throw new TooManyHeadersException(maxCount);
    }
    if (count == 0 && bytes.length == 2) {
      return Map.of(); // the usual request: nothing to decode
    }
    Map<String, String> headers = new LinkedHashMap<>(Math.min(count, 64) * 2);
    int pos = 2;
    for (int i = 0; i < count; i++) {
      String[] kv = new String[2];
      for (int j = 0; j < 2; j++) {
        if (bytes.length - pos < 2) {
          throw new IllegalArgumentException(
              "header map truncated in header " + (i + 1) + " of " + count);
        }
        int length = (bytes[pos] & 0xFF) << 8 | bytes[pos + 1] & 0xFF;
        pos += 2;
        if (bytes.length - pos < length) {
          throw new IllegalArgumentException(
              "header map truncated in header " + (i + 1) + " of " + count);
        }
        kv[j] = new String(bytes, pos, length, UTF_8);
        pos += length;
      }
      headers.put(kv[0], kv[1]);
    }
    if (pos != bytes.length) {
      throw new IllegalArgumentException((bytes.length - pos) + " bytes after the header map");
    }
    return headers;
  }

  /** A JSON object of the headers, {@code {}} when empty. */
  public static byte[] encodeJson(Map<String, String> headers) {
    JsonObject o = new JsonObject();
    headers.forEach(o::addProperty);
    return o.toString().getBytes(UTF_8);
  }

  /** Decodes a JSON object of strings; empty input and {@code null} are an empty map. */
  public static Map<String, String> decodeJson(byte[] bytes) {
    return decodeJson(bytes, Integer.MAX_VALUE);
  }

  private static Map<String, String> decodeJson(byte[] bytes, int maxCount) {
    Map<String, String> headers = new LinkedHashMap<>();
    String text = new String(bytes, UTF_8);
    if (text.isBlank()) {
      return headers;
    }
    try (JsonReader reader = new JsonReader(new StringReader(text))) {
      reader.setStrictness(Strictness.LENIENT); // as Gson's JsonParser reads a document
      JsonToken root = reader.peek();
      if (root == JsonToken.NULL) {
        reader.nextNull();
      } else if (root != JsonToken.BEGIN_OBJECT) {
        throw new IllegalArgumentException("headers must be a JSON object, got " + kind(root));
      } else {
        reader.beginObject();
        int entries = 0; // counted as read: repeated keys cost work too
        while (reader.hasNext()) {
          if (entries++ == maxCount) {
            throw new TooManyHeadersException(maxCount);
          }
          String key = reader.nextName();
          JsonToken value = reader.peek();
          switch (value) {
            case STRING:
            case NUMBER:
              headers.put(key, reader.nextString()); // a number as its text
              break;
            case BOOLEAN:
              headers.put(key, String.valueOf(reader.nextBoolean()));
              break;
            default:
              throw new IllegalArgumentException(
                  "header " + key + " must be a string, got " + kind(value));
          }
        }
        reader.endObject();
      }
      reader.setStrictness(Strictness.LEGACY_STRICT); // whitespace may follow, nothing else
      if (reader.peek() != JsonToken.END_DOCUMENT) {
        throw new IllegalArgumentException("unexpected data after the headers' JSON object");
      }
    } catch (IOException | IllegalStateException e) {
      throw new IllegalArgumentException("malformed JSON headers: " + JsonErrors.describe(e), e);
    }
    return headers;
  }

  private static String kind(JsonToken t) {
    switch (t) {
      case BEGIN_ARRAY:
        return "an array";
      case BEGIN_OBJECT:
        return "an object";
      case NULL:
        return "null";
      default:
        return "a value";
    }
  }
}
