package io.yarpc.encoding.protobuf;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import com.google.protobuf.TypeRegistry;
import com.google.protobuf.util.JsonFormat;
import io.yarpc.encoding.protobuf.internal.JsonDecoding;
import io.yarpc.encoding.protobuf.internal.ProtoDecoding;
import io.yarpc.encoding.protobuf.internal.ProtoEncoding;
import io.yarpc.encoding.protobuf.internal.TypeRegistries;
import io.yarpc.transport.Body;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * Reads and writes one protobuf message type as a YARPC {@link Body}, in the binary ({@value
 * Protobuf#ENCODING}) or proto3-JSON ({@value Protobuf#JSON_ENCODING}) encoding. The service and stub
 * adapters use it for every message; applications may use it to handle protobuf bodies by hand.
 *
 * <h2>Decoding: byte access first</h2>
 *
 * <ul>
 *   <li>A body with byte access whose bytes are one heap view is parsed in place from the view's array:
 *       no copy.
 *   <li>Direct or several views are copied once into a per-thread scratch array (reused, grown to at most
 *       4 MiB, bigger bodies get a one-off array) and parsed from there. protobuf-java 4.34 and later
 *       cannot parse direct memory without copying it itself, and a rope of buffers decodes through a
 *       stream that copies again; one copy into a reused array allocates nothing per call.
 *   <li>Only a body without byte access is read through its stream, into the same scratch array.
 * </ul>
 *
 * Parsing never aliases: {@code bytes} fields are copied out, so a decoded message owns all its data and
 * stays valid after the body is released (the aliasing alternative is {@link
 * io.yarpc.encoding.protobuf.unsafe.UnsafeAliasing}). JSON is read by a UTF-8 reader straight over the
 * views or the stream, ignoring unknown fields. An <b>empty body</b> is the default message in either
 * encoding (protobuf's own rule: proto3 has no required fields, and yarpc-go decodes an empty body the same
 * way), unless the message type has proto2 {@code required} fields, which then fail as missing. The body
 * is never released here: its owner releases it.
 *
 * <h2>Encoding</h2>
 *
 * Binary: a {@linkplain Body#lazy lazy body} of the message's serialised size that serialises straight
 * into whatever the transport writes it to (its pooled buffer), with no intermediate array. JSON: the
 * compact proto3 JSON mapping (lower camel case names, defaults omitted) as UTF-8. The returned body
 * belongs to the caller, who hands it to a transport (which releases it).
 *
 * <p>Immutable and thread-safe.
 *
 * @param <T> the message type
 */
public final class ProtobufCodec<T extends Message> {
  private final T prototype;
  private final Parser<T> parser;
  private final TypeRegistry typeRegistry;
  private final JsonFormat.Parser jsonParser;
  private final JsonFormat.Printer jsonPrinter;

  @SuppressWarnings("unchecked")
  private ProtobufCodec(T prototype, TypeRegistry typeRegistry) {
    this.prototype = requireNonNull(prototype, "prototype");
    this.parser = (Parser<T>) prototype.getParserForType();
    this.typeRegistry = requireNonNull(typeRegistry, "typeRegistry");
    this.jsonParser = JsonFormat.parser().ignoringUnknownFields().usingTypeRegistry(typeRegistry);
    this.jsonPrinter =
        JsonFormat.printer().omittingInsignificantWhitespace().usingTypeRegistry(typeRegistry);
  }

  /**
   * A codec for the type of {@code prototype} (e.g. {@code EchoRequest.getDefaultInstance()}); JSON
   * resolves {@code google.protobuf.Any} values of the types in the message's file, its imports, and the
   * {@code google.rpc} error details.
   */
  public static <T extends Message> ProtobufCodec<T> of(T prototype) {
    return new ProtobufCodec<>(
        prototype, TypeRegistries.forMessages(java.util.List.of(prototype.getDescriptorForType())));
  }

  /** A codec for the type of {@code prototype} whose JSON resolves {@code Any} values with {@code types}. */
  public static <T extends Message> ProtobufCodec<T> of(T prototype, TypeRegistry types) {
    return new ProtobufCodec<>(prototype, types);
  }

  /** The message type's default instance. */
  public T prototype() {
    return prototype;
  }

  /** The registry JSON uses for {@code google.protobuf.Any}. */
  public TypeRegistry typeRegistry() {
    return typeRegistry;
  }

  /** Whether {@code encoding} is one this codec reads and writes ({@code proto} or {@code json}). */
  public static boolean supports(String encoding) {
    return Protobuf.ENCODING.equals(encoding) || Protobuf.JSON_ENCODING.equals(encoding);
  }

  /**
   * The message in {@code body}, which is not released.
   *
   * @throws com.google.protobuf.InvalidProtocolBufferException for malformed input or missing required
   *     fields
   * @throws IOException when the body's stream fails
   * @throws IllegalArgumentException for an encoding other than {@code proto} and {@code json}
   */
  public T decode(Body body, String encoding) throws IOException {
    requireNonNull(body, "body");
    if (Protobuf.ENCODING.equals(encoding)) {
      return ProtoDecoding.parse(parser, body);
    }
    if (Protobuf.JSON_ENCODING.equals(encoding)) {
      return JsonDecoding.parse(jsonParser, body, prototype.newBuilderForType());
    }
    throw unsupported(encoding);
  }

  /**
   * {@code message} as a body in {@code encoding}: binary as a lazy body of known length (serialised
   * when written, through a per-thread scratch array up to 64 KiB, so writing it allocates no
   * buffer), JSON as UTF-8.
   *
   * @throws IOException when JSON printing fails (an {@code Any} of a type the registry does not know)
   * @throws IllegalArgumentException for an encoding other than {@code proto} and {@code json}
   */
  public Body encode(T message, String encoding) throws IOException {
    requireNonNull(message, "message");
    if (Protobuf.ENCODING.equals(encoding)) {
      int size = message.getSerializedSize();
      return Body.lazy(size, out -> ProtoEncoding.writeTo(message, size, out));
    }
    if (Protobuf.JSON_ENCODING.equals(encoding)) {
      StringBuilder json = new StringBuilder(64);
      jsonPrinter.appendTo(message, json);
      return Body.of(json.toString().getBytes(StandardCharsets.UTF_8));
    }
    throw unsupported(encoding);
  }

  private static IllegalArgumentException unsupported(String encoding) {
    return new IllegalArgumentException(
        "protobuf messages are encoded as \"proto\" or \"json\", not \"" + encoding + "\"");
  }

  @Override
  public String toString() {
    return "ProtobufCodec{" + prototype.getDescriptorForType().getFullName() + "}";
  }
}
