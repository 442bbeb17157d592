package io.yarpc.encoding.internal;

import io.yarpc.Call;
import io.yarpc.CallOptions;
import io.yarpc.ClientConfig;
import io.yarpc.Reply;
import io.yarpc.encoding.EncodingErrors;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Futures;
import io.yarpc.transport.Body;
import io.yarpc.transport.Headers;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.util.concurrent.CompletableFuture;

/**
 * Plumbing shared by the typed encodings (raw, JSON, protobuf): the response headers of the current call,
 * request metadata for a client call, and the client call path that decodes a response and releases its
 * body. Not a public API.
 */
public final class TypedCalls {
  private TypedCalls() {}

  /** Decodes a response body into a value; does not release the body (the caller does). */
  @FunctionalInterface
  public interface Decoder<T> {
    /** The value held by {@code body}; any exception means the body could not be decoded. */
    T decode(Body body) throws Exception;
  }

  /** The response headers the current {@link Call}'s handler set; empty outside a call. */
  public static Headers responseHeaders() {
    Call call = Call.current();
    return call == null ? Headers.empty() : call.responseHeaders();
  }

  /**
   * Metadata for a client call of {@code procedure} in {@code encoding} with {@code options}; caller and
   * service come from {@code config} (so error messages can name the service).
   */
  public static RequestMeta clientMeta(
      ClientConfig config, String procedure, String encoding, CallOptions options) {
    return options.toMeta(procedure, encoding).toBuilder()
        .caller(config.caller())
        .service(config.service())
        .build();
  }

  /**
   * Sends a unary call and decodes its response.
   *
   * <ul>
   *   <li>The request body moves to the outbound.
   *   <li>A response body is always released here: after decoding (also when decoding fails), when the
   *       response is flagged as an application error ({@link EncodingErrors#applicationError}), or when
   *       the returned future was already cancelled.
   *   <li>A failure's attached response body is released too ({@link EncodingErrors#clientCallError}).
   *   <li>A decoding failure becomes {@link EncodingErrors#responseBodyDecodeError} (a {@link
   *       YarpcException} thrown by the decoder is kept).
   *   <li>Cancelling the returned future cancels the call.
   * </ul>
   */
  public static <T> CompletableFuture<Reply<T>> unary(
      ClientConfig config, Request request, String encoding, Decoder<T> decoder) {
    RequestMeta meta = request.meta();
    CompletableFuture<Response> sent = send(() -> config.call(request));
    CompletableFuture<Reply<T>> result = new CompletableFuture<>();
    result.whenComplete(
        (v, e) -> {
          if (result.isCancelled()) {
            sent.cancel(false);
          }
        });
    sent.whenComplete(
        (response, error) -> {
          if (error != null) {
            result.completeExceptionally(EncodingErrors.clientCallError(error));
            return;
          }
          if (response == null) {
            result.completeExceptionally(
                YarpcException.of(
                    Code.INTERNAL,
                    "outbound returned no response for procedure \"%s\" of service \"%s\"",
                    meta.procedure(),
                    meta.service()));
            return;
          }
          if (result.isDone()) {
            response.body().release();
            return;
          }
          if (response.isApplicationError()) {
            result.completeExceptionally(EncodingErrors.applicationError(response));
            return;
          }
          T value;
          try {
            value = decoder.decode(response.body());
          } catch (YarpcException e) {
            result.completeExceptionally(e);
            return;
          } catch (Exception | LinkageError e) {
            result.completeExceptionally(EncodingErrors.responseBodyDecodeError(meta, encoding, e));
            return;
          } finally {
            response.body().release();
          }
          result.complete(new Reply<>(value, response.headers()));
        });
    return result;
  }

  /**
   * Sends a oneway call: completes when the outbound acknowledged it; failures become {@link
   * EncodingErrors#clientCallError}. The request body moves to the outbound. Cancelling the returned
   * future cancels the call.
   */
  public static CompletableFuture<Void> oneway(ClientConfig config, Request request) {
    CompletableFuture<Void> sent = send(() -> config.callOneway(request));
    CompletableFuture<Void> result = new CompletableFuture<>();
    result.whenComplete(
        (v, e) -> {
          if (result.isCancelled()) {
            sent.cancel(false);
          }
        });
    sent.whenComplete(
        (v, error) -> {
          if (error != null) {
            result.completeExceptionally(EncodingErrors.clientCallError(error));
          } else {
            result.complete(null);
          }
        });
    return result;
  }

  /**
   * The values of {@code replies} (response headers dropped); failures pass through, and cancelling the
   * returned future cancels {@code replies}.
   */
  public static <T> CompletableFuture<T> values(CompletableFuture<Reply<T>> replies) {
    CompletableFuture<T> result = new CompletableFuture<>();
    result.whenComplete(
        (v, e) -> {
          if (result.isCancelled()) {
            replies.cancel(false);
          }
        });
    replies.whenComplete(
        (reply, error) -> {
          if (error != null) {
            result.completeExceptionally(Futures.unwrap(error));
          } else {
            result.complete(reply.value());
          }
        });
    return result;
  }

  private interface Send<T> {
    CompletableFuture<T> send();
  }

  private static <T> CompletableFuture<T> send(Send<T> send) {
    try {
      CompletableFuture<T> f = send.send();
      return f != null
          ? f
          : CompletableFuture.failedFuture(
              YarpcException.of(Code.INTERNAL, "outbound returned no future"));
    } catch (Throwable t) {
      return CompletableFuture.failedFuture(t);
    }
  }
}
