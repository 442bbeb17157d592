package io.yarpc.transport.tchannel;

import static java.util.Objects.requireNonNull;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Checks;
import io.yarpc.internal.Futures;
import io.yarpc.peer.HasPeerChooser;
import io.yarpc.peer.PeerCalls;
import io.yarpc.peer.PeerChooser;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.Body;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.Transport;
import io.yarpc.transport.UnaryOutbound;
import io.yarpc.transport.tchannel.internal.CallCodec;
import io.yarpc.transport.tchannel.internal.Connection;
import io.yarpc.transport.tchannel.internal.TChannelPeer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Sends unary calls over TChannel to the peers its {@link PeerChooser} chooses, on the peers' shared
 * connections (docs/spec/wire-tchannel.md §12.1): service, {@code as}, {@code cn}, {@code sk}, {@code rk}, {@code
 * rd}, ttl from the deadline, arg1 = procedure, arg2 = headers plus {@code $rpc$-caller-procedure}, arg3 =
 * body, with the outbound's {@link ChecksumType} (default CRC-32, as tchannel-go).
 *
 * <p>What comes back: a call res becomes a {@link Response} (code 0x01 flags it as an application error,
 * with the meta of the {@code $rpc$-application-error-*} keys); when arg2 holds {@code $rpc$-error-code} the
 * future fails with a {@link YarpcException} of that code, name and message that carries the response; an
 * error frame fails it with the code of yarpc-go's table (docs/spec/wire-tchannel.md §12.4). Reserved keys are
 * removed from the response headers; a {@code $rpc$-service} other than the request's service is an
 * {@code internal} error.
 *
 * <p>Ownership: the outbound owns the request body once called and releases it after its frames are
 * written (or the call fails before); the caller owns the response body (also the one attached to an
 * exception). Cancelling the returned future sends a cancel frame, and whatever arrives for the call later
 * is released (core's call path cancels it when the deadline passes: the outbound arms no timer of its
 * own). The call fails with {@code unavailable} when its peer's connection dies. The future completes on an event loop thread: chain blocking work with
 * the {@code ...Async} methods. Thread-safe.
 */
public final class TChannelOutbound extends AbstractLifecycle
    implements UnaryOutbound, HasPeerChooser {
  private final TChannelTransport transport;
  private final PeerChooser chooser;
  private final ChecksumType checksumType;

  private TChannelOutbound(Builder b) {
    this.transport = b.transport;
    this.chooser = b.chooser;
    this.checksumType = b.checksumType;
  }

  @Override
  public List<Transport> transports() {
    return List.of(transport);
  }

  @Override
  public String transportName() {
    return CallCodec.TRANSPORT_NAME;
  }

  /** The chooser that picks the peer of each call. */
  @Override
  public PeerChooser chooser() {
    return chooser;
  }

  /** The checksum type of the calls this outbound sends. */
  public ChecksumType checksumType() {
    return checksumType;
  }

  @Override
  protected void doStart() {
    transport.start();
    chooser.start();
  }

  @Override
  protected void doStop() {
    chooser.stop();
  }

  @Override
  public CompletableFuture<Response> call(Request request) {
    requireNonNull(request, "request");
    RequestMeta meta = request.meta();
    Body body = request.body();
    if (!isRunning()) {
      body.release();
      return CompletableFuture.failedFuture(
          Checks.notRunning("tchannel outbound for service \"" + meta.service() + "\""));
    }
    CompletableFuture<Response> result = new CompletableFuture<>();
    AtomicReference<CompletableFuture<?>> stage = new AtomicReference<>();
    result.whenComplete(
        (r, e) -> {
          if (result.isCancelled()) {
            CompletableFuture<?> s = stage.get();
            if (s != null) {
              s.cancel(false);
            }
          }
        });
    // PeerCalls gives up the peer choice when the result completes first; `stage` holds the call
    PeerCalls.choose(
        chooser,
        meta,
        result,
        body::release,
        lease -> {
          if (!transport.owns(lease.peer())) {
            YarpcException notOurs =
                YarpcException.of(
                    Code.INTERNAL,
                    "peer %s was not made by this tchannel transport",
                    lease.peer().identifier());
            lease.finish(notOurs);
            body.release();
            result.completeExceptionally(notOurs);
            return;
          }
          // The dial is the peer's, shared by every call waiting for it: never in `stage`, so that
          // one caller giving up cannot cancel it for the others (a cancelled dial would also
          // orphan its connection).
          TChannelPeer peer = (TChannelPeer) lease.peer();
          CompletableFuture<Connection> connecting = peer.acquire();
          connecting.whenComplete(
              (connection, connectError) -> {
                if (connectError != null) {
                  lease.finish(connectError);
                  body.release();
                  // no connection: the request never left
                  result.completeExceptionally(
                      YarpcException.from(Futures.unwrap(connectError)).withUnprocessed());
                  return;
                }
                if (result.isDone()) {
                  lease.abandon(); // nothing was sent
                  body.release();
                  return;
                }
                CompletableFuture<Response> call = peer.call(connection, meta, body, checksumType);
                stage.set(call);
                if (result.isCancelled()) {
                  call.cancel(false);
                }
                call.whenComplete(
                    (response, callError) -> {
                      lease.finish(callError);
                      if (callError != null) {
                        if (!result.completeExceptionally(Futures.unwrap(callError))) {
                          YarpcException.releaseResponse(
                              callError); // the caller gave up: nobody takes its response
                        }
                      } else if (!result.complete(response)) {
                        response.body().release();
                      }
                    });
              });
        });
    return result;
  }

  @Override
  public String toString() {
    return "TChannelOutbound{" + chooser + "}";
  }

  /** Builds a {@link TChannelOutbound}; not thread-safe. */
  public static final class Builder {
    private final TChannelTransport transport;
    private final PeerChooser chooser;
    private ChecksumType checksumType = ChecksumType.CRC32;

    Builder(TChannelTransport transport, PeerChooser chooser) {
      this.transport = transport;
      this.chooser = chooser;
    }

    /**
     * The checksum the outbound's calls carry: {@link ChecksumType#NONE}, {@link ChecksumType#CRC32}
     * (default, as tchannel-go) or {@link ChecksumType#CRC32C} (tchannel-node's default).
     *
     * @throws IllegalArgumentException for {@link ChecksumType#FARMHASH}, which peers cannot all verify
     */
    public Builder checksumType(ChecksumType checksumType) {
      requireNonNull(checksumType, "checksumType");
      if (checksumType == ChecksumType.FARMHASH) {
        throw new IllegalArgumentException(
            "farmhash checksums are not sent (tchannel-go cannot read them)");
      }
      this.checksumType = checksumType;
      return this;
    }

    /** The outbound, not started. */
    public TChannelOutbound build() {
      return new TChannelOutbound(this);
    }
  }
}
