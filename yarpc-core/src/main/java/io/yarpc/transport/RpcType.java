package io.yarpc.transport;

/** The three kinds of procedure. */
public enum RpcType {
  /** One request, one response. */
  UNARY("Unary"),
  /** One request, an acknowledgement of receipt, no response. */
  ONEWAY("Oneway"),
  /** Messages in both directions over one call. */
  STREAMING("Streaming");

  private final String displayName;

  RpcType(String displayName) {
    this.displayName = displayName;
  }

  /** {@code Unary}, {@code Oneway} or {@code Streaming}, as yarpc-go spells them in messages. */
  @Override
  public String toString() {
    return displayName;
  }
}
