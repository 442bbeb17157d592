package io.yarpc.errors;

/**
 * What a handler said about an application error: a domain failure carried on a successful transport
 * response (see {@code Response#isApplicationError()}), not a transport error.
 *
 * @param code an optional code classifying the failure, or {@code null}
 * @param name an optional name, e.g. an exception type or the first protobuf error detail's message name
 * @param details optional human-readable details (transports may truncate them), or {@code null}
 */
public record ApplicationErrorMeta(Code code, String name, String details) {
  /** Meta with nothing set. */
  public static final ApplicationErrorMeta EMPTY = new ApplicationErrorMeta(null, null, null);
}
