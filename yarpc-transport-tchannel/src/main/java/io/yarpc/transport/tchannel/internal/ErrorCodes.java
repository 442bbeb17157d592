package io.yarpc.transport.tchannel.internal;

import io.yarpc.errors.Code;

/**
 * TChannel system error codes (the {@code code} byte of an error frame) and their mapping to and from
 * YARPC codes, as yarpc-go's {@code transport/tchannel} does it (docs/spec/wire-tchannel.md §8 and §12.4).
 */
final class ErrorCodes {
  /** 0x01 timeout: the ttl expired. */
  public static final int TIMEOUT = 0x01;

  /** 0x02 cancelled: a cancel frame ended the call. */
  public static final int CANCELLED = 0x02;

  /** 0x03 busy: overloaded, retry elsewhere. */
  public static final int BUSY = 0x03;

  /** 0x04 declined: refused for a reason other than load. */
  public static final int DECLINED = 0x04;

  /** 0x05 unexpected error: the handler failed. */
  public static final int UNEXPECTED = 0x05;

  /** 0x06 bad request: malformed or unroutable. */
  public static final int BAD_REQUEST = 0x06;

  /** 0x07 network error. */
  public static final int NETWORK = 0x07;

  /** 0x08 unhealthy (tchannel-go has no constant for it; yarpc-go maps it to internal). */
  public static final int UNHEALTHY = 0x08;

  /** 0xFF fatal protocol error: the connection closes after this frame. */
  public static final int FATAL = 0xFF;

  private ErrorCodes() {}

  /** The error frame code the server sends for a YARPC error that is not an application error. */
  public static int fromCode(Code code) {
    switch (code) {
      case CANCELLED:
        return CANCELLED;
      case INVALID_ARGUMENT:
      case UNIMPLEMENTED:
        return BAD_REQUEST;
      case DEADLINE_EXCEEDED:
        return TIMEOUT;
      case UNAVAILABLE:
        return DECLINED;
      case DATA_LOSS:
        return FATAL;
      case RESOURCE_EXHAUSTED:
        return BUSY;
      default:
        return UNEXPECTED;
    }
  }

  /** The YARPC code a client reports for an error frame's code. */
  public static Code toCode(int errorCode) {
    switch (errorCode) {
      case TIMEOUT:
        return Code.DEADLINE_EXCEEDED;
      case CANCELLED:
        return Code.CANCELLED;
      case BUSY:
        return Code.RESOURCE_EXHAUSTED;
      case DECLINED:
      case NETWORK:
        return Code.UNAVAILABLE;
      case BAD_REQUEST:
        return Code.INVALID_ARGUMENT;
      default:
        return Code.INTERNAL;
    }
  }

  /** Whether the code has a YARPC mapping; others become {@code internal} with yarpc-go's remark. */
  public static boolean isMapped(int errorCode) {
    return errorCode >= TIMEOUT && errorCode <= NETWORK || errorCode == FATAL;
  }

  /** The code's name, as tchannel-node spells it. */
  public static String name(int errorCode) {
    switch (errorCode) {
      case TIMEOUT:
        return "Timeout";
      case CANCELLED:
        return "Cancelled";
      case BUSY:
        return "Busy";
      case DECLINED:
        return "Declined";
      case UNEXPECTED:
        return "UnexpectedError";
      case BAD_REQUEST:
        return "BadRequest";
      case NETWORK:
        return "NetworkError";
      case UNHEALTHY:
        return "Unhealthy";
      case FATAL:
        return "ProtocolError";
      default:
        return "0x" + Integer.toHexString(errorCode);
    }
  }
}
