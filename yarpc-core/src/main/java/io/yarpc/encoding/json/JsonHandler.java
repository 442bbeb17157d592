package io.yarpc.encoding.json;

/**
 * A unary JSON handler: a decoded request object in, a response object out. Runs on the dispatcher's
 * handler executor with the call {@linkplain io.yarpc.Call#current() current}, so it may block, read
 * request headers and set response headers through {@code Call.current()}. The request object is the
 * handler's own (decoding copies everything out of the request body).
 *
 * @param <Q> the request type
 * @param <R> the response type
 */
@FunctionalInterface
public interface JsonHandler<Q, R> {
  /**
   * Handles one request.
   *
   * @param request the decoded request; {@code null} when the body was the JSON literal {@code null}
   * @return the response, serialised with Gson ({@code null} is sent as {@code null})
   * @throws Exception any failure: a {@link io.yarpc.errors.YarpcException} keeps its code, anything else
   *     becomes {@code unknown}; either way the response is flagged as an application error
   */
  R handle(Q request) throws Exception;
}
