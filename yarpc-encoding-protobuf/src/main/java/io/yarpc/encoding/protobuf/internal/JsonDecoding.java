package io.yarpc.encoding.protobuf.internal;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.yarpc.transport.Body;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PushbackReader;
import java.io.Reader;

/**
 * The proto3-JSON decode path: a UTF-8 reader straight over the body's byte access (the heap array, or
 * the buffer views), else over its stream; never a copy into an intermediate array. An empty body is the
 * default message, as for the binary encoding.
 */
public final class JsonDecoding {
  private JsonDecoding() {}

  /**
   * Merges the JSON in {@code body} (not released) into {@code builder} and builds the message.
   *
   * @throws InvalidProtocolBufferException for malformed JSON, values that do not fit, or missing
   *     required fields
   */
  @SuppressWarnings("unchecked")
  public static <T extends Message> T parse(
      JsonFormat.Parser parser, Body body, Message.Builder builder) throws IOException {
    if (body.length() != 0) {
      // Not closed: the body owns its stream and closes it on release.
      PushbackReader reader = new PushbackReader(reader(body), 1);
      int first = reader.read();
      if (first >= 0) {
        reader.unread(first);
        parser.merge(reader, builder);
      }
    }
    if (!builder.isInitialized()) {
      throw new InvalidProtocolBufferException(
          "Message missing required fields: "
              + String.join(", ", builder.findInitializationErrors()));
    }
    return (T) builder.build();
  }

  private static Reader reader(Body body) {
    InputStream in;
    if (body.hasByteAccess()) {
      in = ByteAccess.stream(body.byteBuffers());
      DecodeStats.JSON_VIEWS.increment();
    } else {
      in = body.openStream();
      DecodeStats.JSON_STREAMED.increment();
    }
    return new InputStreamReader(in, UTF_8);
  }
}
