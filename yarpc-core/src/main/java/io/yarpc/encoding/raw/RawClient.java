package io.yarpc.encoding.raw;

import static java.util.Objects.requireNonNull;

import io.yarpc.CallOptions;
import io.yarpc.ClientConfig;
import io.yarpc.Reply;
import io.yarpc.encoding.internal.TypedCalls;
import io.yarpc.transport.Body;
import io.yarpc.transport.Request;
import java.util.concurrent.CompletableFuture;

/**
 * Client side of the raw encoding: sends byte arrays, receives byte arrays.
 *
 * <pre>{@code
 * RawClient echo = RawClient.of(dispatcher.clientConfig("echo"));
 * byte[] answer = echo.call("echo", "hi".getBytes(UTF_8), CallOptions.timeout(Duration.ofSeconds(1))).join();
 * }</pre>
 *
 * <p>Bodies: the request array becomes the request body without a copy (do not change it until the
 * future completes) and belongs to the outbound. The response body is copied once into the returned array
 * and released, also when anything fails; the body of a response attached to an error is released too
 * (the exception then carries a copy of that response with an empty body).
 *
 * <p>Failures complete the future with a {@link io.yarpc.errors.YarpcException}; a response flagged as an
 * application error does too (see {@link io.yarpc.encoding.EncodingErrors#applicationError}). Cancelling
 * a returned future cancels the call. Thread-safe.
 */
public final class RawClient {
  private final ClientConfig config;

  private RawClient(ClientConfig config) {
    this.config = config;
  }

  /** A raw client sending through {@code config}. */
  public static RawClient of(ClientConfig config) {
    return new RawClient(requireNonNull(config, "config"));
  }

  /** Calls {@code procedure} with {@code body}; completes with the response body. */
  public CompletableFuture<byte[]> call(String procedure, byte[] body, CallOptions options) {
    return TypedCalls.values(callForReply(procedure, body, options));
  }

  /** Calls {@code procedure} with {@code body}; completes with the response body and headers. */
  public CompletableFuture<Reply<byte[]>> callForReply(
      String procedure, byte[] body, CallOptions options) {
    Request request = request(procedure, body, options);
    return TypedCalls.unary(config, request, Raw.ENCODING, Body::toByteArray);
  }

  /** Sends {@code body} to the oneway {@code procedure}; completes when the server acknowledged it. */
  public CompletableFuture<Void> callOneway(String procedure, byte[] body, CallOptions options) {
    return TypedCalls.oneway(config, request(procedure, body, options));
  }

  private Request request(String procedure, byte[] body, CallOptions options) {
    requireNonNull(procedure, "procedure");
    requireNonNull(body, "body");
    requireNonNull(options, "options");
    return Request.of(
        TypedCalls.clientMeta(config, procedure, Raw.ENCODING, options),
        body.length == 0 ? Body.empty() : Body.of(body));
  }
}
