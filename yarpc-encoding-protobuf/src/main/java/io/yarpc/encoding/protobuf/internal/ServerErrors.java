package io.yarpc.encoding.protobuf.internal;

import com.google.protobuf.TypeRegistry;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.protobuf.ProtoUtils;
import io.yarpc.encoding.EncodingErrors;
import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Headers;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;

/**
 * What a grpc handler's failure becomes in YARPC (docs/spec/model.md §2.3 and §6.4, as yarpc-go's protobuf encoding):
 * a {@link YarpcException} with the status's code and message that carries ({@link
 * YarpcException#withResponse}) a response flagged as an application error.
 *
 * <ul>
 *   <li>A {@code google.rpc.Status} — from the {@code grpc-status-details-bin} trailer ({@code
 *       StatusProto.toStatusRuntimeException}) or from the details bytes of a {@link YarpcException} the
 *       handler threw or passed to {@code onError} — becomes the error's details, serialised in the
 *       request's encoding; the application-error meta gets the code, the first detail's message name
 *       without package, and the details described as {@code [Name{text} ...]}.
 *   <li>A {@link YarpcException} keeps its code, message and name.
 *   <li>Any other exception (thrown, or passed to {@code onError}, which grpc turns into {@code UNKNOWN}
 *       without a description) becomes {@code unknown} with yarpc-go's {@code error for service "S" and
 *       procedure "P": <message>}.
 * </ul>
 *
 * The attached response carries the response headers set so far and, as body, the response message if
 * the handler sent one before failing (yarpc-go's both-response-and-error), else nothing: the details
 * travel as the error's details, which each transport carries its own way (gRPC's {@code
 * grpc-status-details-bin}, HTTP's {@code Grpc-Status-Details-Bin}, the body of TChannel's
 * application-error reply). A body of details here would reach a gRPC client as the response message,
 * which a plain gRPC client fails to parse.
 */
final class ServerErrors {
  /** The {@code grpc-status-details-bin} trailer. */
  public static final Metadata.Key<com.google.rpc.Status> STATUS_DETAILS_KEY =
      Metadata.Key.of(
          "grpc-status-details-bin",
          ProtoUtils.metadataMarshaller(com.google.rpc.Status.getDefaultInstance()));

  private ServerErrors() {}

  /**
   * The error for a handler that closed its call with a non-OK {@code status}.
   *
   * @param trailers the trailers it closed with (may be null)
   * @param initialHeaders initial headers for the attached response (those the handler sent)
   * @param responseHeaders the other headers for the attached response (the trailers' are added)
   * @param responseBody the message the handler sent before failing, or {@code null}; ownership moves to
   *     the returned exception's response
   * @param attachResponse whether to attach the application-error response (unary calls); streams end
   *     with the error alone
   */
  public static YarpcException fromStatus(
      Status status,
      Metadata trailers,
      RequestMeta meta,
      String encoding,
      TypeRegistry types,
      Headers initialHeaders,
      Headers responseHeaders,
      Body responseBody,
      boolean attachResponse) {
    Throwable cause = status.getCause();
    YarpcException thrown = findYarpc(cause);
    com.google.rpc.Status detail = null;
    YarpcException error;
    if (thrown != null) {
      error = thrown;
      if (error.response() != null) {
        error.response().body().release();
        error = error.withResponse(null);
      }
      detail =
          StatusDetails.parse(
              error.details(), io.yarpc.encoding.protobuf.Protobuf.JSON_ENCODING, types);
    } else {
      Code code = Code.fromValue(status.getCode().value());
      if (code == null || code == Code.OK) {
        code = Code.UNKNOWN;
      }
      String description = status.getDescription();
      if ((description == null || description.isEmpty()) && cause != null && code == Code.UNKNOWN) {
        error = EncodingErrors.wrapHandlerError(meta, cause);
      } else {
        String message = description == null ? "" : description;
        error =
            cause == null
                ? YarpcException.of(code, "%s", message)
                : YarpcException.withCause(code, message, cause);
      }
      detail = statusDetails(trailers);
    }
    String appName = error.name();
    String appDetails = error.getMessage().isEmpty() ? null : error.getMessage();
    byte[] detailBytes = null;
    if (detail != null) {
      detailBytes = StatusDetails.serialize(detail, encoding, types);
      error = error.withDetails(detailBytes);
      appName = StatusDetails.firstDetailName(detail);
      String described = StatusDetails.describe(detail, types);
      if (described != null) {
        appDetails = described;
      }
    }
    if (!attachResponse) {
      if (responseBody != null) {
        responseBody.release();
      }
      return error;
    }
    Headers headers = responseHeaders;
    if (trailers != null && !trailers.keys().isEmpty()) {
      headers = responseHeaders.toBuilder().addAll(HeaderMetadata.toHeaders(trailers)).build();
    }
    Body body = responseBody != null ? responseBody : Body.empty();
    return error.withResponse(
        Response.builder()
            .initialHeaders(initialHeaders)
            .headers(headers)
            .body(body)
            .applicationError(new ApplicationErrorMeta(error.code(), appName, appDetails))
            .build());
  }

  /** The {@code google.rpc.Status} of the {@code grpc-status-details-bin} trailer, or {@code null}. */
  public static com.google.rpc.Status statusDetails(Metadata trailers) {
    if (trailers == null || !trailers.containsKey(STATUS_DETAILS_KEY)) {
      return null;
    }
    try {
      com.google.rpc.Status st = trailers.get(STATUS_DETAILS_KEY);
      return st == null || st.getCode() == 0 ? null : st;
    } catch (RuntimeException unparsable) {
      return null;
    }
  }

  private static YarpcException findYarpc(Throwable t) {
    for (int depth = 0; t != null && depth < 16; depth++, t = t.getCause()) {
      if (t instanceof YarpcException) {
        return (YarpcException) t;
      }
    }
    return null;
  }
}
