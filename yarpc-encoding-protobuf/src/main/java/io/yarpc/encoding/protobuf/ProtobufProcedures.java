package io.yarpc.encoding.protobuf;

import static java.util.Objects.requireNonNull;

import io.grpc.BindableService;
import io.grpc.Context;
import io.grpc.Metadata;
import io.grpc.ServerServiceDefinition;
import io.yarpc.Call;
import io.yarpc.encoding.protobuf.internal.AliasingPools;
import io.yarpc.encoding.protobuf.internal.ServiceAdapter;
import io.yarpc.encoding.protobuf.internal.SharedExecutors;
import io.yarpc.encoding.protobuf.unsafe.UnsafeAliasing;
import io.yarpc.transport.Procedure;
import java.util.List;
import java.util.concurrent.Executor;

/**
 * Serves a grpc-java service — a generated {@code XxxGrpc.XxxImplBase}, any {@link BindableService}, or a
 * {@link ServerServiceDefinition} (e.g. one wrapped in {@code ServerInterceptors}) — as YARPC procedures,
 * over every transport a dispatcher has:
 *
 * <pre>{@code
 * dispatcher.register(ProtobufProcedures.of(new EchoImpl()));   // EchoImpl extends EchoGrpc.EchoImplBase
 * }</pre>
 *
 * <p><b>Procedures.</b> Each method becomes a procedure named {@code pkg.Service::Method} (the gRPC path,
 * see {@link Protobuf#procedureName}), registered twice: for the {@value Protobuf#ENCODING} and for the
 * {@value Protobuf#JSON_ENCODING} encoding; the request's encoding picks the codec and the response uses
 * the same one. Unary methods are unary procedures (any transport); client, server and bidirectional
 * streaming methods are streaming procedures (transports that stream, e.g. gRPC). A request in another
 * encoding fails with {@code invalid-argument} {@code failed to decode [proto json] request body ...
 * expected one of encodings [proto json] but got "thrift"} (yarpc-go's message). Each procedure's {@link
 * Procedure#schema() schema} is the service's schema descriptor (for generated services an {@code
 * io.grpc.protobuf.ProtoFileDescriptorSupplier}), so the gRPC inbound's reflection service can list and
 * describe the service.
 *
 * <p><b>Inside the handler</b> the service's code runs unchanged on grpc-java's {@code ServerCalls}
 * machinery: {@code StreamObserver}s, {@code ServerCallStreamObserver} flow control ({@code isReady},
 * {@code onReady}) and cancellation handlers, {@code ServerInterceptor}s (which see the request's
 * application headers as {@link Metadata}). The inbound call is visible as {@link Call#current()} (headers,
 * deadline, response headers to set), and the grpc {@link Context} carries the call's deadline (and is
 * cancelled with the call), {@link #CALL} and {@link #HEADERS}. Unary methods run on the dispatcher's
 * handler thread; stream callbacks run on a callback executor, never on a transport's I/O thread.
 *
 * <p><b>Bodies.</b> Requests are decoded byte access first and never alias the request body (see {@link
 * ProtobufCodec}); responses are lazily serialised bodies the transport owns. {@link
 * Builder#unsafeAliasing} opts in to aliased decoding.
 *
 * <p><b>Errors</b> (docs/spec/model.md §2.3 and §6.4): a failed method — {@code onError}, a thrown exception, or a failed
 * {@code ServerCall.close} — fails the call with its code and message; the unary response is flagged as an
 * application error. A {@code google.rpc.Status} it carries ({@code StatusProto.toStatusRuntimeException},
 * or a {@link io.yarpc.errors.YarpcException} whose details are a serialised status, see {@link
 * ProtobufErrors}) becomes the error's details, serialised in the request's encoding, and the
 * application-error name is the first detail's message name. An exception that is neither a grpc status
 * nor a YARPC error becomes {@code unknown} with yarpc-go's {@code error for service "S" and procedure "P":
 * <message>}. Undecodable requests fail with {@code invalid-argument} {@code failed to decode "proto"
 * request body for procedure ...}.
 */
public final class ProtobufProcedures {
  /** The YARPC call being handled, in the grpc {@link Context} of a served method. */
  public static final Context.Key<Call> CALL = Context.key("yarpc-call");

  /** The request's application headers as grpc metadata, in the grpc {@link Context} of a served method. */
  public static final Context.Key<Metadata> HEADERS = Context.key("yarpc-request-headers");

  private ProtobufProcedures() {}

  /** The procedures serving {@code service}, for the dispatcher's own service name. */
  public static List<Procedure> of(BindableService service) {
    return builder(service).build();
  }

  /** The procedures serving {@code definition}, for the dispatcher's own service name. */
  public static List<Procedure> of(ServerServiceDefinition definition) {
    return builder(definition).build();
  }

  /** A builder for the procedures serving {@code service}. */
  public static Builder builder(BindableService service) {
    return new Builder(requireNonNull(service, "service").bindService());
  }

  /** A builder for the procedures serving {@code definition}. */
  public static Builder builder(ServerServiceDefinition definition) {
    return new Builder(requireNonNull(definition, "definition"));
  }

  /** Builds the procedures of one grpc service; not thread-safe. */
  public static final class Builder {
    private final ServerServiceDefinition definition;
    private String service = "";
    private Executor callbackExecutor;
    private boolean nonBlocking;
    private UnsafeAliasing aliasing;

    private Builder(ServerServiceDefinition definition) {
      this.definition = definition;
    }

    /** The YARPC service the procedures belong to; default: the dispatcher's name. */
    public Builder service(String service) {
      this.service = requireNonNull(service, "service");
      return this;
    }

    /**
     * Where stream methods' callbacks ({@code onNext}, {@code onCompleted}...) run; default: a shared
     * pool of daemon threads. Callbacks of one call never run concurrently. Unary methods always run on
     * the dispatcher's handler thread.
     */
    public Builder callbackExecutor(Executor executor) {
      this.callbackExecutor = requireNonNull(executor, "executor");
      return this;
    }

    /**
     * Marks the procedures non-blocking: the dispatcher then runs unary methods on the transport's
     * thread. Only for services that never block.
     */
    public Builder nonBlocking(boolean nonBlocking) {
      this.nonBlocking = nonBlocking;
      return this;
    }

    /**
     * Opts in to aliased decoding of unary requests in the binary encoding; read {@link UnsafeAliasing}
     * for the hazard first. Default: off.
     */
    public Builder unsafeAliasing(UnsafeAliasing aliasing) {
      this.aliasing = requireNonNull(aliasing, "aliasing");
      return this;
    }

    /** The procedures: one per method and encoding, sorted by method. */
    public List<Procedure> build() {
      Executor callbacks =
          callbackExecutor != null ? callbackExecutor : SharedExecutors.callbacks();
      return ServiceAdapter.procedures(
          definition, service, AliasingPools.poolOf(aliasing), callbacks, nonBlocking);
    }
  }
}
