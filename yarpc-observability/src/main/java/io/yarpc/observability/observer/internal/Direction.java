package io.yarpc.observability.observer.internal;

/** Which side of a call this process is on, with yarpc-go's tag and log value. */
public enum Direction {
  /** This process serves the call. */
  INBOUND("inbound"),
  /** This process makes the call. */
  OUTBOUND("outbound");

  private final String value;

  Direction(String value) {
    this.value = value;
  }

  /** {@code inbound} or {@code outbound}. */
  public String value() {
    return value;
  }
}
