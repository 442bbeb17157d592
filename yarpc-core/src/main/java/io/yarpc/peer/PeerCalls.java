package io.yarpc.peer;

import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Futures;
import io.yarpc.peer.internal.PendingChoices;
import io.yarpc.transport.RequestMeta;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * The peer step of the outbound call path, the same for every transport: ask the {@link PeerChooser}
 * for a peer, give up the choice when the call ends first, and hand the lease to the transport's wire
 * work only while the call still wants it. Transports call {@link #choose} and keep only what happens
 * on the chosen peer; the lease they are given is theirs to {@link PeerLease#finish finish} exactly
 * once.
 *
 * <p>Stateless and thread-safe.
 */
public final class PeerCalls {
  private PeerCalls() {}

  /**
   * Chooses a peer for the call whose caller-facing future is {@code result}:
   *
   * <ul>
   *   <li>a chooser that throws or fails fails {@code result} with the {@link YarpcException} (others
   *       become {@code unknown}), after {@code releaseRequest};
   *   <li>while the choice waits, a deadline that passes says why in its error ({@link
   *       PeerChooser#waitReason()});
   *   <li>when {@code result} completes first (the caller cancelled, or the deadline passed), the choice
   *       is cancelled, and a lease that arrives anyway is {@linkplain PeerLease#abandon() abandoned} at
   *       once, after {@code releaseRequest};
   *   <li>a lease on an {@link AbstractPeer} released since it was chosen (a list dropped the peer while
   *       the call waited) is abandoned and {@code result} fails with the peer's {@linkplain
   *       AbstractPeer#releasedError() released error}, after {@code releaseRequest}; the transport's
   *       {@link AbstractPeer#beginCall} refuses a release that comes later;
   *   <li>otherwise {@code onChosen} gets the lease, on the thread that completed the choice, and owns
   *       it and the request from then on. {@code result} may still complete while it runs (the deadline,
   *       the caller): it registers its own abort first, then checks {@code result} again.
   * </ul>
   *
   * @return the choice, for transports that also want to cancel it themselves
   */
  public static CompletableFuture<PeerLease> choose(
      PeerChooser chooser,
      RequestMeta meta,
      CompletableFuture<?> result,
      Runnable releaseRequest,
      Consumer<PeerLease> onChosen) {
    CompletableFuture<PeerLease> choice;
    try {
      choice = chooser.choose(meta);
      if (choice == null) {
        throw new NullPointerException("peer chooser " + chooser + " returned no future");
      }
    } catch (RuntimeException e) {
      choice = CompletableFuture.failedFuture(e);
    }
    CompletableFuture<PeerLease> chosen = choice;
    if (!chosen.isDone()) {
      // the call waits for a peer: its deadline error says why (see PendingChoices)
      PendingChoices.add(result, chooser);
      chosen.whenComplete((lease, error) -> PendingChoices.remove(result));
    }
    result.whenComplete(
        (v, e) -> {
          if (!chosen.isDone()) {
            chosen.cancel(false);
          }
        });
    chosen.whenComplete(
        (lease, error) -> {
          if (error != null) {
            releaseRequest.run();
            result.completeExceptionally(
                YarpcException.from(Futures.unwrap(error)).withUnprocessed());
          } else if (result.isDone()) {
            lease.abandon(); // nothing was sent: the peer did nothing wrong (or right)
            releaseRequest.run();
          } else if (lease.peer() instanceof AbstractPeer
              && ((AbstractPeer) lease.peer()).isReleased()) {
            lease.abandon(); // chosen before its release: nothing was sent
            releaseRequest.run();
            result.completeExceptionally(((AbstractPeer) lease.peer()).releasedError());
          } else {
            try {
              onChosen.accept(lease);
            } catch (
                RuntimeException e) { // the wire work broke before it took the call: end it here
              lease.finish(e);
              releaseRequest.run();
              result.completeExceptionally(YarpcException.from(e));
            }
          }
        });
    return chosen;
  }
}
