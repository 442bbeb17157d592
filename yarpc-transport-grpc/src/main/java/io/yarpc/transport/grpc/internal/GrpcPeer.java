package io.yarpc.transport.grpc.internal;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.yarpc.peer.AbstractPeer;
import io.yarpc.peer.ConnectionStatus;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.AsynchronousSocketChannel;
import java.nio.channels.CompletionHandler;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * One remote address and the grpc-java {@link ManagedChannel} to it. The transport creates it on the first
 * retain of its identifier and counts retains per subscriber; the last release shuts the channel down.
 *
 * <p>Status mirrors the channel's connectivity (docs/spec/wire-grpc.md §4.5): {@code READY} is
 * {@link ConnectionStatus#AVAILABLE}, {@code CONNECTING} is {@link ConnectionStatus#CONNECTING}, anything
 * else {@link ConnectionStatus#UNAVAILABLE}; an idle channel is asked to connect, so a retained peer
 * becomes available without waiting for a first call. Subscribers hear about every status change.
 *
 * <p>{@link #unavailableReason()}: grpc-java does not say why a channel cannot connect, so the peer learns
 * it: a TLS failure is reported by the channel's negotiation ({@link ClientTlsNegotiator}); otherwise a TCP
 * connection of its own tells whether the address is reachable.
 */
public final class GrpcPeer extends AbstractPeer {
  private final InetSocketAddress
      address; // unresolved: resolved only by probeOnce, off grpc's thread
  private final ManagedChannel channel;
  private final Consumer<GrpcPeer> onClose;
  private volatile ConnectionStatus status = ConnectionStatus.UNAVAILABLE;
  private volatile boolean shutdown;
  // why connecting fails (grpc-java does not say): learnt by a TCP connect of our own when the
  // channel
  // enters TRANSIENT_FAILURE; null once the channel is ready
  private volatile String lastConnectFailure;
  // the last TLS failure: stands for grpc-java's failing attempts while the address accepts TCP
  private volatile String tlsFailure;
  private final AtomicBoolean learning = new AtomicBoolean();

  /**
   * A peer for {@code identifier} (at {@code address}, unresolved) that owns the channel {@code channels}
   * makes (given where its TLS failures are to be reported; the channel must not connect before {@link
   * #watch()}); {@code onClose} hears when the peer was closed (its channel may still be finishing calls).
   */
  public GrpcPeer(
      String identifier,
      InetSocketAddress address,
      Function<Consumer<String>, ManagedChannel> channels,
      Consumer<GrpcPeer> onClose) {
    super(identifier);
    this.address = address;
    this.onClose = onClose;
    this.channel = channels.apply(this::tlsFailed);
  }

  /** A connection's TLS failed ({@code reason} describes why); called on the connection's event loop. */
  private void tlsFailed(String reason) {
    tlsFailure = reason;
    lastConnectFailure = reason;
  }

  @Override
  public ConnectionStatus status() {
    return status;
  }

  /** The channel calls to this peer go through. */
  public ManagedChannel channel() {
    return channel;
  }

  /**
   * Starts a call on the channel, unless the peer was released: then nothing reaches grpc-java and core's
   * released error (unavailable, unprocessed) is thrown. Never concurrently with the release ({@link
   * #beginCall}): a call started here began before the channel's shutdown, which lets it finish; grpc-java
   * never refuses one with its own "Channel shutdown invoked".
   *
   * @throws io.yarpc.errors.YarpcException the released error
   */
  <Q, R> ClientCall<Q, R> startCall(
      MethodDescriptor<Q, R> method,
      CallOptions options,
      ClientCall.Listener<R> listener,
      Metadata headers) {
    return beginCall(
        () -> {
          ClientCall<Q, R> call = channel.newCall(method, options);
          call.start(listener, headers);
          return call;
        });
  }

  /** Starts following the channel's connectivity, asking it to connect. */
  public void watch() {
    onStateChange();
  }

  /**
   * A call waits for this peer: an idle channel starts connecting, and one whose attempts fail tries
   * again now instead of after grpc-java's reconnect backoff (1 s, growing to 2 min).
   */
  @Override
  public void connectNow() {
    if (shutdown) {
      return;
    }
    ConnectivityState state = channel.getState(true);
    if (state == ConnectivityState.TRANSIENT_FAILURE) {
      channel.resetConnectBackoff();
    }
  }

  @Override
  public String unavailableReason() {
    return lastConnectFailure;
  }

  private void onStateChange() {
    if (shutdown) {
      return;
    }
    ConnectivityState state = channel.getState(true); // an idle channel starts connecting
    if (state == ConnectivityState.READY) {
      lastConnectFailure = null;
      tlsFailure = null;
    } else if (state == ConnectivityState.TRANSIENT_FAILURE) {
      learnConnectFailure();
    }
    update(map(state));
    if (state != ConnectivityState.SHUTDOWN) {
      channel.notifyWhenStateChanged(state, this::onStateChange);
    }
  }

  /**
   * Connects to the peer's address once, off grpc-java's callback thread (resolving the name may block),
   * to learn why grpc-java cannot; one such probe at a time.
   */
  private void learnConnectFailure() {
    String tls = tlsFailure;
    if (tls != null) {
      lastConnectFailure = tls; // the address accepts TCP: the handshake is what fails
      return;
    }
    if (learning.compareAndSet(false, true)) {
      CompletableFuture.runAsync(this::probeOnce).whenComplete((v, e) -> learning.set(false));
    }
  }

  private void probeOnce() {
    InetSocketAddress resolved = new InetSocketAddress(address.getHostString(), address.getPort());
    try {
      AsynchronousSocketChannel probe = AsynchronousSocketChannel.open();
      probe.connect(
          resolved,
          null,
          new CompletionHandler<Void, Void>() {
            @Override
            public void completed(Void v, Void a) {
              close(probe);
              // reachable now: grpc-java's own attempt failed for another reason (TLS, protocol)
              String tls = tlsFailure;
              lastConnectFailure =
                  tls != null
                      ? tls
                      : "connection attempts fail (the address accepts TCP connections)";
            }

            @Override
            public void failed(Throwable e, Void a) {
              close(probe);
              tlsFailure = null; // the address does not accept TCP (any more)
              String m = e.getMessage();
              lastConnectFailure =
                  (m == null ? e.getClass().getSimpleName() : m) + ": " + identifier();
            }
          });
    } catch (IOException | RuntimeException e) {
      lastConnectFailure = "connection attempts fail";
    }
  }

  private static void close(AsynchronousSocketChannel c) {
    try {
      c.close();
    } catch (IOException ignored) {
      // nothing was sent
    }
  }

  private static ConnectionStatus map(ConnectivityState state) {
    switch (state) {
      case READY:
        return ConnectionStatus.AVAILABLE;
      case CONNECTING:
        return ConnectionStatus.CONNECTING;
      default:
        return ConnectionStatus.UNAVAILABLE;
    }
  }

  private void update(ConnectionStatus next) {
    synchronized (this) {
      if (status == next) {
        return;
      }
      status = next;
    }
    notifySubscribers();
  }

  /** Stops the peer: in-flight calls finish, new calls fail; the status becomes unavailable. */
  @Override
  public void close() {
    shutdown = true;
    channel.shutdown();
    update(ConnectionStatus.UNAVAILABLE);
    onClose.accept(this);
  }

  /** Whether the channel has shut down and finished every call. */
  public boolean isTerminated() {
    return channel.isTerminated();
  }

  /** Waits (at most {@code nanos}) for the channel to terminate, then forces it down. */
  public void awaitTermination(long nanos) throws InterruptedException {
    if (!channel.awaitTermination(nanos, TimeUnit.NANOSECONDS)) {
      channel.shutdownNow();
      channel.awaitTermination(1, TimeUnit.SECONDS);
    }
  }
}
