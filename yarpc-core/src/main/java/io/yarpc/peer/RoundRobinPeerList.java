package io.yarpc.peer;

import static java.util.Objects.requireNonNull;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Checks;
import io.yarpc.internal.GoDurations;
import io.yarpc.internal.Timers;
import io.yarpc.peer.internal.CountedLease;
import io.yarpc.peer.internal.Nudger;
import io.yarpc.peer.internal.PendingChoices;
import io.yarpc.peer.internal.Waiter;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.RequestMeta;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A peer list that gives calls to its available peers in turn ({@code round-robin} in yarpc-go).
 *
 * <p>Ownership: the {@link PeerTransport} owns the peers. The list holds identifiers, fed by
 * {@link Builder#peers(List)} and {@link #update(List, List)}; while it runs it retains each of them from
 * the transport exactly once (subscribing to its status changes) and releases each retain exactly once,
 * when the identifier is removed or the list stops. Identifiers added before {@link #start()} are only
 * recorded; a stopped list cannot start again (updates after stop are recorded but retain nothing).
 *
 * <p>Choosing: only {@link ConnectionStatus#AVAILABLE} peers are chosen, in a ring. A peer that becomes
 * available joins the ring just before the cursor (it is the last of the current turn); one that stops
 * being available leaves it. When no peer is available, {@link #choose(RequestMeta)} waits, without
 * blocking a thread, until one is or until the call's deadline (or {@link Builder#defaultChooseTimeout}
 * when the call has none), then fails with {@link Code#UNAVAILABLE}; with
 * {@link Builder#failFast(boolean) fail-fast} it fails at once. Waiting calls are served first come, first
 * served.
 *
 * <p>The caller owns each returned {@link PeerLease} and must {@linkplain PeerLease#finish(Throwable)
 * finish} it once; the list counts the unfinished leases of each peer ({@link #pendingRequests(String)}).
 *
 * <p>Thread-safe: {@code choose}, {@code update}, {@code start}, {@code stop}, transport status
 * notifications and {@code finish} may come from any thread at any time. The transport is called
 * ({@code retainPeer}, {@code releasePeer}) while {@code start}, {@code stop} or {@code update} runs but
 * never while the list's internal lock is held, so a transport may notify status changes synchronously
 * from any thread. A choice that had to wait completes on the thread that made a peer available (usually
 * the transport's) or, on timeout, on the shared timer thread ({@code yarpc-timer}): chain blocking work
 * with the {@code ...Async} methods of {@link CompletableFuture}.
 */
public final class RoundRobinPeerList extends AbstractLifecycle implements PeerChooser, PeerList {
  /** The list's name in error messages and configuration, as in yarpc-go. */
  public static final String NAME = "round-robin";

  /** How long a choice waits for a peer when the call has no deadline, unless the builder says otherwise. */
  public static final Duration DEFAULT_CHOOSE_TIMEOUT = Duration.ofMillis(500);

  private enum State {
    NEW,
    RUNNING,
    STOPPED
  }

  private final PeerTransport transport;
  private final boolean failFast;
  private final Duration defaultChooseTimeout;

  // Two locks, always taken in this order: the object's monitor (start, stop, update: membership
  // and calls to the transport) and then `lock` (ring, waiters, state; never held while calling
  // out). `peers` is changed only while holding both, so it may be read while holding either.
  private final Object lock = new Object();
  private final Map<String, Entry> peers = new LinkedHashMap<>();
  private final List<Entry> ring = new ArrayList<>(); // guarded by lock
  private int next; // guarded by lock; index in ring of the next peer to choose
  private final LinkedHashSet<Waiter> waiters = new LinkedHashSet<>(); // guarded by lock; FIFO
  // While choices wait, unavailable peers are asked to connect now (see Nudger).
  private final Nudger nudger = new Nudger(this::nudge);
  private State state = State.NEW; // guarded by lock; written only under the monitor too

  private RoundRobinPeerList(Builder builder) {
    this.transport = builder.transport;
    this.failFast = builder.failFast;
    this.defaultChooseTimeout = builder.defaultChooseTimeout;
    for (String id : builder.peers) {
      if (peers.put(id, new Entry(id)) != null) {
        throw new IllegalArgumentException(quotedName() + " peer list: duplicate peer " + id);
      }
    }
  }

  /** A builder for a list whose peers {@code transport} owns. */
  public static Builder builder(PeerTransport transport) {
    return new Builder(transport);
  }

  // ---------------------------------------------------------------------------------------------------
  // Lifecycle

  /** Retains every recorded peer from the transport; a peer that is available joins the ring at once. */
  @Override
  protected void doStart() {
    List<Entry> toRetain;
    synchronized (lock) {
      toRetain = new ArrayList<>(peers.values());
      for (Entry e : toRetain) {
        e.active = true;
      }
    }
    for (Entry e : toRetain) {
      retain(e); // a failure makes AbstractLifecycle call doStop, which releases what was retained
    }
    synchronized (lock) {
      state = State.RUNNING;
    }
  }

  /** Fails waiting choices with {@code unavailable} and releases every retained peer once. */
  @Override
  protected void doStop() {
    List<Waiter> orphans;
    synchronized (lock) {
      state = State.STOPPED;
      for (Entry e : peers.values()) {
        e.active = false;
        e.inRing = false;
      }
      ring.clear();
      next = 0;
      orphans = new ArrayList<>(waiters);
      waiters.clear();
    }
    nudger.stop();
    for (Waiter w : orphans) {
      w.cancelTimeout();
      w.future.completeExceptionally(
          YarpcException.of(
              Code.UNAVAILABLE, "%s peer list was stopped while waiting for a peer", quotedName()));
    }
    RuntimeException failure = null;
    for (Entry e : peers.values()) {
      failure = release(e, failure);
    }
    if (failure != null) {
      throw failure;
    }
  }

  // ---------------------------------------------------------------------------------------------------
  // Updates

  /**
   * Removes {@code removals}, then adds {@code additions}. While the list runs, removed peers leave the ring
   * and are released, added peers are retained (and join the ring when available); otherwise the change is
   * only recorded. Adding a present identifier (or the same one twice) or removing an absent one throws an
   * {@link IllegalArgumentException} naming them, after every other identifier has been applied. A failure
   * of the transport to retain or release a peer is thrown after the update too (the identifier is then
   * not in the list).
   */
  @Override
  public synchronized void update(List<String> additions, List<String> removals) {
    requireNonNull(additions, "additions");
    requireNonNull(removals, "removals");
    for (String id : additions) {
      requireNonNull(id, "additions contains null");
    }
    for (String id : removals) {
      requireNonNull(id, "removals contains null");
    }
    boolean running;
    synchronized (lock) {
      running = state == State.RUNNING; // cannot change: start and stop need the monitor we hold
    }
    List<String> absent = new ArrayList<>();
    List<String> present = new ArrayList<>();
    RuntimeException failure = null;

    for (String id : removals) {
      Entry e;
      synchronized (lock) {
        e = peers.remove(id);
        if (e != null) {
          deactivate(e);
        }
      }
      if (e == null) {
        absent.add(id);
      } else {
        failure = release(e, failure);
      }
    }

    for (String id : additions) {
      Entry e = null;
      synchronized (lock) {
        if (!peers.containsKey(id)) {
          e = new Entry(id);
          e.active = running;
          peers.put(id, e);
        }
      }
      if (e == null) {
        present.add(id);
      } else if (running) {
        try {
          retain(e);
        } catch (RuntimeException ex) {
          synchronized (lock) {
            peers.remove(id);
            deactivate(e);
          }
          failure = release(e, failure);
          failure = accumulate(failure, ex);
        }
      }
    }

    if (!absent.isEmpty() || !present.isEmpty()) {
      StringBuilder message = new StringBuilder(quotedName()).append(" peer list update failed:");
      if (!present.isEmpty()) {
        message.append(" cannot add peers already in the list: ").append(present).append(';');
      }
      if (!absent.isEmpty()) {
        message.append(" cannot remove peers not in the list: ").append(absent).append(';');
      }
      message.setLength(message.length() - 1);
      IllegalArgumentException error = new IllegalArgumentException(message.toString());
      if (failure != null) {
        error.addSuppressed(failure);
      }
      throw error;
    }
    if (failure != null) {
      throw failure;
    }
  }

  // ---------------------------------------------------------------------------------------------------
  // Choosing

  /**
   * Returns a lease on the next available peer; see the class comment for waiting and failures. Fails with
   * {@link Code#UNAVAILABLE} before {@link #start()}, after {@link #stop()}, or when no peer becomes
   * available in time. Cancelling the returned future abandons the wait. The caller must finish the lease
   * once.
   */
  @Override
  public CompletableFuture<PeerLease> choose(RequestMeta meta) {
    requireNonNull(meta, "meta");
    long startNanos = System.nanoTime();
    Waiter waiter;
    synchronized (lock) {
      if (state != State.RUNNING) {
        return CompletableFuture.failedFuture(
            YarpcException.of(
                Code.UNAVAILABLE,
                "%s peer list %s",
                quotedName(),
                state == State.NEW ? "has not been started" : "has been stopped"));
      }
      if (!ring.isEmpty()) {
        return CompletableFuture.completedFuture(pickLocked());
      }
      if (failFast) {
        return CompletableFuture.failedFuture(noPeerErrorLocked(0));
      }
      Deadline deadline =
          meta.deadline() != null ? meta.deadline() : Deadline.after(defaultChooseTimeout);
      long remaining = deadline.remainingNanos();
      if (remaining <= 0) {
        return CompletableFuture.failedFuture(noPeerErrorLocked(0));
      }
      waiter = new Waiter(startNanos);
      waiters.add(waiter);
      // The timeout task takes `lock`, so it cannot see the waiter before `timeout` is set.
      waiter.timeout =
          Timers.schedule(
              () -> timeOut(waiter),
              meta.deadline() != null ? remaining + PendingChoices.WAIT_GRACE_NANOS : remaining);
    }
    nudger.start();
    waiter.future.whenComplete(
        (lease, error) -> {
          if (error instanceof CancellationException) {
            abandon(waiter);
          }
        });
    return waiter.future;
  }

  // ---------------------------------------------------------------------------------------------------
  // Introspection

  /**
   * How many leases on the peer {@code identifier} are not finished yet; 0 when it is not in the list.
   * Counts start again from 0 when an identifier is removed and added again.
   */
  public int pendingRequests(String identifier) {
    requireNonNull(identifier, "identifier");
    Entry e;
    synchronized (lock) {
      e = peers.get(identifier);
    }
    return e == null ? 0 : e.pending.get();
  }

  /**
   * Kind {@value #NAME}; every identifier in the list, in the order it was added, with its peer's status
   * and unavailable reason (read outside the list's lock) and its {@linkplain #pendingRequests(String)
   * pending requests}. A peer the list does not hold (before {@link #start()}, after {@link #stop()}) is
   * {@code UNAVAILABLE} with the reason that the list is not running.
   */
  @Override
  public ChooserStatus introspect() {
    List<Entry> entries;
    List<Peer> held = new ArrayList<>();
    State current;
    synchronized (lock) {
      entries = new ArrayList<>(peers.values());
      for (Entry e : entries) {
        held.add(e.active ? e.peer : null);
      }
      current = state;
    }
    List<PeerStatus> statuses = new ArrayList<>(entries.size());
    for (int i = 0; i < entries.size(); i++) {
      Entry e = entries.get(i);
      Peer p = held.get(i);
      statuses.add(
          p != null
              ? PeerStatus.of(p, e.pending.get())
              : new PeerStatus(
                  e.id,
                  ConnectionStatus.UNAVAILABLE,
                  current == State.STOPPED
                      ? "the peer list has been stopped"
                      : "the peer list has not been started",
                  e.pending.get()));
    }
    return new ChooserStatus(NAME, statuses);
  }

  /** The identifiers of the peers that can be chosen now, in the order they will be chosen. */
  public List<String> availablePeers() {
    synchronized (lock) {
      List<String> ids = new ArrayList<>(ring.size());
      for (int i = 0; i < ring.size(); i++) {
        ids.add(ring.get((next + i) % ring.size()).id);
      }
      return Collections.unmodifiableList(ids);
    }
  }

  /** The identifiers in the list that cannot be chosen now (not available, or the list is not running). */
  public List<String> unavailablePeers() {
    synchronized (lock) {
      List<String> ids = new ArrayList<>();
      for (Entry e : peers.values()) {
        if (!e.inRing) {
          ids.add(e.id);
        }
      }
      return Collections.unmodifiableList(ids);
    }
  }

  /** Every identifier in the list, in the order it was added. */
  public List<String> peerIdentifiers() {
    synchronized (lock) {
      return List.copyOf(peers.keySet());
    }
  }

  @Override
  public String toString() {
    synchronized (lock) {
      return "RoundRobinPeerList{peers="
          + peers.size()
          + ", available="
          + ring.size()
          + ", waiting="
          + waiters.size()
          + ", state="
          + state
          + "}";
    }
  }

  // ---------------------------------------------------------------------------------------------------
  // Internals

  /** Retains {@code e}'s peer (under the monitor, not under {@code lock}) and syncs it with its status. */
  private void retain(Entry e) {
    Peer peer = transport.retainPeer(e.id, e);
    e.retained = true;
    if (peer == null) {
      throw new IllegalStateException(transport + " returned no peer for " + e.id);
    }
    synchronized (lock) {
      if (e.active) {
        e.peer = peer;
      }
    }
    refresh(e);
  }

  /** Releases {@code e}'s retain if it holds one; returns {@code failure} plus any new failure. */
  private RuntimeException release(Entry e, RuntimeException failure) {
    if (!e.retained) {
      return failure;
    }
    e.retained = false;
    synchronized (lock) {
      e.peer = null;
    }
    try {
      transport.releasePeer(e.id, e);
      return failure;
    } catch (RuntimeException ex) {
      return accumulate(failure, ex);
    }
  }

  private static RuntimeException accumulate(RuntimeException first, RuntimeException next) {
    if (first == null) {
      return next;
    }
    first.addSuppressed(next);
    return first;
  }

  /**
   * Puts {@code e} in or out of the ring according to its peer's status. The status is read outside the
   * lock (a transport may guard it with its own lock) and read again after applying it, so concurrent
   * notifications cannot leave a stale status behind.
   */
  private void refresh(Entry e) {
    while (true) {
      Peer peer;
      synchronized (lock) {
        peer = e.peer;
        if (!e.active || peer == null) {
          return;
        }
      }
      boolean available = peer.status() == ConnectionStatus.AVAILABLE;
      List<Grant> grants = null;
      synchronized (lock) {
        if (!e.active || e.peer != peer) {
          return;
        }
        if (available && !e.inRing) {
          ring.add(next, e); // just before the cursor: last of the current turn
          next = (next + 1) % ring.size();
          e.inRing = true;
          grants = serveWaitersLocked();
        } else if (!available && e.inRing) {
          removeFromRingLocked(e);
        }
      }
      if (grants != null) {
        for (Grant grant : grants) {
          grant.deliver();
        }
      }
      if ((peer.status() == ConnectionStatus.AVAILABLE) == available) {
        return;
      }
    }
  }

  /** Hands available peers to waiting choices, oldest first; the caller completes them outside the lock. */
  private List<Grant> serveWaitersLocked() {
    List<Grant> grants = new ArrayList<>();
    Iterator<Waiter> it = waiters.iterator();
    while (it.hasNext() && !ring.isEmpty()) {
      Waiter w = it.next();
      it.remove();
      if (w.future.isDone()) {
        continue; // cancelled by its caller
      }
      w.cancelTimeout();
      grants.add(new Grant(w, pickLocked()));
    }
    return grants;
  }

  private CountedLease pickLocked() {
    Entry e = ring.get(next);
    next = (next + 1) % ring.size();
    return CountedLease.start(e.peer, e.pending);
  }

  private void deactivate(Entry e) {
    e.active = false;
    if (e.inRing) {
      removeFromRingLocked(e);
    }
  }

  private void removeFromRingLocked(Entry e) {
    int index = ring.indexOf(e);
    ring.remove(index);
    e.inRing = false;
    if (index < next) {
      next--;
    }
    if (next >= ring.size()) {
      next = 0;
    }
  }

  private void timeOut(Waiter w) {
    YarpcException error;
    synchronized (lock) {
      if (!waiters.remove(w)) {
        return; // served, cancelled or failed by stop in the meantime
      }
      error = noPeerErrorLocked(System.nanoTime() - w.startNanos);
    }
    w.future.completeExceptionally(error);
  }

  private void abandon(Waiter w) {
    synchronized (lock) {
      waiters.remove(w);
    }
    w.cancelTimeout();
  }

  /** While choices wait: asks every peer of the list that is not available to connect now. */
  private void nudge() {
    List<Peer> members = new ArrayList<>();
    synchronized (lock) {
      if (waiters.isEmpty() || state != State.RUNNING) {
        nudger.stop();
        return;
      }
      for (Entry e : peers.values()) {
        if (e.active && e.peer != null) {
          members.add(e.peer);
        }
      }
    }
    // Outside the lock: a transport may guard status with its own lock, and may report a status
    // change synchronously (which takes ours).
    for (Peer p : members) {
      if (p.status() != ConnectionStatus.AVAILABLE) {
        p.connectNow();
      }
    }
  }

  /**
   * While choices wait: {@code none of the N peers of the "round-robin" peer list is available}, with
   * the first known reason of a peer ({@code peer 10.0.0.1:80 is unreachable: Connection refused});
   * else null.
   */
  @Override
  public String waitReason() {
    String reason = null;
    int count;
    List<Peer> members = new ArrayList<>();
    synchronized (lock) {
      if (!ring.isEmpty() || state != State.RUNNING) {
        return null;
      }
      count = peers.size();
      for (Entry e : peers.values()) {
        if (e.peer != null) {
          members.add(e.peer);
        }
      }
    }
    for (Peer p : members) { // outside the lock, as in nudge()
      String r = p.unavailableReason();
      if (r != null) {
        reason = "peer " + p.identifier() + " is unreachable: " + r;
        break;
      }
    }
    String none =
        count == 0
            ? quotedName() + " peer list has no peers"
            : "none of the " + count + " peers of the " + quotedName() + " peer list is available";
    return reason == null ? none : none + "; " + reason;
  }

  /** The {@code unavailable} error of yarpc-go's abstract list, for the current number of peers. */
  private YarpcException noPeerErrorLocked(long waitedNanos) {
    int count = peers.size();
    String waited = formatDuration(waitedNanos);
    String message;
    if (count == 0) {
      message =
          "has no peers, "
              + (failFast
                  ? "did not wait for peers to be added (fail-fast is enabled)"
                  : "waited for peers to be added but timed out (fail-fast is not enabled): "
                      + waited);
    } else {
      message =
          (count == 1
                  ? "has 1 peer but it is not responsive, "
                  : "has " + count + " peers but none are responsive, ")
              + (failFast
                  ? "did not wait for a connection to open (fail-fast is enabled)"
                  : "timed out waiting for a connection to open (fail-fast is not enabled): "
                      + waited);
    }
    return YarpcException.of(Code.UNAVAILABLE, quotedName() + " peer list " + message);
  }

  /** Go-like duration text rounded to the millisecond: {@code 0s}, {@code 51ms}, {@code 1.5s}. */
  static String formatDuration(long nanos) {
    return GoDurations.format(Duration.ofMillis(Math.max(0, (nanos + 500_000) / 1_000_000)));
  }

  private static String quotedName() {
    return "\"" + NAME + "\"";
  }

  /**
   * One identifier's membership in the list, and the subscriber the list registers for it with the
   * transport (one per membership, so late notifications of a removed peer are recognised and ignored).
   */
  private final class Entry implements PeerSubscriber {
    final String id;
    final AtomicInteger pending = new AtomicInteger();
    boolean retained; // guarded by the monitor: holds a retain the list must release
    boolean active; // guarded by lock: retained or being retained, and still in the list
    boolean inRing; // guarded by lock
    Peer peer; // guarded by lock; set while retained

    Entry(String id) {
      this.id = id;
    }

    @Override
    public void onStatusChanged(Peer changed) {
      synchronized (lock) {
        if (!active) {
          return;
        }
        if (peer == null) {
          peer = changed; // a notification that overtook retainPeer's return
        }
      }
      refresh(this);
    }

    @Override
    public String toString() {
      return "RoundRobinPeerList.Entry{" + id + "}";
    }
  }

  /** A lease chosen for a waiter under the lock, delivered after it. */
  private static final class Grant {
    final Waiter waiter;
    final CountedLease lease;

    Grant(Waiter waiter, CountedLease lease) {
      this.waiter = waiter;
      this.lease = lease;
    }

    void deliver() {
      if (!waiter.future.complete(lease)) {
        lease.finish(null); // cancelled meanwhile: give the pending count back
      }
    }
  }

  /** Builds a {@link RoundRobinPeerList}; not thread-safe. */
  public static final class Builder {
    private final PeerTransport transport;
    private List<String> peers = List.of();
    private boolean failFast;
    private Duration defaultChooseTimeout = DEFAULT_CHOOSE_TIMEOUT;

    private Builder(PeerTransport transport) {
      this.transport = requireNonNull(transport, "transport");
    }

    /** The initial identifiers (no duplicates), retained at start; more come with {@link #update}. */
    public Builder peers(List<String> identifiers) {
      requireNonNull(identifiers, "identifiers");
      for (String id : identifiers) {
        requireNonNull(id, "identifiers contains null");
      }
      this.peers = List.copyOf(identifiers);
      return this;
    }

    /** When true, a choice with no available peer fails at once instead of waiting; default false. */
    public Builder failFast(boolean failFast) {
      this.failFast = failFast;
      return this;
    }

    /** How long a choice waits for a peer when the call has no deadline; positive, default 500 ms. */
    public Builder defaultChooseTimeout(Duration timeout) {
      this.defaultChooseTimeout = Checks.positive(timeout, "defaultChooseTimeout");
      return this;
    }

    /** The list, not started. Throws {@link IllegalArgumentException} when the peers hold a duplicate. */
    public RoundRobinPeerList build() {
      return new RoundRobinPeerList(this);
    }
  }
}
