package io.yarpc.encoding.protobuf;

import static java.util.Objects.requireNonNull;

import io.grpc.MethodDescriptor;

/**
 * The protobuf encodings' names and procedure naming: a protobuf method is served and called as
 * {@code <proto package>.<Service>::<Method>} (e.g. {@code yarpc.test.protobuf.Echo::Unary}), the
 * canonical gRPC path {@code /pkg.Service/Method} with {@code ::} for the last slash, in binary ({@value
 * #ENCODING}) or proto3-JSON ({@value #JSON_ENCODING}) encoding.
 */
public final class Protobuf {
  /** The binary protobuf encoding's name on the wire. */
  public static final String ENCODING = "proto";

  /** The proto3-JSON encoding's name on the wire. */
  public static final String JSON_ENCODING = "json";

  private Protobuf() {}

  /** The YARPC procedure name of a grpc method: {@code pkg.Service::Method}. */
  public static String procedureName(MethodDescriptor<?, ?> method) {
    return procedureName(requireNonNull(method, "method").getFullMethodName());
  }

  /** The YARPC procedure name of a full grpc method name {@code pkg.Service/Method}. */
  public static String procedureName(String fullMethodName) {
    requireNonNull(fullMethodName, "fullMethodName");
    int slash = fullMethodName.lastIndexOf('/');
    if (slash <= 0 || slash == fullMethodName.length() - 1) {
      throw new IllegalArgumentException(
          "not a full grpc method name (pkg.Service/Method): " + fullMethodName);
    }
    return fullMethodName.substring(0, slash) + "::" + fullMethodName.substring(slash + 1);
  }
}
