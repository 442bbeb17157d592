package io.yarpc.transport;

import java.util.List;

/**
 * Picks the handler for a request. The dispatcher gives its router to every inbound; the handlers it
 * returns are ready to call: middleware, execution on the handler executor, deadline enforcement, error
 * mapping and request-body release are already wrapped around them.
 */
public interface Router {
  /**
   * The service of procedures registered without one: the dispatcher's name. Inbounds give it to calls
   * that name no service (a plain gRPC client sends no {@code rpc-service}). Default: empty, so such calls
   * fail validation ({@code missing service name}).
   */
  default String defaultService() {
    return "";
  }

  /** Every registered procedure, sorted by (service, name, encoding). */
  List<Procedure> procedures();

  /**
   * Validates the request's metadata and returns its handler.
   *
   * @throws io.yarpc.errors.YarpcException {@code invalid-argument} {@code missing service name, procedure,
   *     caller name, encoding} (the missing ones, in that order); {@code unimplemented} for an unknown
   *     service or procedure, with yarpc-go's messages
   */
  HandlerSpec choose(RequestMeta meta);
}
