package io.yarpc.encoding.raw;

/**
 * A oneway raw handler: receives the request bytes, answers nothing. Runs on the dispatcher's handler
 * executor with the call {@linkplain io.yarpc.Call#current() current}. The array is a copy the handler owns
 * and may keep.
 */
@FunctionalInterface
public interface RawOnewayHandler {
  /**
   * Handles one request.
   *
   * @param body the request body (never null)
   * @throws Exception any failure; it fails the oneway handler's future (the caller was already
   *     acknowledged and never sees it)
   */
  void handle(byte[] body) throws Exception;
}
