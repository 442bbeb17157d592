package io.yarpc.transport.grpc.internal;

import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.Metadata;
import io.grpc.Status;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.netty.internal.TlsErrors;

/**
 * YARPC errors to gRPC statuses and back (docs/spec/wire-grpc.md §4.4). Codes map by number in both directions.
 *
 * <p>Server side: an error with details sends them verbatim as {@code grpc-status-details-bin} when they
 * are a serialised {@code google.rpc.Status}, whose code and message then become the gRPC status (as
 * yarpc-go does); otherwise the status message is {@code name: message} when the error has a name (just
 * {@code name} when the message is empty), and the name also travels as the {@code rpc-error-name}
 * trailer.
 *
 * <p>Client side: the code by number, the name from {@code rpc-error-name} (its {@code name: } prefix is
 * stripped from the message), and a {@code grpc-status-details-bin} trailer whose {@code google.rpc.Status}
 * has details becomes the error's details, byte for byte.
 *
 * <p>Text: grpc-java percent-encodes the status message into {@code grpc-message} and decodes it (gRPC
 * PROTOCOL-HTTP2 {@code Status-Message}; grpc/grpc-go#5654 for grpc-go's side), so any character of a
 * message arrives as sent. The name trailer is percent-encoded the same way ({@link Metadatas#encodeText}).
 * Trailers must fit the 8 KiB of metadata grpc-java clients accept by default, or the client fails the call
 * with {@code internal} and the error's code is lost: a message is cut by core's rule
 * ({@link io.yarpc.internal.WireText#truncate}) to {@value #MAX_MESSAGE_WIRE_BYTES} bytes encoded, a name to
 * {@value Metadatas#MAX_NAME_WIRE_BYTES}.
 */
final class GrpcErrors {
  /** The most bytes the status message ({@code grpc-message}, name prefix included) takes encoded. */
  static final int MAX_MESSAGE_WIRE_BYTES = 4096;

  private GrpcErrors() {}

  /**
   * The status for an error a handler (or the router) produced, and its trailers added to
   * {@code trailers}.
   *
   * @param withNameTrailer whether to send the {@code rpc-error-name} trailer (unary calls)
   */
  public static Status toStatus(YarpcException e, Metadata trailers, boolean withNameTrailer) {
    String name =
        e.name() == null ? null : Metadatas.fitText(e.name(), Metadatas.MAX_NAME_WIRE_BYTES);
    String message = e.getMessage();
    if (name != null) {
      if (withNameTrailer) {
        trailers.put(Metadatas.key(Metadatas.ERROR_NAME), Metadatas.encodeText(name));
      }
      message = message.isEmpty() ? name : name + ": " + message;
    }
    byte[] details = e.details();
    if (details != null) {
      try {
        com.google.rpc.Status proto = com.google.rpc.Status.parseFrom(details);
        if (proto.getCode() != 0) {
          trailers.put(Metadatas.STATUS_DETAILS_KEY, details);
          return Status.fromCodeValue(proto.getCode())
              .withDescription(fitMessage(proto.getMessage()));
        }
      } catch (InvalidProtocolBufferException notAStatus) {
        // details that are not a google.rpc.Status cannot travel over gRPC: send code and message
      }
    }
    return Status.fromCodeValue(e.code().value()).withDescription(fitMessage(message));
  }

  /** The status for a YARPC error without name trailer handling or details (routing failures). */
  public static Status toPlainStatus(YarpcException e) {
    return Status.fromCodeValue(e.code().value()).withDescription(fitMessage(e.getMessage()));
  }

  private static String fitMessage(String message) {
    return Metadatas.fitText(message, MAX_MESSAGE_WIRE_BYTES);
  }

  /**
   * The YARPC error for a non-OK gRPC status of a call to {@code peer} (its identifier, for the message)
   * received with {@code trailers} (may be null). A connection that failed because of TLS — grpc-java's
   * {@code UNAVAILABLE} with the TLS exception as its cause — is {@code unavailable} with {@code TLS
   * handshake with peer <peer> failed: <reason>}.
   */
  public static YarpcException fromStatus(Status status, Metadata trailers, String peer) {
    if (status.getCode() == Status.Code.UNAVAILABLE
        && status.getCause() != null
        && TlsErrors.isTls(status.getCause())) {
      return TlsErrors.handshakeFailure(peer == null ? "(unknown)" : peer, status.getCause());
    }
    return fromStatus(status, trailers);
  }

  /**
   * The YARPC error for a non-OK gRPC status received with {@code trailers} (may be null).
   */
  public static YarpcException fromStatus(Status status, Metadata trailers) {
    Code code = Code.fromValue(status.getCode().value());
    if (code == null || code == Code.OK) {
      code = Code.UNKNOWN;
    }
    String message = status.getDescription() == null ? "" : status.getDescription();
    if (status.getCause() != null && status.getCause().getMessage() != null) {
      // a local failure (e.g. "io exception"): keep what actually happened, e.g. "Connection
      // refused"
      message =
          message.isEmpty()
              ? status.getCause().getMessage()
              : message + ": " + status.getCause().getMessage();
    }
    String name = null;
    byte[] details = null;
    if (trailers != null) {
      Iterable<String> names = trailers.getAll(Metadatas.key(Metadatas.ERROR_NAME));
      if (names != null) {
        java.util.Iterator<String> it = names.iterator();
        String first = it.next();
        if (!it.hasNext()) {
          name = Metadatas.decodeText(first);
        }
      }
      byte[] raw = trailers.get(Metadatas.STATUS_DETAILS_KEY);
      if (raw != null) {
        try {
          if (com.google.rpc.Status.parseFrom(raw).getDetailsCount() > 0) {
            details = raw;
          }
        } catch (InvalidProtocolBufferException ignored) {
          // not a google.rpc.Status: no details
        }
      }
    }
    if (name != null && !name.isEmpty()) {
      if (message.equals(name)) {
        message = "";
      } else if (message.startsWith(name + ": ")) {
        message = message.substring(name.length() + 2);
      }
    }
    YarpcException e =
        status.getCause() == null
            ? YarpcException.of(code, message)
            : YarpcException.withCause(code, message, status.getCause());
    if (name != null && !name.isEmpty()) {
      e = e.withName(name);
    }
    if (details != null) {
      e = e.withDetails(details);
    }
    return e;
  }
}
