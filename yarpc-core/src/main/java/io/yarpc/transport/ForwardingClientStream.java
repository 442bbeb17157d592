package io.yarpc.transport;

import static java.util.Objects.requireNonNull;

import java.util.concurrent.CompletableFuture;

/**
 * A {@link ClientStream} that hands every call to another one: outbound stream middleware extends it and
 * overrides only what it watches or changes (as grpc-java's {@code ForwardingClientCall}). Ownership is
 * the wrapped stream's: messages sent go to it, messages received come from it, and whoever holds this
 * stream ends it as {@link ClientStream} says. Thread-safe when the wrapped stream is.
 */
public abstract class ForwardingClientStream implements ClientStream {
  private final ClientStream delegate;

  /** A stream forwarding to {@code delegate}. */
  protected ForwardingClientStream(ClientStream delegate) {
    this.delegate = requireNonNull(delegate, "delegate");
  }

  /** The wrapped stream. */
  protected final ClientStream delegate() {
    return delegate;
  }

  @Override
  public RequestMeta meta() {
    return delegate.meta();
  }

  @Override
  public CompletableFuture<Void> send(StreamMessage message) {
    return delegate.send(message);
  }

  @Override
  public CompletableFuture<StreamMessage> receive() {
    return delegate.receive();
  }

  @Override
  public CompletableFuture<Headers> headers() {
    return delegate.headers();
  }

  @Override
  public CompletableFuture<Headers> trailers() {
    return delegate.trailers();
  }

  @Override
  public void halfClose() {
    delegate.halfClose();
  }

  @Override
  public void cancel() {
    delegate.cancel();
  }
}
