package io.yarpc.encoding.protobuf.internal;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.TypeRegistry;
import com.google.rpc.ErrorDetailsProto;
import io.grpc.ServiceDescriptor;
import io.grpc.protobuf.ProtoFileDescriptorSupplier;
import java.util.ArrayList;
import java.util.List;

/**
 * {@link TypeRegistry registries} for {@code google.protobuf.Any}: JSON needs one to print or parse an
 * {@code Any}, and error details are described by their types. Every registry here knows the standard
 * {@code google.rpc} error details ({@code BadRequest}, {@code ErrorInfo}...) besides the given types.
 */
public final class TypeRegistries {
  /** The {@code google.rpc} error details alone. */
  public static final TypeRegistry ERROR_DETAILS = forMessages(List.of());

  private TypeRegistries() {}

  /** The types of the files of {@code messages} and their imports, plus the error details. */
  public static TypeRegistry forMessages(Iterable<Descriptor> messages) {
    TypeRegistry.Builder b = TypeRegistry.newBuilder();
    for (Descriptor d : ErrorDetailsProto.getDescriptor().getMessageTypes()) {
      b.add(d);
    }
    b.add(com.google.rpc.Status.getDescriptor());
    for (Descriptor d : messages) {
      b.add(d);
    }
    return b.build();
  }

  /**
   * The types of a grpc service's proto file (when its schema descriptor says which) and of its methods'
   * messages, plus the error details.
   */
  public static TypeRegistry forService(ServiceDescriptor service, List<Descriptor> messages) {
    List<Descriptor> all = new ArrayList<>(messages);
    Object schema = service.getSchemaDescriptor();
    if (schema instanceof ProtoFileDescriptorSupplier) {
      FileDescriptor file = ((ProtoFileDescriptorSupplier) schema).getFileDescriptor();
      all.addAll(file.getMessageTypes());
    }
    return forMessages(all);
  }
}
