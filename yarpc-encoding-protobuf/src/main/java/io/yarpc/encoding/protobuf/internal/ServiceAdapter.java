package io.yarpc.encoding.protobuf.internal;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.TypeRegistry;
import io.grpc.MethodDescriptor;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.yarpc.encoding.protobuf.Protobuf;
import io.yarpc.transport.HandlerSpec;
import io.yarpc.transport.Procedure;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;

/**
 * Turns a grpc {@link ServerServiceDefinition} into YARPC procedures: one per method and encoding, named
 * {@code pkg.Service::Method}; unary methods as unary handlers, the three stream shapes as stream
 * handlers. Every procedure's {@link Procedure#schema() schema} is the service descriptor's schema
 * descriptor (for generated services an {@code io.grpc.protobuf.ProtoFileDescriptorSupplier}; {@code null}
 * for a hand-built descriptor without one).
 */
public final class ServiceAdapter {
  private ServiceAdapter() {}

  /**
   * The procedures of {@code definition}.
   *
   * @param service the YARPC service they belong to (empty: the dispatcher's)
   * @param aliasing the pool for the unsafe aliasing decode of unary requests, or {@code null}
   * @param callbacks where stream listener callbacks run
   * @param nonBlocking whether the procedures are marked non-blocking
   */
  public static List<Procedure> procedures(
      ServerServiceDefinition definition,
      String service,
      ArrayPool aliasing,
      Executor callbacks,
      boolean nonBlocking) {
    List<Descriptor> messages = new ArrayList<>();
    for (ServerMethodDefinition<?, ?> m : definition.getMethods()) {
      addDescriptor(
          messages, MessageCodec.descriptorOf(m.getMethodDescriptor().getRequestMarshaller()));
      addDescriptor(
          messages, MessageCodec.descriptorOf(m.getMethodDescriptor().getResponseMarshaller()));
    }
    TypeRegistry types = TypeRegistries.forService(definition.getServiceDescriptor(), messages);
    List<Procedure> procedures = new ArrayList<>();
    List<ServerMethodDefinition<?, ?>> methods = new ArrayList<>(definition.getMethods());
    methods.sort(
        (a, b) ->
            a.getMethodDescriptor()
                .getFullMethodName()
                .compareTo(b.getMethodDescriptor().getFullMethodName()));
    Object schema = definition.getServiceDescriptor().getSchemaDescriptor();
    for (ServerMethodDefinition<?, ?> m : methods) {
      add(procedures, m, types, schema, service, aliasing, callbacks, nonBlocking);
    }
    return List.copyOf(procedures);
  }

  private static void addDescriptor(List<Descriptor> into, Descriptor d) {
    if (d != null && !into.contains(d)) {
      into.add(d);
    }
  }

  private static <Q, R> void add(
      List<Procedure> into,
      ServerMethodDefinition<Q, R> definition,
      TypeRegistry types,
      Object schema,
      String service,
      ArrayPool aliasing,
      Executor callbacks,
      boolean nonBlocking) {
    MethodDescriptor<Q, R> md = definition.getMethodDescriptor();
    MessageCodec<Q> requestCodec = MessageCodec.of(md.getRequestMarshaller(), types);
    MessageCodec<R> responseCodec = MessageCodec.of(md.getResponseMarshaller(), types);
    List<String> encodings = new ArrayList<>(requestCodec.encodings());
    encodings.retainAll(responseCodec.encodings());
    MethodBinding<Q, R> binding =
        new MethodBinding<>(
            definition, requestCodec, responseCodec, encodings, types, aliasing, callbacks);
    HandlerSpec spec =
        md.getType() == MethodDescriptor.MethodType.UNARY
            ? HandlerSpec.unary(binding::handleUnary)
            : HandlerSpec.streaming(binding::handleStream);
    String name = Protobuf.procedureName(md);
    String signature = signature(md, requestCodec, responseCodec);
    for (String encoding : encodings) {
      into.add(
          Procedure.builder(name)
              .service(service)
              .encoding(encoding)
              .handler(spec)
              .signature(signature)
              .nonBlocking(nonBlocking)
              .schema(schema)
              .build());
    }
  }

  /** E.g. {@code Bidi(stream pkg.EchoRequest) returns (stream pkg.EchoResponse)}. */
  private static String signature(
      MethodDescriptor<?, ?> md, MessageCodec<?> req, MessageCodec<?> res) {
    MethodDescriptor.MethodType t = md.getType();
    return md.getBareMethodName()
        + "("
        + (t.clientSendsOneMessage() ? "" : "stream ")
        + req.typeName()
        + ") returns ("
        + (t.serverSendsOneMessage() ? "" : "stream ")
        + res.typeName()
        + ")";
  }
}
