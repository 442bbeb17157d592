package io.yarpc.encoding.json;

/**
 * A oneway JSON handler: receives a decoded request object, answers nothing. Runs on the dispatcher's
 * handler executor with the call {@linkplain io.yarpc.Call#current() current}.
 *
 * @param <Q> the request type
 */
@FunctionalInterface
public interface JsonOnewayHandler<Q> {
  /**
   * Handles one request.
   *
   * @param request the decoded request; {@code null} when the body was the JSON literal {@code null}
   * @throws Exception any failure; it fails the oneway handler's future (the caller was already
   *     acknowledged and never sees it)
   */
  void handle(Q request) throws Exception;
}
