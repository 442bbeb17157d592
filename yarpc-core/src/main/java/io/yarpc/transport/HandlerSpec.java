package io.yarpc.transport;

import static java.util.Objects.requireNonNull;

/**
 * A procedure's handler together with its {@link RpcType}: a unary, oneway or streaming
 * {@link Handler}. Inbounds ask the {@link Router} for one, check {@link #type()}, and call the matching
 * accessor.
 */
public final class HandlerSpec {
  private final RpcType type;
  private final Handler<?, ?> handler;

  private HandlerSpec(RpcType type, Handler<?, ?> handler) {
    this.type = type;
    this.handler = requireNonNull(handler, "handler");
  }

  /** A unary handler. */
  public static HandlerSpec unary(Handler<Request, Response> handler) {
    return new HandlerSpec(RpcType.UNARY, handler);
  }

  /** A oneway handler: its future completes when the handler is done (nobody waits for it). */
  public static HandlerSpec oneway(Handler<Request, Void> handler) {
    return new HandlerSpec(RpcType.ONEWAY, handler);
  }

  /** A streaming handler: its future completes when the stream is over. */
  public static HandlerSpec streaming(Handler<ServerStream, Void> handler) {
    return new HandlerSpec(RpcType.STREAMING, handler);
  }

  /** Which kind of handler this is. */
  public RpcType type() {
    return type;
  }

  /** The unary handler. @throws IllegalStateException when this is not a unary spec */
  @SuppressWarnings("unchecked")
  public Handler<Request, Response> unary() {
    check(RpcType.UNARY);
    return (Handler<Request, Response>) handler;
  }

  /** The oneway handler. @throws IllegalStateException when this is not a oneway spec */
  @SuppressWarnings("unchecked")
  public Handler<Request, Void> oneway() {
    check(RpcType.ONEWAY);
    return (Handler<Request, Void>) handler;
  }

  /** The streaming handler. @throws IllegalStateException when this is not a streaming spec */
  @SuppressWarnings("unchecked")
  public Handler<ServerStream, Void> streaming() {
    check(RpcType.STREAMING);
    return (Handler<ServerStream, Void>) handler;
  }

  private void check(RpcType expected) {
    if (type != expected) {
      throw new IllegalStateException("handler is " + type + ", not " + expected);
    }
  }

  @Override
  public String toString() {
    return "HandlerSpec{" + type + "}";
  }
}
