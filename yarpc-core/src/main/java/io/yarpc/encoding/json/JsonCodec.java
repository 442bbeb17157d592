package io.yarpc.encoding.json;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.google.gson.Gson;
import com.google.gson.JsonIOException;
import com.google.gson.JsonParseException;
import com.google.gson.reflect.TypeToken;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import io.yarpc.internal.ByteBuffersInputStream;
import io.yarpc.internal.JsonErrors;
import io.yarpc.transport.Body;
import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.StringReader;
import java.lang.reflect.Type;
import java.nio.ByteBuffer;

/**
 * Reads and writes JSON bodies with one {@link Gson}. Reading asks for byte access first and parses from
 * the views without copying them into an array; only a body without byte access is read through its
 * stream. Writing serialises into one growing array that becomes the body (no further copy).
 */
final class JsonCodec {
  /** The Gson used when none is given. */
  static final Gson DEFAULT_GSON = new Gson();

  /** Why a body could not be decoded, with a message in yarpc-go's spirit ({@code EOF} when empty). */
  static final class DecodeException extends Exception {
    private static final long serialVersionUID = 1L;

    DecodeException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private final Gson gson;

  JsonCodec(Gson gson) {
    this.gson = gson;
  }

  /**
   * The value of type {@code type} in {@code body}. The body is not released. A JSON {@code null} gives
   * {@code null}; unknown fields are ignored and, unless the Gson was built with a strictness, Gson's
   * lenient syntax is accepted (Gson's own {@code fromJson} behaviour); trailing non-whitespace is
   * rejected.
   *
   * @throws DecodeException for an empty body (message {@code EOF}, as Go's decoder says), malformed
   *     JSON or a value that does not fit the type
   */
  <T> T decode(Body body, Type type) throws DecodeException {
    if (body.length() == 0) {
      throw new DecodeException("EOF", null);
    }
    try (Reader reader = reader(body)) {
      JsonReader json = gson.newJsonReader(reader);
      try {
        json.peek();
      } catch (EOFException e) {
        throw new DecodeException("EOF", e);
      }
      @SuppressWarnings("unchecked")
      T value = (T) gson.fromJson(json, TypeToken.get(type));
      JsonToken after;
      try {
        after = json.peek();
      } catch (IOException e) {
        after = null; // a second, malformed document
      }
      if (after != JsonToken.END_DOCUMENT) {
        throw new DecodeException("JSON document was not fully consumed", null);
      }
      return value;
    } catch (JsonParseException | IOException | IllegalStateException | NumberFormatException e) {
      throw new DecodeException(JsonErrors.describe(e), e);
    }
  }

  /**
   * A heap body up to this size is decoded into one {@link String} straight from its array: a single
   * UTF-8 decode is cheaper than an {@link InputStreamReader}, whose decoder buffers alone are 16 KiB per
   * call. Larger bodies stream, so memory stays bounded by Gson's own buffer.
   */
  private static final int DECODE_AT_ONCE_LIMIT = 64 * 1024;

  /**
   * Other bodies (direct or split views, streams) must first be gathered into an array to decode them at
   * once; that pays off only while the array is smaller than the reader's buffers (measured with JMH: at
   * 350 B 12.7 KB instead of 20.8 KB per call, at 10 KiB worse than streaming).
   */
  private static final int GATHER_LIMIT = 8 * 1024;

  /** A reader over the body: from byte access when it has it, else from its stream. */
  private static Reader reader(Body body) throws IOException {
    long length = body.length();
    if (body.hasByteAccess()) {
      ByteBuffer whole = body.arrayView();
      if (whole != null) {
        byte[] array = whole.array();
        int offset = whole.arrayOffset() + whole.position();
        return length <= DECODE_AT_ONCE_LIMIT
            ? new StringReader(new String(array, offset, whole.remaining(), UTF_8))
            : new InputStreamReader(
                new ByteArrayInputStream(array, offset, whole.remaining()), UTF_8);
      }
      if (length <= GATHER_LIMIT) {
        byte[] gathered = new byte[(int) length];
        body.copyTo(gathered, 0);
        return new StringReader(new String(gathered, UTF_8));
      }
      return new InputStreamReader(new ByteBuffersInputStream(body.byteBuffers()), UTF_8);
    }
    InputStream in = body.openStream();
    return length >= 0 && length <= GATHER_LIMIT
        ? new StringReader(new String(in.readNBytes((int) length), UTF_8))
        : new InputStreamReader(in, UTF_8);
  }

  /**
   * {@code value} (may be null) as a JSON body: UTF-8, followed by a newline as Go's encoder writes it,
   * of known length, backed by the array it was serialised into.
   *
   * @throws JsonIOException or another runtime exception when Gson cannot serialise the value
   */
  Body encode(Object value) {
    Utf8BodyWriter out = new Utf8BodyWriter();
    gson.toJson(value, out);
    out.write('\n');
    return out.toBody();
  }
}
