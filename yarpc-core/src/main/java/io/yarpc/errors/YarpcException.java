package io.yarpc.errors;

import static java.util.Objects.requireNonNull;

import io.yarpc.internal.Futures;
import io.yarpc.transport.Response;
import java.util.Arrays;

/**
 * The one error type of YARPC: a {@link Code}, a message, an optional name and optional details bytes
 * (e.g. a serialised {@code google.rpc.Status}). Every transport maps it to its own error vocabulary and
 * back.
 *
 * <p>An exception may also carry a {@linkplain #response() response} for transports that deliver a body
 * together with an error (HTTP both-response-error, gRPC). Whoever catches such an exception owns that
 * response and must release its body.
 *
 * <p>Instances are immutable; the {@code with...} methods return copies.
 */
public final class YarpcException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final Code code;
  private final String name;
  private final byte[] details;
  private final transient Response response;
  // non-null when the message is this context followed by the text of a throwable that is not a
  // YarpcException: text a server keeps to itself unless told otherwise (see redacted())
  private final String context;
  private final boolean unprocessed;

  private YarpcException(
      Code code, String message, String name, byte[] details, Response response, Throwable cause) {
    this(code, message, name, details, response, cause, null, false);
  }

  private YarpcException(
      Code code,
      String message,
      String name,
      byte[] details,
      Response response,
      Throwable cause,
      String context,
      boolean unprocessed) {
    super(message == null ? "" : message, cause, false, cause != null);
    if (code == Code.OK) {
      throw new IllegalArgumentException("an error cannot have code ok");
    }
    this.code = requireNonNull(code, "code");
    this.name = name == null || name.isEmpty() ? null : name;
    this.details = details == null || details.length == 0 ? null : details;
    this.response = response;
    this.context = context;
    this.unprocessed = unprocessed;
  }

  /** An error with this code and message ({@link String#format} applied when args are given). */
  public static YarpcException of(Code code, String message, Object... args) {
    return new YarpcException(
        code, args.length == 0 ? message : String.format(message, args), null, null, null, null);
  }

  /** An error with this code and message, caused by {@code cause} (kept for logs, never sent). */
  public static YarpcException withCause(Code code, String message, Throwable cause) {
    return new YarpcException(code, message, null, null, null, cause);
  }

  /**
   * An error for an unexpected throwable (not a {@code YarpcException}), such as a handler's bug: its
   * message is {@code context + ": " + } the throwable's message (or class name), which the side that
   * made it may log and show; a server sends its caller only the {@linkplain #redacted() redacted}
   * message, which keeps {@code context} and drops the throwable's text (unless the dispatcher is built
   * with {@code verboseErrors(true)}).
   */
  public static YarpcException wrapping(Code code, String context, Throwable cause) {
    requireNonNull(context, "context");
    requireNonNull(cause, "cause");
    String text = describe(cause);
    return new YarpcException(
        code,
        context.isEmpty() ? text : context + ": " + text,
        null,
        null,
        null,
        cause,
        context,
        false);
  }

  /**
   * What a server may tell its caller about this error: this error itself, unless it was made by {@link
   * #wrapping}, whose message holds the text of an unexpected exception (internal state, class names):
   * then a copy whose message is the context
   * followed by {@code unexpected error (the server logged it)}. Name, details and response are kept.
   */
  public YarpcException redacted() {
    if (context == null) {
      return this;
    }
    String hidden = "unexpected error (the server logged it)";
    return new YarpcException(
        code,
        context.isEmpty() ? hidden : context + ": " + hidden,
        name,
        details,
        response,
        getCause(),
        null,
        unprocessed);
  }

  /** Whether {@link #redacted()} would change the message. */
  public boolean hasUnexpectedCauseText() {
    return context != null;
  }

  /**
   * The YARPC error for any throwable: a {@code YarpcException} (also when wrapped in a
   * {@link java.util.concurrent.CompletionException} or {@link java.util.concurrent.ExecutionException})
   * is returned as is, a {@link java.util.concurrent.CancellationException} becomes
   * {@link Code#CANCELLED}, anything else {@link Code#UNKNOWN} with the throwable's message.
   */
  public static YarpcException from(Throwable t) {
    Throwable root = Futures.unwrap(requireNonNull(t, "t"));
    if (root instanceof YarpcException) {
      return (YarpcException) root;
    }
    if (root instanceof java.util.concurrent.CancellationException) {
      return withCause(Code.CANCELLED, "call was cancelled", root);
    }
    return withCause(Code.UNKNOWN, describe(root), root);
  }

  /** A throwable's message, or its class name when it has none. */
  public static String describe(Throwable t) {
    String message = t.getMessage();
    return message == null || message.isEmpty() ? t.getClass().getName() : message;
  }

  /** A copy with this (deprecated in yarpc-go, still on the wire) error name. */
  public YarpcException withName(String name) {
    return new YarpcException(
        code, getMessage(), name, details, response, getCause(), context, unprocessed);
  }

  /** A copy with these details bytes (empty means none). The array is not copied: do not mutate it. */
  public YarpcException withDetails(byte[] details) {
    return new YarpcException(
        code, getMessage(), name, details, response, getCause(), context, unprocessed);
  }

  /** A copy that carries {@code response}; the catcher owns it and releases its body. */
  public YarpcException withResponse(Response response) {
    return new YarpcException(
        code, getMessage(), name, details, response, getCause(), context, unprocessed);
  }

  /**
   * A copy marked {@linkplain #unprocessed() unprocessed}: for a transport or server that knows the call
   * never reached a handler.
   */
  public YarpcException withUnprocessed() {
    return unprocessed
        ? this
        : new YarpcException(
            code, getMessage(), name, details, response, getCause(), context, true);
  }

  /**
   * Whether the call provably never reached a handler, so sending it again cannot run a handler twice.
   * Transports mark the errors where their protocol proves it: a connection that could not be opened, a
   * request that never left, an HTTP/2 stream the server refused ({@code REFUSED_STREAM}) or left
   * unprocessed by {@code GOAWAY}, a TChannel {@code busy} or {@code declined} error frame (retry-safe by
   * the TChannel protocol, docs/spec/wire-tchannel.md §8 and §11), a peer list that had no peer to give;
   * the dispatcher marks the calls it refuses before their handler (stopping, a procedure at its
   * concurrency limit, a full handler executor), and inbounds answer those with their protocol's refusal
   * where it has one. {@link io.yarpc.retry.RetryMiddleware} retries such calls whatever the procedure.
   * Not sent on the wire as such, and not part of {@link #equals}.
   */
  public boolean unprocessed() {
    return unprocessed;
  }

  /** The error's code; never {@link Code#OK}. */
  public Code code() {
    return code;
  }

  /** The error message (possibly empty, never null). */
  @Override
  public String getMessage() {
    return super.getMessage();
  }

  /** The optional error name, or {@code null}. */
  public String name() {
    return name;
  }

  /** The optional details bytes, or {@code null}. Do not mutate the array. */
  public byte[] details() {
    return details;
  }

  /**
   * Releases the body of the response {@code error} carries (see {@link #response()}), if any: for whoever
   * drops an error that nobody will take, e.g. one that lost the race with a caller who gave up.
   */
  public static void releaseResponse(Throwable error) {
    Response attached = from(error).response();
    if (attached != null) {
      attached.body().release();
    }
  }

  /** A response that travels with this error, or {@code null}. */
  public Response response() {
    return response;
  }

  /** Who is at fault. */
  public FaultType faultType() {
    return code.faultType();
  }

  /** {@code code:<name>[ name:<n>][ message:<m>]}, as yarpc-go prints a status. */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("code:").append(code.wireName());
    if (name != null) {
      sb.append(" name:").append(name);
    }
    if (!getMessage().isEmpty()) {
      sb.append(" message:").append(getMessage());
    }
    return sb.toString();
  }

  /** Equal when code, message, name and details are equal (responses and causes are ignored). */
  @Override
  public boolean equals(Object o) {
    if (!(o instanceof YarpcException)) {
      return false;
    }
    YarpcException other = (YarpcException) o;
    return code == other.code
        && getMessage().equals(other.getMessage())
        && java.util.Objects.equals(name, other.name)
        && Arrays.equals(details, other.details);
  }

  @Override
  public int hashCode() {
    return (code.hashCode() * 31 + getMessage().hashCode()) * 31 + Arrays.hashCode(details);
  }
}
