package io.yarpc.encoding;

import static java.util.Objects.requireNonNull;

import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Futures;
import io.yarpc.internal.GoStrings;
import io.yarpc.transport.Body;
import io.yarpc.transport.Headers;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;

/**
 * The errors every encoding reports, with yarpc-go's exact messages (crossdock and yarpc-go clients
 * compare some of them verbatim). Raw, JSON and protobuf use these; a custom encoding should too.
 *
 * <p>Server side, all with code {@code invalid-argument} (as yarpc-go's {@code pkg/errors/server.go}):
 *
 * <ul>
 *   <li>{@link #expectEncoding}: {@code failed to decode "json" request body for procedure "P" of service
 *       "S" from caller "C": expected encoding "json" but got "thrift"};
 *   <li>{@link #requestBodyDecodeError}: {@code failed to decode "json" request body for procedure "P" of
 *       service "S" from caller "C": <cause>};
 *   <li>{@link #responseBodyEncodeError}: {@code failed to encode "json" response body for procedure ...}.
 * </ul>
 *
 * <p>Client side, with code {@code internal} (as yarpc-go's current {@code pkg/errors/client.go}; releases
 * before 2024 used {@code invalid-argument}): {@link #requestBodyEncodeError} and {@link
 * #responseBodyDecodeError}, {@code failed to encode "json" request body for procedure "P" of service "S":
 * <cause>}.
 *
 * <p>Handler failures: {@link #wrapHandlerError} (yarpc-go's {@code WrapHandlerError}) and {@link
 * #handlerError}, which also attaches an application-error response as raw and JSON handlers do. On the
 * client, {@link #applicationError} and {@link #clientCallError} turn what came back into the exception a
 * typed client surfaces, releasing bodies on the way.
 *
 * <p>Quoting follows Go's {@code %q} for ordinary text: the value in double quotes, with {@code "},
 * {@code \} and control characters escaped.
 */
public final class EncodingErrors {
  /** The message of a client-side application error whose meta carries no details. */
  public static final String APPLICATION_ERROR_MESSAGE = "application error";

  private EncodingErrors() {}

  /**
   * Checks the request's encoding against those the handler accepts.
   *
   * @param meta the inbound request's metadata
   * @param allowed the accepted encodings, at least one
   * @throws YarpcException {@code invalid-argument}: with one allowed encoding {@code failed to decode
   *     "json" request body for procedure "P" of service "S" from caller "C": expected encoding "json" but
   *     got "thrift"}; with several {@code failed to decode [proto json] request body ... : expected one of
   *     encodings [proto json] but got "thrift"}
   */
  public static void expectEncoding(RequestMeta meta, String... allowed) {
    requireNonNull(meta, "meta");
    if (allowed.length == 0) {
      throw new IllegalArgumentException("at least one encoding must be allowed");
    }
    String got = meta.encoding();
    for (String a : allowed) {
      if (a.equals(got)) {
        return;
      }
    }
    String reason =
        allowed.length == 1
            ? "expected encoding "
                + GoStrings.quote(allowed[0])
                + " but got "
                + GoStrings.quote(got)
            : "expected one of encodings " + goList(allowed) + " but got " + GoStrings.quote(got);
    String encodings = allowed.length == 1 ? GoStrings.quote(allowed[0]) : goList(allowed);
    throw YarpcException.of(
        Code.INVALID_ARGUMENT, serverMessage("decode", encodings, "request", meta, reason));
  }

  /**
   * The server's error for a request body it cannot decode: {@code invalid-argument} {@code failed to
   * decode "<encoding>" request body for procedure "P" of service "S" from caller "C": <cause message>}.
   * The cause is kept for logs, never sent.
   */
  public static YarpcException requestBodyDecodeError(
      RequestMeta meta, String encoding, Throwable cause) {
    return YarpcException.withCause(
        Code.INVALID_ARGUMENT,
        serverMessage("decode", GoStrings.quote(encoding), "request", meta, describe(cause)),
        cause);
  }

  /**
   * The server's error for a response it cannot encode: {@code invalid-argument} {@code failed to encode
   * "<encoding>" response body for procedure "P" of service "S" from caller "C": <cause message>}.
   */
  public static YarpcException responseBodyEncodeError(
      RequestMeta meta, String encoding, Throwable cause) {
    return YarpcException.withCause(
        Code.INVALID_ARGUMENT,
        serverMessage("encode", GoStrings.quote(encoding), "response", meta, describe(cause)),
        cause);
  }

  /**
   * The client's error for a request it cannot encode: {@code internal} {@code failed to encode
   * "<encoding>" request body for procedure "P" of service "S": <cause message>}.
   */
  public static YarpcException requestBodyEncodeError(
      RequestMeta meta, String encoding, Throwable cause) {
    return YarpcException.withCause(
        Code.INTERNAL, clientMessage("encode", encoding, "request", meta, cause), cause);
  }

  /**
   * The client's error for a response it cannot decode: {@code internal} {@code failed to decode
   * "<encoding>" response body for procedure "P" of service "S": <cause message>}.
   */
  public static YarpcException responseBodyDecodeError(
      RequestMeta meta, String encoding, Throwable cause) {
    return YarpcException.withCause(
        Code.INTERNAL, clientMessage("decode", encoding, "response", meta, cause), cause);
  }

  /**
   * What a handler's exception becomes on the wire (yarpc-go's {@code WrapHandlerError}): a {@link
   * YarpcException} (also one wrapped in a {@link java.util.concurrent.CompletionException}) as is;
   * anything else {@link YarpcException#wrapping} it as {@code unknown} with {@code error for service "S"
   * and procedure "P": <message or class name>} (what the server logs; its caller gets the {@linkplain
   * YarpcException#redacted() redacted} message), keeping the exception as cause.
   */
  public static YarpcException wrapHandlerError(RequestMeta meta, Throwable t) {
    requireNonNull(meta, "meta");
    Throwable cause = Futures.unwrap(requireNonNull(t, "t"));
    if (cause instanceof YarpcException) {
      return (YarpcException) cause;
    }
    return YarpcException.wrapping(
        Code.UNKNOWN,
        "error for service "
            + GoStrings.quote(meta.service())
            + " and procedure "
            + GoStrings.quote(meta.procedure()),
        cause);
  }

  /**
   * A raw or JSON handler's exception as the handler returns it: {@link #wrapHandlerError} carrying
   * ({@link YarpcException#withResponse}) an empty-body response flagged as an application error, with the
   * response headers the handler set. For a {@code YarpcException} the meta holds its code, its
   * name and its message as details; for any other exception (a bug, not an answer) it holds none of
   * them: no class name or internal text reaches the wire. An exception that already carries a response is returned as
   * is. Whoever receives the exception owns the attached response (here: the transport, which sends it).
   *
   * @param meta the inbound request's metadata
   * @param responseHeaders the headers collected for the response (e.g. {@code Call.current()
   *     .responseHeaders()})
   * @param t what the handler threw
   */
  public static YarpcException handlerError(
      RequestMeta meta, Headers responseHeaders, Throwable t) {
    requireNonNull(responseHeaders, "responseHeaders");
    YarpcException e = wrapHandlerError(meta, t);
    if (e.response() != null) {
      return e;
    }
    // An unexpected exception's class name and message stay on the server (see
    // YarpcException#redacted): the meta then carries neither.
    Throwable cause = Futures.unwrap(t);
    ApplicationErrorMeta appMeta =
        cause instanceof YarpcException
            ? new ApplicationErrorMeta(
                e.code(), e.name(), e.getMessage().isEmpty() ? null : e.getMessage())
            : new ApplicationErrorMeta(null, null, null);
    return e.withResponse(
        Response.builder().headers(responseHeaders).applicationError(appMeta).build());
  }

  /**
   * The client's error for a response flagged as an application error that came back without a
   * transport error: code from the meta (else {@code unknown}), name from the meta, message from the
   * meta's details (else {@value #APPLICATION_ERROR_MESSAGE}). Takes ownership of {@code response}'s
   * body and releases it; the exception carries a copy of the response with an empty body, so its
   * headers and meta stay readable and nothing is left to release.
   */
  public static YarpcException applicationError(Response response) {
    requireNonNull(response, "response");
    response.body().release();
    ApplicationErrorMeta m = response.applicationErrorMeta();
    Code code = m.code() == null || m.code() == Code.OK ? Code.UNKNOWN : m.code();
    String message =
        m.details() == null || m.details().isEmpty() ? APPLICATION_ERROR_MESSAGE : m.details();
    return YarpcException.of(code, "%s", message)
        .withName(m.name())
        .withResponse(response.toBuilder().body(Body.empty()).build());
  }

  /**
   * The exception a typed client surfaces for a failed call: {@link YarpcException#from}'s mapping of
   * {@code error}. When the exception carries a response, that response's body is released and the
   * returned exception carries a copy with an empty body (headers and application-error meta stay
   * readable, nothing is left to release).
   */
  public static YarpcException clientCallError(Throwable error) {
    YarpcException e = YarpcException.from(error);
    Response attached = e.response();
    if (attached == null) {
      return e;
    }
    attached.body().release();
    return e.withResponse(attached.toBuilder().body(Body.empty()).build());
  }

  private static String serverMessage(
      String verb, String encodings, String what, RequestMeta meta, String reason) {
    return "failed to "
        + verb
        + " "
        + encodings
        + " "
        + what
        + " body for procedure "
        + GoStrings.quote(meta.procedure())
        + " of service "
        + GoStrings.quote(meta.service())
        + " from caller "
        + GoStrings.quote(meta.caller())
        + ": "
        + reason;
  }

  private static String clientMessage(
      String verb, String encoding, String what, RequestMeta meta, Throwable cause) {
    return "failed to "
        + verb
        + " "
        + GoStrings.quote(encoding)
        + " "
        + what
        + " body for procedure "
        + GoStrings.quote(meta.procedure())
        + " of service "
        + GoStrings.quote(meta.service())
        + ": "
        + describe(cause);
  }

  /** The cause's message (or class name); wrappers that only add their cause's name are looked through. */
  private static String describe(Throwable cause) {
    Throwable t = Futures.unwrap(requireNonNull(cause, "cause"));
    while (t instanceof java.io.UncheckedIOException && t.getCause() != null) {
      t = t.getCause();
    }
    return YarpcException.describe(t);
  }

  /** Go's {@code %v} of a string slice: {@code [a b c]}. */
  private static String goList(String[] values) {
    return "[" + String.join(" ", values) + "]";
  }
}
