package io.yarpc.errors;

import java.util.Locale;

/**
 * The 17 YARPC error codes. Numbers equal gRPC's status codes; {@link #wireName()} is the string that
 * YARPC puts on the wire (HTTP {@code Rpc-Error-Code}, logs, metrics).
 */
public enum Code {
  OK(0, "ok", null),
  CANCELLED(1, "cancelled", FaultType.CLIENT),
  UNKNOWN(2, "unknown", FaultType.SERVER),
  INVALID_ARGUMENT(3, "invalid-argument", FaultType.CLIENT),
  DEADLINE_EXCEEDED(4, "deadline-exceeded", FaultType.SERVER),
  NOT_FOUND(5, "not-found", FaultType.CLIENT),
  ALREADY_EXISTS(6, "already-exists", FaultType.CLIENT),
  PERMISSION_DENIED(7, "permission-denied", FaultType.CLIENT),
  RESOURCE_EXHAUSTED(8, "resource-exhausted", FaultType.CLIENT),
  FAILED_PRECONDITION(9, "failed-precondition", FaultType.CLIENT),
  ABORTED(10, "aborted", FaultType.CLIENT),
  OUT_OF_RANGE(11, "out-of-range", FaultType.CLIENT),
  UNIMPLEMENTED(12, "unimplemented", FaultType.CLIENT),
  INTERNAL(13, "internal", FaultType.SERVER),
  UNAVAILABLE(14, "unavailable", FaultType.SERVER),
  DATA_LOSS(15, "data-loss", FaultType.SERVER),
  UNAUTHENTICATED(16, "unauthenticated", FaultType.CLIENT);

  private static final Code[] BY_VALUE = values();

  private final int value;
  private final String wireName;
  private final FaultType faultType;

  Code(int value, String wireName, FaultType faultType) {
    this.value = value;
    this.wireName = wireName;
    this.faultType = faultType;
  }

  /** The numeric code, identical to gRPC's. */
  public int value() {
    return value;
  }

  /** The YARPC name, e.g. {@code "invalid-argument"}. */
  public String wireName() {
    return wireName;
  }

  /** Who is at fault for this code; {@code null} for {@link #OK}. */
  public FaultType faultType() {
    return faultType;
  }

  /** The code with this number, or {@code null} when the number is not one of the 17. */
  public static Code fromValue(int value) {
    return value >= 0 && value < BY_VALUE.length ? BY_VALUE[value] : null;
  }

  /** The code with this YARPC name (case-insensitive), or {@code null} when there is none. */
  public static Code fromWireName(String name) {
    if (name == null) {
      return null;
    }
    String lower = name.toLowerCase(Locale.ROOT);
    for (Code code : BY_VALUE) {
      if (code.wireName.equals(lower)) {
        return code;
      }
    }
    return null;
  }

  /** Returns {@link #wireName()}. */
  @Override
  public String toString() {
    return wireName;
  }
}
