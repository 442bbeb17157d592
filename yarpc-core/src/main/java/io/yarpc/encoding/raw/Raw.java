package io.yarpc.encoding.raw;

import static java.util.Objects.requireNonNull;

import io.yarpc.encoding.EncodingErrors;
import io.yarpc.encoding.internal.TypedCalls;
import io.yarpc.transport.Body;
import io.yarpc.transport.Handler;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.util.concurrent.CompletableFuture;

/**
 * Server side of the raw encoding: procedures whose bodies are opaque bytes.
 *
 * <pre>{@code
 * dispatcher.register(Raw.procedure("echo", body -> body));
 * }</pre>
 *
 * <p>As in yarpc-go, raw procedures are registered <b>without</b> an encoding (they match requests in any
 * encoding) and the handler rejects requests whose encoding is not {@code raw} with {@code
 * invalid-argument} (see {@link EncodingErrors#expectEncoding}).
 *
 * <p>Bodies: the request body is copied once into the array given to the handler ({@link
 * Body#toByteArray()}: from byte access when the body has it, else read from its stream) and is never
 * released here (the invocation owns it). The returned array becomes the response body ({@link
 * Body#of(byte[])}, not copied), which the transport owns and releases.
 *
 * <p>Errors: a handler's exception is returned ({@code unknown} unless it is a {@link
 * io.yarpc.errors.YarpcException}) together with an empty response flagged as an application error that
 * carries the response headers set so far ({@link EncodingErrors#handlerError}).
 */
public final class Raw {
  /** The encoding's name on the wire. */
  public static final String ENCODING = "raw";

  private Raw() {}

  /** A unary raw procedure called {@code name}, for any encoding (requests not in raw are rejected). */
  public static Procedure procedure(String name, RawHandler handler) {
    requireNonNull(handler, "handler");
    return Procedure.builder(name).unary(unaryHandler(handler)).build();
  }

  /** A oneway raw procedure called {@code name}, for any encoding (requests not in raw are rejected). */
  public static Procedure onewayProcedure(String name, RawOnewayHandler handler) {
    requireNonNull(handler, "handler");
    return Procedure.builder(name).oneway(onewayHandler(handler)).build();
  }

  /**
   * {@code handler} as a transport-level unary handler: it runs the user code synchronously on the
   * calling thread and returns a completed future. For procedures built by hand (another service name, a
   * signature...).
   */
  public static Handler<Request, Response> unaryHandler(RawHandler handler) {
    requireNonNull(handler, "handler");
    return request -> {
      RequestMeta meta = request.meta();
      byte[] in;
      try {
        EncodingErrors.expectEncoding(meta, ENCODING);
        in = decode(request);
      } catch (RuntimeException e) {
        return CompletableFuture.failedFuture(e);
      }
      byte[] out;
      try {
        out = handler.handle(in);
      } catch (Exception e) {
        return CompletableFuture.failedFuture(
            EncodingErrors.handlerError(meta, TypedCalls.responseHeaders(), e));
      }
      return CompletableFuture.completedFuture(
          Response.builder()
              .headers(TypedCalls.responseHeaders())
              .body(out == null || out.length == 0 ? Body.empty() : Body.of(out))
              .build());
    };
  }

  /** {@code handler} as a transport-level oneway handler; see {@link #unaryHandler}. */
  public static Handler<Request, Void> onewayHandler(RawOnewayHandler handler) {
    requireNonNull(handler, "handler");
    return request -> {
      RequestMeta meta = request.meta();
      try {
        EncodingErrors.expectEncoding(meta, ENCODING);
        handler.handle(decode(request));
        return CompletableFuture.completedFuture(null);
      } catch (Exception e) {
        return CompletableFuture.failedFuture(EncodingErrors.wrapHandlerError(meta, e));
      }
    };
  }

  private static byte[] decode(Request request) {
    try {
      return request.body().toByteArray();
    } catch (RuntimeException e) {
      throw EncodingErrors.requestBodyDecodeError(request.meta(), ENCODING, e);
    }
  }
}
