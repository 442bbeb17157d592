package io.yarpc.transport.http.internal;

import io.yarpc.errors.Code;

/** The HTTP status tables of docs/spec/model.md §2.4, in both directions. */
final class StatusCodes {
  private StatusCodes() {}

  /** The HTTP status a server answers an error of {@code code} with. */
  public static int toHttpStatus(Code code) {
    switch (code) {
      case OK:
        return 200;
      case CANCELLED:
        return 499;
      case INVALID_ARGUMENT:
      case FAILED_PRECONDITION:
      case OUT_OF_RANGE:
        return 400;
      case DEADLINE_EXCEEDED:
        return 504;
      case NOT_FOUND:
        return 404;
      case ALREADY_EXISTS:
      case ABORTED:
        return 409;
      case PERMISSION_DENIED:
        return 403;
      case RESOURCE_EXHAUSTED:
        return 429;
      case UNIMPLEMENTED:
        return 501;
      case UNAVAILABLE:
        return 503;
      case UNAUTHENTICATED:
        return 401;
      case UNKNOWN:
      case INTERNAL:
      case DATA_LOSS:
      default:
        return 500;
    }
  }

  /**
   * The code a client reads from an HTTP status when the response carries no (parsable)
   * {@code Rpc-Error-Code}: yarpc-go's best code for the status, any other 3xx or 4xx is
   * invalid-argument, anything else unknown.
   */
  public static Code fromHttpStatus(int status) {
    switch (status) {
      case 200:
      case 304:
        return Code.OK;
      case 400:
      case 422:
        return Code.INVALID_ARGUMENT;
      case 401:
        return Code.UNAUTHENTICATED;
      case 403:
        return Code.PERMISSION_DENIED;
      case 404:
        return Code.NOT_FOUND;
      case 409:
        return Code.ABORTED;
      case 429:
        return Code.RESOURCE_EXHAUSTED;
      case 499:
        return Code.CANCELLED;
      case 500:
        return Code.UNKNOWN;
      case 501:
        return Code.UNIMPLEMENTED;
      case 503:
        return Code.UNAVAILABLE;
      case 504:
        return Code.DEADLINE_EXCEEDED;
      default:
        return status >= 300 && status < 500 ? Code.INVALID_ARGUMENT : Code.UNKNOWN;
    }
  }
}
