package io.yarpc.encoding.json;

import static java.util.Objects.requireNonNull;

import com.google.gson.Gson;
import io.yarpc.CallOptions;
import io.yarpc.ClientConfig;
import io.yarpc.Reply;
import io.yarpc.encoding.EncodingErrors;
import io.yarpc.encoding.internal.TypedCalls;
import io.yarpc.transport.Body;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import java.util.concurrent.CompletableFuture;

/**
 * Client side of the JSON encoding: sends Java objects as JSON, decodes JSON responses with Gson.
 *
 * <pre>{@code
 * JsonClient kv = JsonClient.of(dispatcher.clientConfig("keyvalue"));
 * GetResponse r = kv.call("get", new GetRequest("k"), GetResponse.class, options).join();
 * }</pre>
 *
 * <p>Bodies: the request is serialised into a body of known length that the outbound owns. The response
 * is decoded from the body's byte access when it has it (no copy into an array), else from its stream,
 * and the body is released after decoding, also on failure; the body of a response attached to an error
 * is released too (the exception then carries a copy of that response with an empty body).
 *
 * <p>Failures complete the future with a {@link io.yarpc.errors.YarpcException}: a request Gson cannot
 * serialise or a response it cannot parse (an empty one included) with {@link
 * EncodingErrors#requestBodyEncodeError} / {@link EncodingErrors#responseBodyDecodeError}, a response
 * flagged as an application error with {@link EncodingErrors#applicationError}. Cancelling a returned
 * future cancels the call. Thread-safe.
 */
public final class JsonClient {
  private final ClientConfig config;
  private final JsonCodec codec;

  private JsonClient(ClientConfig config, Gson gson) {
    this.config = requireNonNull(config, "config");
    this.codec = new JsonCodec(requireNonNull(gson, "gson"));
  }

  /** A JSON client sending through {@code config} with a default {@link Gson}. */
  public static JsonClient of(ClientConfig config) {
    return new JsonClient(config, JsonCodec.DEFAULT_GSON);
  }

  /** A JSON client sending through {@code config} that (de)serialises with {@code gson}. */
  public static JsonClient of(ClientConfig config, Gson gson) {
    return new JsonClient(config, gson);
  }

  /**
   * Calls {@code procedure} with {@code request} (any object Gson serialises, {@code null} sent as JSON
   * {@code null}); completes with the response decoded as {@code responseType} ({@code null} for a JSON
   * {@code null}).
   */
  public <R> CompletableFuture<R> call(
      String procedure, Object request, Class<R> responseType, CallOptions options) {
    return TypedCalls.values(callForReply(procedure, request, responseType, options));
  }

  /** Like {@link #call}, completing with the decoded response and the response headers. */
  public <R> CompletableFuture<Reply<R>> callForReply(
      String procedure, Object request, Class<R> responseType, CallOptions options) {
    requireNonNull(procedure, "procedure");
    requireNonNull(responseType, "responseType");
    requireNonNull(options, "options");
    Request req;
    try {
      req = request(procedure, request, options);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return TypedCalls.unary(config, req, Json.ENCODING, body -> decode(body, responseType));
  }

  /** Sends {@code request} to the oneway {@code procedure}; completes when the server acknowledged it. */
  public CompletableFuture<Void> callOneway(String procedure, Object request, CallOptions options) {
    requireNonNull(procedure, "procedure");
    requireNonNull(options, "options");
    Request req;
    try {
      req = request(procedure, request, options);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return TypedCalls.oneway(config, req);
  }

  private <R> R decode(Body body, Class<R> type) throws JsonCodec.DecodeException {
    return codec.decode(body, type);
  }

  /** @throws io.yarpc.errors.YarpcException when the value cannot be serialised */
  private Request request(String procedure, Object value, CallOptions options) {
    RequestMeta meta = TypedCalls.clientMeta(config, procedure, Json.ENCODING, options);
    Body body;
    try {
      body = codec.encode(value);
    } catch (RuntimeException e) {
      throw EncodingErrors.requestBodyEncodeError(meta, Json.ENCODING, e);
    }
    return Request.of(meta, body);
  }
}
