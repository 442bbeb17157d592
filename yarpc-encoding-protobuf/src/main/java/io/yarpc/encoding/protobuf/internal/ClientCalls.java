package io.yarpc.encoding.protobuf.internal;

import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.TypeRegistry;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.MethodDescriptor;
import io.yarpc.ClientConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;

/**
 * The engine of {@link io.yarpc.encoding.protobuf.YarpcChannel}: makes the unary or streaming {@link
 * ClientCall} for a method, with the method's codecs built once and cached.
 */
public final class ClientCalls {
  private final ClientCallBase.Settings settings;
  private final TypeRegistry typeRegistry;
  private final Map<MethodDescriptor<?, ?>, Codecs<?, ?>> codecs = new ConcurrentHashMap<>();

  private record Codecs<Q, R>(MessageCodec<Q> request, MessageCodec<R> response) {}

  /** Calls through {@code config} in {@code encoding}; {@code typeRegistry} may be null (per method). */
  public ClientCalls(
      ClientConfig config,
      String encoding,
      Executor executor,
      Duration defaultTimeout,
      TypeRegistry typeRegistry) {
    this.settings = new ClientCallBase.Settings(config, encoding, executor, defaultTimeout);
    this.typeRegistry = typeRegistry;
  }

  /** The encoding calls are made in. */
  public String encoding() {
    return settings.encoding();
  }

  /** A new call of {@code method}. */
  @SuppressWarnings("unchecked")
  public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
    Codecs<Q, R> c = (Codecs<Q, R>) codecs.computeIfAbsent(method, m -> codecsFor(method));
    if (method.getType() == MethodDescriptor.MethodType.UNARY) {
      return new UnaryClientCall<>(settings, method, options, c.request(), c.response());
    }
    return new StreamClientCall<>(settings, method, options, c.request(), c.response());
  }

  private <Q, R> Codecs<Q, R> codecsFor(MethodDescriptor<Q, R> method) {
    TypeRegistry types = typeRegistry;
    if (types == null) {
      List<Descriptor> messages = new ArrayList<>(2);
      Descriptor req = MessageCodec.descriptorOf(method.getRequestMarshaller());
      Descriptor res = MessageCodec.descriptorOf(method.getResponseMarshaller());
      if (req != null) {
        messages.add(req);
      }
      if (res != null) {
        messages.add(res);
      }
      types = TypeRegistries.forMessages(messages);
    }
    return new Codecs<>(
        MessageCodec.of(method.getRequestMarshaller(), types),
        MessageCodec.of(method.getResponseMarshaller(), types));
  }
}
