package io.yarpc.transport.grpc.internal;

import com.google.protobuf.Descriptors;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.protobuf.ProtoFileDescriptorSupplier;
import io.yarpc.transport.Body;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Router;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * What the router's procedures look like to gRPC tools: the service names health checks answer for, and
 * {@link ServerServiceDefinition}s of the protobuf services, for reflection.
 *
 * <p><b>Names</b> ({@link #names}): every procedure's YARPC service (e.g. {@code keyvalue}) and the gRPC
 * service part of every {@code pkg.Svc::Method} procedure ({@code pkg.Svc}, the name a plain gRPC client
 * uses in its path). Procedures without {@code ::} travel as {@code /__default__/name}; {@code __default__}
 * is not a name.
 *
 * <p><b>Definitions</b> ({@link #definitions}): one per gRPC service whose procedures carry a {@link
 * ProtoFileDescriptorSupplier} as their {@linkplain Procedure#schema() schema} and whose file declares that
 * service; it lists the registered methods the file declares (method descriptors with the transport's
 * marshaller, served by the inbound's handler), and its schema descriptor is the procedures' supplier, which
 * is what grpc-java's reflection service reads. A service registered under several YARPC services, or in
 * both encodings, is one definition (reflection refuses a name defined twice); the first schema in router
 * order wins.
 *
 * <p>Both are derived from {@link Router#procedures()} on demand and kept until the router's list changes
 * (a registration after start shows up on the next call). Thread-safe.
 */
final class RegisteredServices {
  private static final String SEPARATOR = "::";

  /** One router state and what was derived from it. */
  private record Snapshot(
      List<Procedure> procedures, Set<String> names, List<ServerServiceDefinition> definitions) {}

  private static final Snapshot EMPTY = new Snapshot(List.of(), Set.of(), List.of());

  private final MethodDescriptor.Marshaller<Body> marshaller;
  private final ServerCallHandler<Body, Body> handler;
  private volatile Snapshot snapshot = EMPTY;

  /** Definitions whose methods marshal with {@code marshaller} and are served by {@code handler}. */
  public RegisteredServices(
      MethodDescriptor.Marshaller<Body> marshaller, ServerCallHandler<Body, Body> handler) {
    this.marshaller = marshaller;
    this.handler = handler;
  }

  /** The service names registered on {@code router} (none when it is {@code null}), sorted. */
  public Set<String> names(Router router) {
    return snapshot(router).names();
  }

  /** The protobuf services registered on {@code router} (none when it is {@code null}), by name. */
  public List<ServerServiceDefinition> definitions(Router router) {
    return snapshot(router).definitions();
  }

  private Snapshot snapshot(Router router) {
    if (router == null) {
      return EMPTY;
    }
    List<Procedure> procedures = router.procedures();
    Snapshot s = snapshot;
    if (s.procedures()
        .equals(procedures)) { // procedures compare by identity: the same registrations
      return s;
    }
    s = derive(procedures);
    snapshot = s; // racing callers derive the same thing; the last one stays
    return s;
  }

  private Snapshot derive(List<Procedure> procedures) {
    Set<String> names = new TreeSet<>();
    Map<String, ProtoFileDescriptorSupplier> schemas = new LinkedHashMap<>();
    Map<String, Set<String>> methods = new LinkedHashMap<>();
    for (Procedure p : procedures) {
      if (!p.service().isEmpty()) {
        names.add(p.service());
      }
      int sep = p.name().indexOf(SEPARATOR);
      if (sep <= 0 || sep + SEPARATOR.length() == p.name().length()) {
        continue;
      }
      String grpcService = p.name().substring(0, sep);
      names.add(grpcService);
      if (p.schema() instanceof ProtoFileDescriptorSupplier) {
        schemas.putIfAbsent(grpcService, (ProtoFileDescriptorSupplier) p.schema());
        methods
            .computeIfAbsent(grpcService, k -> new LinkedHashSet<>())
            .add(p.name().substring(sep + SEPARATOR.length()));
      }
    }
    List<ServerServiceDefinition> definitions = new ArrayList<>();
    schemas.forEach(
        (name, schema) -> {
          ServerServiceDefinition d = definition(name, schema, methods.get(name));
          if (d != null) {
            definitions.add(d);
          }
        });
    return new Snapshot(
        List.copyOf(procedures), Collections.unmodifiableSet(names), List.copyOf(definitions));
  }

  /** The definition of service {@code name} as declared in {@code schema}'s file, or null if not there. */
  private ServerServiceDefinition definition(
      String name, ProtoFileDescriptorSupplier schema, Set<String> methodNames) {
    Descriptors.ServiceDescriptor declared = null;
    for (Descriptors.ServiceDescriptor s : schema.getFileDescriptor().getServices()) {
      if (s.getFullName().equals(name)) {
        declared = s;
      }
    }
    if (declared == null) {
      return null;
    }
    List<MethodDescriptor<Body, Body>> descriptors = new ArrayList<>();
    for (String method : methodNames) {
      Descriptors.MethodDescriptor m = declared.findMethodByName(method);
      if (m != null) {
        descriptors.add(
            MethodDescriptor.<Body, Body>newBuilder()
                .setType(typeOf(m))
                .setFullMethodName(MethodDescriptor.generateFullMethodName(name, method))
                .setRequestMarshaller(marshaller)
                .setResponseMarshaller(marshaller)
                .build());
      }
    }
    if (descriptors.isEmpty()) {
      return null;
    }
    ServiceDescriptor.Builder service =
        ServiceDescriptor.newBuilder(name).setSchemaDescriptor(schema);
    descriptors.forEach(service::addMethod);
    ServerServiceDefinition.Builder definition = ServerServiceDefinition.builder(service.build());
    for (MethodDescriptor<Body, Body> md : descriptors) {
      definition.addMethod(ServerMethodDefinition.create(md, handler));
    }
    return definition.build();
  }

  private static MethodDescriptor.MethodType typeOf(Descriptors.MethodDescriptor m) {
    if (m.isClientStreaming()) {
      return m.isServerStreaming()
          ? MethodDescriptor.MethodType.BIDI_STREAMING
          : MethodDescriptor.MethodType.CLIENT_STREAMING;
    }
    return m.isServerStreaming()
        ? MethodDescriptor.MethodType.SERVER_STREAMING
        : MethodDescriptor.MethodType.UNARY;
  }
}
