package io.yarpc.encoding.raw;

/**
 * A unary raw handler: request bytes in, response bytes out. Runs on the dispatcher's handler executor
 * with the call {@linkplain io.yarpc.Call#current() current}, so it may block, read request headers and
 * set response headers through {@code Call.current()}.
 *
 * <p>The request array is a copy the handler owns and may keep; the returned array becomes the response
 * body without a copy, so the handler must not change it afterwards.
 */
@FunctionalInterface
public interface RawHandler {
  /**
   * Handles one request.
   *
   * @param body the request body (never null; empty for an empty body)
   * @return the response body; {@code null} means empty
   * @throws Exception any failure: a {@link io.yarpc.errors.YarpcException} keeps its code, anything else
   *     becomes {@code unknown}; either way the response is flagged as an application error
   */
  byte[] handle(byte[] body) throws Exception;
}
