package io.yarpc.encoding.protobuf.internal;

import com.google.protobuf.Parser;
import com.google.protobuf.TypeRegistry;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.yarpc.Call;
import io.yarpc.encoding.EncodingErrors;
import io.yarpc.encoding.protobuf.Protobuf;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.ServerStream;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * One grpc method served as YARPC procedures: its handler, its messages' codecs, and the two YARPC entry
 * points — {@link #handleUnary} for unary methods, {@link #handleStream} for the three stream shapes.
 */
final class MethodBinding<Q, R> {
  private static final Executor DIRECT = Runnable::run;

  private final ServerMethodDefinition<Q, R> definition;
  private final MessageCodec<Q> requestCodec;
  private final MessageCodec<R> responseCodec;
  private final String[] encodings;
  private final TypeRegistry types;
  private final ArrayPool aliasing;
  private final Executor callbacks;

  MethodBinding(
      ServerMethodDefinition<Q, R> definition,
      MessageCodec<Q> requestCodec,
      MessageCodec<R> responseCodec,
      List<String> encodings,
      TypeRegistry types,
      ArrayPool aliasing,
      Executor callbacks) {
    this.definition = definition;
    this.requestCodec = requestCodec;
    this.responseCodec = responseCodec;
    this.encodings = encodings.toArray(new String[0]);
    this.types = types;
    this.aliasing = aliasing;
    this.callbacks = callbacks;
  }

  MethodDescriptor<Q, R> descriptor() {
    return definition.getMethodDescriptor();
  }

  ServerCallHandler<Q, R> handler() {
    return definition.getServerCallHandler();
  }

  TypeRegistry types() {
    return types;
  }

  /** The executor for listener callbacks that must not run on a transport or timer thread. */
  Executor callbacks() {
    return callbacks;
  }

  /** The response message as a body in {@code encoding}. */
  Body encodeResponse(R response, String encoding) throws IOException {
    return responseCodec.encode(response, encoding);
  }

  /**
   * A unary call: decode (byte access first; with aliasing when opted in), then run the grpc handler on
   * this thread — the dispatcher's handler thread, with the call current. The request body stays the
   * invocation's.
   */
  CompletableFuture<Response> handleUnary(Request request) {
    RequestMeta meta = request.meta();
    Q message;
    Lease lease = null;
    try {
      EncodingErrors.expectEncoding(meta, encodings);
      Parser<Q> parser = requestCodec.parser();
      if (aliasing != null && parser != null && Protobuf.ENCODING.equals(meta.encoding())) {
        ProtoDecoding.Aliased<Q> aliased =
            ProtoDecoding.parseAliased(parser, request.body(), aliasing);
        message = aliased.message();
        lease = new Lease(aliasing, aliased.array());
      } else {
        message = requestCodec.decode(request.body(), meta.encoding());
      }
    } catch (YarpcException e) {
      return CompletableFuture.failedFuture(e);
    } catch (IOException | RuntimeException e) {
      return CompletableFuture.failedFuture(
          EncodingErrors.requestBodyDecodeError(meta, meta.encoding(), e));
    }
    UnaryServerCall<Q, R> call =
        new UnaryServerCall<>(this, meta, currentCall(meta), DIRECT, message, lease);
    call.begin();
    return call.result();
  }

  /**
   * A stream: the grpc handler reads and writes through the server stream, its callbacks on the callback
   * executor (never on a transport thread); the returned future completes when it closes the call.
   */
  CompletableFuture<Void> handleStream(ServerStream stream) {
    RequestMeta meta = stream.meta();
    try {
      EncodingErrors.expectEncoding(meta, encodings);
    } catch (YarpcException e) {
      return CompletableFuture.failedFuture(e);
    }
    StreamServerCall<Q, R> call =
        new StreamServerCall<>(this, meta, currentCall(meta), callbacks, stream);
    call.begin();
    return call.done();
  }

  /** Decodes one received stream message. */
  Q decodeRequest(Body body, String encoding) throws IOException {
    return requestCodec.decode(body, encoding);
  }

  private static Call currentCall(RequestMeta meta) {
    Call call = Call.current(); // the dispatcher's; a handler called directly gets its own
    return call != null ? call : new Call(meta);
  }
}
