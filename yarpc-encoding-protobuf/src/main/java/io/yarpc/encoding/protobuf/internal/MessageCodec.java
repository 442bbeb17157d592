package io.yarpc.encoding.protobuf.internal;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import com.google.protobuf.TypeRegistry;
import io.grpc.MethodDescriptor;
import io.yarpc.encoding.protobuf.Protobuf;
import io.yarpc.encoding.protobuf.ProtobufCodec;
import io.yarpc.transport.Body;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;

/**
 * How the adapters read and write the messages of one side of a grpc method. Generated protobuf methods
 * (whose marshallers are {@link MethodDescriptor.PrototypeMarshaller}s of a {@link Message}) get the
 * {@link ProtobufCodec}: both encodings, byte access first. Any other marshaller is used as is, binary
 * encoding only, through streams.
 *
 * @param <T> the message type
 */
abstract class MessageCodec<T> {
  private static final List<String> BOTH = List.of(Protobuf.ENCODING, Protobuf.JSON_ENCODING);
  private static final List<String> PROTO_ONLY = List.of(Protobuf.ENCODING);

  MessageCodec() {}

  /** The codec for {@code marshaller}'s messages; JSON resolves {@code Any} values with {@code types}. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public static <T> MessageCodec<T> of(
      MethodDescriptor.Marshaller<T> marshaller, TypeRegistry types) {
    if (marshaller instanceof MethodDescriptor.PrototypeMarshaller) {
      Object prototype =
          ((MethodDescriptor.PrototypeMarshaller<T>) marshaller).getMessagePrototype();
      if (prototype instanceof Message) {
        return (MessageCodec<T>) new ProtobufMessages((Message) prototype, types);
      }
    }
    return new Marshalled<>(marshaller);
  }

  /** The protobuf descriptor of a generated method's message, or {@code null}. */
  public static Descriptor descriptorOf(MethodDescriptor.Marshaller<?> marshaller) {
    if (marshaller instanceof MethodDescriptor.PrototypeMarshaller) {
      Object prototype =
          ((MethodDescriptor.PrototypeMarshaller<?>) marshaller).getMessagePrototype();
      if (prototype instanceof Message) {
        return ((Message) prototype).getDescriptorForType();
      }
    }
    return null;
  }

  /** The encodings this codec reads and writes; the binary one first. */
  public abstract List<String> encodings();

  /** The message in {@code body} (not released). */
  public abstract T decode(Body body, String encoding) throws IOException;

  /** {@code value} as a body in {@code encoding}, owned by the caller. */
  public abstract Body encode(T value, String encoding) throws IOException;

  /** The binary parser, for the aliasing path; {@code null} when there is none. */
  public abstract Parser<T> parser();

  /** The message type's full name, for signatures and messages. */
  public abstract String typeName();

  /** The type registry JSON uses, for error details. */
  public abstract TypeRegistry types();

  private static final class ProtobufMessages<T extends Message> extends MessageCodec<T> {
    private final ProtobufCodec<T> codec;
    private final Parser<T> parser;

    @SuppressWarnings("unchecked")
    ProtobufMessages(T prototype, TypeRegistry types) {
      this.codec = ProtobufCodec.of(prototype, types);
      this.parser = (Parser<T>) prototype.getParserForType();
    }

    @Override
    public List<String> encodings() {
      return BOTH;
    }

    @Override
    public T decode(Body body, String encoding) throws IOException {
      return codec.decode(body, encoding);
    }

    @Override
    public Body encode(T value, String encoding) throws IOException {
      return codec.encode(value, encoding);
    }

    @Override
    public Parser<T> parser() {
      return parser;
    }

    @Override
    public String typeName() {
      return codec.prototype().getDescriptorForType().getFullName();
    }

    @Override
    public TypeRegistry types() {
      return codec.typeRegistry();
    }
  }

  private static final class Marshalled<T> extends MessageCodec<T> {
    private final MethodDescriptor.Marshaller<T> marshaller;

    Marshalled(MethodDescriptor.Marshaller<T> marshaller) {
      this.marshaller = marshaller;
    }

    @Override
    public List<String> encodings() {
      return PROTO_ONLY;
    }

    @Override
    public T decode(Body body, String encoding) throws IOException {
      InputStream in =
          body.hasByteAccess() ? ByteAccess.stream(body.byteBuffers()) : body.openStream();
      try {
        return marshaller.parse(in);
      } catch (RuntimeException e) {
        throw new IOException(io.yarpc.errors.YarpcException.describe(e), e);
      }
    }

    @Override
    public Body encode(T value, String encoding) throws IOException {
      try (InputStream in = marshaller.stream(value)) {
        return Body.of(in.readAllBytes());
      }
    }

    @Override
    public Parser<T> parser() {
      return null;
    }

    @Override
    public String typeName() {
      return marshaller.getClass().getSimpleName();
    }

    @Override
    public TypeRegistry types() {
      return TypeRegistries.ERROR_DETAILS;
    }
  }
}
