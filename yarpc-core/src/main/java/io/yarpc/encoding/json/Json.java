package io.yarpc.encoding.json;

import static java.util.Objects.requireNonNull;

import com.google.gson.Gson;
import io.yarpc.encoding.EncodingErrors;
import io.yarpc.encoding.internal.TypedCalls;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Handler;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.util.concurrent.CompletableFuture;

/**
 * Server side of the JSON encoding: procedures that take and return plain Java objects, (de)serialised
 * with Gson.
 *
 * <pre>{@code
 * dispatcher.register(Json.procedure("get", GetRequest.class, req -> store.get(req.key)));
 * }</pre>
 *
 * <p>Procedures are registered <b>with</b> encoding {@code json}; when it is the procedure's only
 * encoding, the router still hands it requests in another encoding, and the handler answers with yarpc-go's
 * {@code failed to decode "json" request body ... expected encoding "json" but got "thrift"} ({@link
 * EncodingErrors#expectEncoding}).
 *
 * <p>Decoding: from the body's byte access when it has it (a reader over the views, no copy into an
 * array), else from its stream. Unknown fields are ignored; an empty body fails with {@code EOF} and
 * malformed JSON with Gson's message, both as {@link EncodingErrors#requestBodyDecodeError}. The request
 * body is never released here: the invocation owns it.
 *
 * <p>Encoding: the response object as UTF-8 JSON plus a trailing newline (as Go's encoder), a body of
 * known length that the transport owns. A handler's exception is returned together with an empty response
 * flagged as an application error carrying the response headers set so far ({@link
 * EncodingErrors#handlerError}).
 */
public final class Json {
  /** The encoding's name on the wire. */
  public static final String ENCODING = "json";

  private Json() {}

  /** A unary JSON procedure called {@code name}, decoding requests as {@code requestType}, default Gson. */
  public static <Q, R> Procedure procedure(
      String name, Class<Q> requestType, JsonHandler<Q, R> handler) {
    return procedure(name, requestType, JsonCodec.DEFAULT_GSON, handler);
  }

  /** A unary JSON procedure called {@code name} that (de)serialises with {@code gson}. */
  public static <Q, R> Procedure procedure(
      String name, Class<Q> requestType, Gson gson, JsonHandler<Q, R> handler) {
    return Procedure.builder(name)
        .encoding(ENCODING)
        .unary(unaryHandler(requestType, gson, handler))
        .build();
  }

  /** A oneway JSON procedure called {@code name}, decoding requests as {@code requestType}, default Gson. */
  public static <Q> Procedure onewayProcedure(
      String name, Class<Q> requestType, JsonOnewayHandler<Q> handler) {
    return onewayProcedure(name, requestType, JsonCodec.DEFAULT_GSON, handler);
  }

  /** A oneway JSON procedure called {@code name} that deserialises with {@code gson}. */
  public static <Q> Procedure onewayProcedure(
      String name, Class<Q> requestType, Gson gson, JsonOnewayHandler<Q> handler) {
    return Procedure.builder(name)
        .encoding(ENCODING)
        .oneway(onewayHandler(requestType, gson, handler))
        .build();
  }

  /**
   * {@code handler} as a transport-level unary handler: it decodes, runs the user code synchronously on the
   * calling thread and returns a completed future. For procedures built by hand (another service name, a
   * signature...); register it with encoding {@value #ENCODING}.
   */
  public static <Q, R> Handler<Request, Response> unaryHandler(
      Class<Q> requestType, Gson gson, JsonHandler<Q, R> handler) {
    requireNonNull(requestType, "requestType");
    requireNonNull(handler, "handler");
    JsonCodec codec = new JsonCodec(requireNonNull(gson, "gson"));
    return request -> {
      RequestMeta meta = request.meta();
      Q in;
      try {
        in = decode(codec, request, requestType);
      } catch (YarpcException e) {
        return CompletableFuture.failedFuture(e);
      }
      R out;
      try {
        out = handler.handle(in);
      } catch (Exception e) {
        return CompletableFuture.failedFuture(
            EncodingErrors.handlerError(meta, TypedCalls.responseHeaders(), e));
      }
      Body body;
      try {
        body = codec.encode(out);
      } catch (RuntimeException e) {
        return CompletableFuture.failedFuture(
            EncodingErrors.responseBodyEncodeError(meta, ENCODING, e));
      }
      return CompletableFuture.completedFuture(
          Response.builder().headers(TypedCalls.responseHeaders()).body(body).build());
    };
  }

  /** {@code handler} as a transport-level oneway handler; see {@link #unaryHandler}. */
  public static <Q> Handler<Request, Void> onewayHandler(
      Class<Q> requestType, Gson gson, JsonOnewayHandler<Q> handler) {
    requireNonNull(requestType, "requestType");
    requireNonNull(handler, "handler");
    JsonCodec codec = new JsonCodec(requireNonNull(gson, "gson"));
    return request -> {
      try {
        handler.handle(decode(codec, request, requestType));
        return CompletableFuture.completedFuture(null);
      } catch (Exception e) {
        return CompletableFuture.failedFuture(EncodingErrors.wrapHandlerError(request.meta(), e));
      }
    };
  }

  private static <Q> Q decode(JsonCodec codec, Request request, Class<Q> type) {
    RequestMeta meta = request.meta();
    EncodingErrors.expectEncoding(meta, ENCODING);
    try {
      return codec.decode(request.body(), type);
    } catch (JsonCodec.DecodeException | RuntimeException e) {
      throw EncodingErrors.requestBodyDecodeError(meta, ENCODING, e);
    }
  }
}
