package io.yarpc.encoding.protobuf;

import static java.util.Objects.requireNonNull;

import com.google.protobuf.TypeRegistry;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.MethodDescriptor;
import io.yarpc.ClientConfig;
import io.yarpc.encoding.protobuf.internal.ClientCalls;
import io.yarpc.encoding.protobuf.internal.SharedExecutors;
import io.yarpc.internal.Checks;
import java.time.Duration;
import java.util.concurrent.Executor;

/**
 * An {@link io.grpc.Channel} over a YARPC {@link ClientConfig}, so grpc-java's generated stubs call any
 * YARPC outbound (HTTP, gRPC, TChannel, in-memory...), through the dispatcher's outbound middleware:
 *
 * <pre>{@code
 * Channel channel = YarpcChannel.of(dispatcher.clientConfig("echo"));
 * EchoGrpc.EchoBlockingStub echo = EchoGrpc.newBlockingStub(channel).withDeadlineAfter(1, SECONDS);
 * EchoResponse r = echo.unary(EchoRequest.newBuilder().setMessage("hi").build());
 * }</pre>
 *
 * <ul>
 *   <li><b>Procedures</b>: a method {@code pkg.Service/Method} is the procedure {@code
 *       pkg.Service::Method} of the config's service, in the channel's encoding ({@value
 *       Protobuf#ENCODING} by default, or {@value Protobuf#JSON_ENCODING}). Unary methods are unary calls;
 *       streaming methods open a YARPC stream (the outbound must support streams, e.g. gRPC).
 *   <li><b>Deadlines</b>: the earlier of the stub's deadline ({@code withDeadlineAfter}) and the grpc
 *       {@link io.grpc.Context}'s becomes the call's deadline; without either, the builder's {@link
 *       Builder#defaultTimeout} applies, else none — then a unary call made outside a YARPC handler fails
 *       with {@code INVALID_ARGUMENT} {@code missing TTL}, as YARPC requires a deadline; inside a handler
 *       the handler's remaining deadline is inherited. Cancelling the stub's call or its context cancels
 *       the YARPC call.
 *   <li><b>Headers</b>: the stub's metadata becomes application headers (binary {@code -bin} keys as
 *       base64), the response's headers become the metadata given to {@code onHeaders} (and, on failure,
 *       the trailers). {@link #SHARD_KEY}, {@link #ROUTING_KEY} and {@link #ROUTING_DELEGATE} call options
 *       set the request's routing fields.
 *   <li><b>Errors</b> arrive as grpc statuses: a {@code StatusRuntimeException} with the YARPC code (same
 *       numbers) and message; when the error carries a {@code google.rpc.Status}, its code, message and
 *       details are those of the server's, readable with {@code StatusProto.fromThrowable}.
 *   <li><b>Bodies</b>: requests are lazily serialised bodies the outbound owns; responses are decoded
 *       byte access first (see {@link ProtobufCodec}) and released at once.
 *   <li><b>Callbacks</b> run on the stub's executor ({@code withExecutor}; blocking stubs use their own
 *       thread), else on the channel's {@link Builder#executor executor} — by default a shared pool of
 *       daemon threads, never a transport's I/O thread — one at a time per call.
 * </ul>
 *
 * <p>The channel holds nothing that needs closing: the client config's outbounds belong to its dispatcher.
 * Thread-safe.
 */
public final class YarpcChannel extends Channel {
  /** The request's shard key, as a grpc call option: {@code stub.withOption(SHARD_KEY, "k")}. */
  public static final CallOptions.Key<String> SHARD_KEY =
      CallOptions.Key.createWithDefault("yarpc-shard-key", "");

  /** The request's routing key, as a grpc call option. */
  public static final CallOptions.Key<String> ROUTING_KEY =
      CallOptions.Key.createWithDefault("yarpc-routing-key", "");

  /** The request's routing delegate, as a grpc call option. */
  public static final CallOptions.Key<String> ROUTING_DELEGATE =
      CallOptions.Key.createWithDefault("yarpc-routing-delegate", "");

  private final ClientCalls calls;
  private final String authority;

  private YarpcChannel(Builder b) {
    this.calls =
        new ClientCalls(
            b.config,
            b.encoding,
            b.executor != null ? b.executor : SharedExecutors.callbacks(),
            b.defaultTimeout,
            b.typeRegistry);
    this.authority = b.config.service();
  }

  /** A channel calling through {@code config} in the binary encoding. */
  public static YarpcChannel of(ClientConfig config) {
    return builder(config).build();
  }

  /** A channel calling through {@code config} in {@code encoding} ({@code proto} or {@code json}). */
  public static YarpcChannel of(ClientConfig config, String encoding) {
    return builder(config).encoding(encoding).build();
  }

  /** A builder for a channel calling through {@code config}. */
  public static Builder builder(ClientConfig config) {
    return new Builder(requireNonNull(config, "config"));
  }

  @Override
  public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions callOptions) {
    return calls.newCall(
        requireNonNull(method, "method"), requireNonNull(callOptions, "callOptions"));
  }

  /** The remote service's name. */
  @Override
  public String authority() {
    return authority;
  }

  @Override
  public String toString() {
    return "YarpcChannel{service=" + authority + ", encoding=" + calls.encoding() + "}";
  }

  /** Builds a {@link YarpcChannel}; not thread-safe. */
  public static final class Builder {
    private final ClientConfig config;
    private String encoding = Protobuf.ENCODING;
    private Executor executor;
    private Duration defaultTimeout;
    private TypeRegistry typeRegistry;

    private Builder(ClientConfig config) {
      this.config = config;
    }

    /** The encoding requests are sent in: {@code proto} (default) or {@code json}. */
    public Builder encoding(String encoding) {
      if (!ProtobufCodec.supports(requireNonNull(encoding, "encoding"))) {
        throw new IllegalArgumentException(
            "encoding must be \"proto\" or \"json\", got \"" + encoding + "\"");
      }
      this.encoding = encoding;
      return this;
    }

    /** Where listener callbacks run when the stub gives no executor; default: a shared daemon pool. */
    public Builder executor(Executor executor) {
      this.executor = requireNonNull(executor, "executor");
      return this;
    }

    /** The timeout of calls made with neither a stub deadline nor a context deadline; default: none. */
    public Builder defaultTimeout(Duration timeout) {
      this.defaultTimeout = Checks.positive(timeout, "timeout");
      return this;
    }

    /**
     * The types JSON uses for {@code google.protobuf.Any} values and error details; default: those of each
     * method's message files and imports, plus the {@code google.rpc} error details.
     */
    public Builder typeRegistry(TypeRegistry typeRegistry) {
      this.typeRegistry = requireNonNull(typeRegistry, "typeRegistry");
      return this;
    }

    /** The channel. */
    public YarpcChannel build() {
      return new YarpcChannel(this);
    }
  }
}
