package io.yarpc.transport;

import static java.util.Objects.requireNonNull;

import java.util.concurrent.CompletableFuture;

/**
 * A {@link ServerStream} that hands every call to another one: inbound stream middleware extends it and
 * overrides only what it watches or changes. Ownership is the wrapped stream's: messages sent go to it,
 * messages received come from it. Thread-safe when the wrapped stream is.
 */
public abstract class ForwardingServerStream implements ServerStream {
  private final ServerStream delegate;

  /** A stream forwarding to {@code delegate}. */
  protected ForwardingServerStream(ServerStream delegate) {
    this.delegate = requireNonNull(delegate, "delegate");
  }

  /** The wrapped stream. */
  protected final ServerStream delegate() {
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
  public void sendHeaders(Headers headers) {
    delegate.sendHeaders(headers);
  }

  @Override
  public void setCompression(String compressor) {
    delegate.setCompression(compressor);
  }

  @Override
  public void setTrailers(Headers trailers) {
    delegate.setTrailers(trailers);
  }
}
