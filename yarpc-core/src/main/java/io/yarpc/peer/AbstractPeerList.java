package io.yarpc.peer;

import static java.util.Objects.requireNonNull;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Checks;
import io.yarpc.peer.internal.CountedLease;
import io.yarpc.peer.internal.LeaseOutcome;
import io.yarpc.peer.internal.Member;
import io.yarpc.peer.internal.NoPeerErrors;
import io.yarpc.peer.internal.OutlierDetector;
import io.yarpc.peer.internal.PeerHealth;
import io.yarpc.peer.internal.PeerStrategy;
import io.yarpc.peer.internal.PendingChoices;
import io.yarpc.peer.internal.Scheduler;
import io.yarpc.peer.internal.WaitQueue;
import io.yarpc.peer.internal.Waiter;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.RequestMeta;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What every provided peer list does, whatever its strategy: membership, retaining peers from the
 * transport, availability, waiting for a peer, fail-fast, pending-request counts and introspection (as
 * yarpc-go's {@code abstractlist}), and outlier ejection. Each subclass adds only which available peer a
 * call gets: {@link RoundRobinPeerList}, {@link FewestPendingPeerList}, {@link RandomPeerList}, {@link
 * TwoRandomChoicesPeerList}, {@link HashRingPeerList}. Not extensible outside this package; a list of
 * one's own implements {@link PeerChooser} and {@link PeerList}.
 *
 * <p><b>Ownership.</b> The {@link PeerTransport} owns the peers. The list holds identifiers, fed by
 * {@link Builder#peers(List)} and {@link #update(List, List)}; while it runs it retains each of them from
 * the transport exactly once (subscribing to its status changes) and releases each retain exactly once,
 * when the identifier is removed or the list stops. Identifiers added before {@link #start()} are only
 * recorded; a stopped list cannot start again (updates after stop are recorded but retain nothing).
 *
 * <p><b>Rotation.</b> The strategy chooses only among the peers <em>in rotation</em>: while the list
 * runs, those whose transport reports {@link ConnectionStatus#AVAILABLE} and that outlier detection does
 * not hold out. A peer enters rotation when it becomes available and leaves it when it stops being
 * available, is ejected or is removed. One private method decides it ({@code inRotation}; its comment
 * describes the seam).
 *
 * <p><b>Outlier ejection.</b> Off unless {@link Builder#outlierDetection} is set: then a peer whose calls
 * keep failing is ejected from rotation for a while and returns through a probe call ({@link
 * OutlierDetection} says what counts, for how long, and how many peers may be out at once). Introspection
 * shows an ejected peer as {@link ConnectionStatus#UNAVAILABLE} with the reason.
 *
 * <p><b>Waiting.</b> When no peer is in rotation, {@link #choose(RequestMeta)} waits, without blocking a
 * thread, until one is or until the call's deadline (or {@link Builder#defaultChooseTimeout} when the
 * call has none), then fails with {@link Code#UNAVAILABLE}; with {@link Builder#failFast(boolean)
 * fail-fast} it fails at once. Waiting calls are served first come, first served. While calls wait, the
 * list's unavailable peers are asked to {@linkplain Peer#connectNow() connect now} every 100 ms.
 *
 * <p><b>Leases.</b> The caller owns each returned {@link PeerLease} and must {@linkplain
 * PeerLease#finish(Throwable) finish} (or {@linkplain PeerLease#abandon() abandon}) it once; the list
 * counts the unfinished leases of each peer ({@link #pendingRequests(String)}), strategies that balance
 * load read those counts, and outlier detection learns each call's outcome from them.
 *
 * <p><b>Thread-safety.</b> {@code choose}, {@code update}, {@code start}, {@code stop}, transport status
 * notifications and {@code finish} may come from any thread at any time; finishing a lease takes the
 * list's lock only when outlier detection must decide (a probe ended, or a peer tripped a limit). The
 * transport is called ({@code retainPeer}, {@code releasePeer}) while {@code start}, {@code stop} or
 * {@code update} runs but never while the list's internal lock is held, so a transport may notify status
 * changes synchronously from any thread. A choice that had to wait completes on the thread that made a
 * peer available (usually the transport's; or the one that finished a successful probe call, or the
 * timer thread that ended an ejection) or, on timeout, on the shared timer thread ({@code yarpc-timer}):
 * chain blocking work with the {@code ...Async} methods of {@link CompletableFuture}.
 */
public abstract class AbstractPeerList extends AbstractLifecycle implements PeerChooser, PeerList {
  /** How long a choice waits for a peer when the call has no deadline, unless the builder says otherwise. */
  public static final Duration DEFAULT_CHOOSE_TIMEOUT = Duration.ofMillis(500);

  private enum State {
    NEW,
    RUNNING,
    STOPPED
  }

  private final String name;
  private final PeerTransport transport;
  private final boolean failFast;
  private final Duration defaultChooseTimeout;
  private final OutlierDetection outlierDetection; // null when off
  private final OutlierDetector detector; // null when off; its ...Locked methods run under `lock`

  // Two locks, always taken in this order: the object's monitor (start, stop, update: membership
  // and calls to the transport) and then `lock` (strategy, waiters, state; never held while calling
  // out). `peers` is changed only while holding both, so it may be read while holding either.
  private final Object lock = new Object();
  private final Map<String, Entry> peers = new LinkedHashMap<>();
  private final PeerStrategy strategy; // guarded by lock
  private int inRotation; // guarded by lock: how many members the strategy holds
  private final WaitQueue waiters; // guarded by lock
  private State state = State.NEW; // guarded by lock; written only under the monitor too

  AbstractPeerList(String name, Builder<?, ?> builder, PeerStrategy strategy) {
    this.name = name;
    this.transport = builder.transport;
    this.failFast = builder.failFast;
    this.defaultChooseTimeout = builder.defaultChooseTimeout;
    this.outlierDetection = builder.outlierDetection;
    this.detector =
        builder.outlierDetection == null
            ? null
            : new OutlierDetector(builder.outlierDetection, builder.scheduler);
    this.strategy = strategy;
    this.waiters =
        new WaitQueue(
            lock,
            this::nudge,
            w ->
                NoPeerErrors.unavailable(
                    name, peers.size(), false, System.nanoTime() - w.startNanos));
    for (String id : builder.peers) {
      if (peers.put(id, new Entry(id)) != null) {
        throw new IllegalArgumentException(quotedName() + " peer list: duplicate peer " + id);
      }
    }
  }

  /** The list's name in configuration, introspection and errors, as in yarpc-go ({@code round-robin}). */
  public final String name() {
    return name;
  }

  /** The list's outlier detection settings, or null when it is off. */
  public final OutlierDetection outlierDetection() {
    return outlierDetection;
  }

  // ---------------------------------------------------------------------------------------------------
  // Lifecycle

  /** Retains every recorded peer from the transport; a peer that is available enters rotation at once. */
  @Override
  protected final void doStart() {
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
  protected final void doStop() {
    List<Waiter> orphans;
    synchronized (lock) {
      state = State.STOPPED;
      for (Entry e : peers.values()) {
        deactivateLocked(e);
      }
      orphans = waiters.drainLocked();
    }
    waiters.stopNudging();
    for (Waiter w : orphans) {
      w.fail(
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
   * Removes {@code removals}, then adds {@code additions}. While the list runs, removed peers leave
   * rotation and are released, added peers are retained (and enter rotation when available); otherwise
   * the change is only recorded. Adding a present identifier (or the same one twice) or removing an
   * absent one throws an {@link IllegalArgumentException} naming them, after every other identifier has
   * been applied. A failure of the transport to retain or release a peer is thrown after the update too
   * (the identifier is then not in the list).
   */
  @Override
  public final synchronized void update(List<String> additions, List<String> removals) {
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
          deactivateLocked(e);
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
            deactivateLocked(e);
          }
          failure = accumulate(release(e, failure), ex);
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
   * Returns a lease on the peer the list's strategy picks among those in rotation; see the class comment
   * for waiting and failures. Fails with {@link Code#UNAVAILABLE} before {@link #start()}, after {@link
   * #stop()}, or when no peer enters rotation in time, and with {@link Code#INVALID_ARGUMENT} when the
   * strategy refuses what the call carries (a {@link HashRingPeerList}'s offset header). Cancelling the
   * returned future abandons the wait. The caller must finish the lease once.
   */
  @Override
  public final CompletableFuture<PeerLease> choose(RequestMeta meta) {
    requireNonNull(meta, "meta");
    try {
      strategy.validate(meta);
    } catch (YarpcException e) {
      return CompletableFuture.failedFuture(e);
    }
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
      if (inRotation > 0) {
        return CompletableFuture.completedFuture(leaseLocked(meta));
      }
      if (failFast) {
        return CompletableFuture.failedFuture(
            NoPeerErrors.unavailable(name, peers.size(), true, 0));
      }
      Deadline deadline =
          meta.deadline() != null ? meta.deadline() : Deadline.after(defaultChooseTimeout);
      long remaining = deadline.remainingNanos();
      if (remaining <= 0) {
        return CompletableFuture.failedFuture(
            NoPeerErrors.unavailable(name, peers.size(), false, 0));
      }
      waiter =
          waiters.addLocked(
              meta,
              startNanos,
              meta.deadline() != null ? remaining + PendingChoices.WAIT_GRACE_NANOS : remaining);
    }
    waiters.watch(waiter);
    return waiter.future;
  }

  /**
   * A lease on the strategy's pick, or null when no member is in rotation (a probe may take the last one
   * out while waiting choices are served). A member on probation gets its probe call and leaves rotation
   * until the probe ends.
   */
  private CountedLease leaseLocked(RequestMeta meta) {
    if (inRotation == 0) {
      return null;
    }
    Entry e = (Entry) strategy.choose(meta);
    if (e.health == null) {
      return CountedLease.start(e.peer, e.pendingCounter());
    }
    boolean probe = detector.startProbeLocked(e.health);
    if (probe) {
      syncLocked(e); // leaves rotation: no grants, nothing entered
    }
    return CountedLease.start(e.peer, e.pendingCounter(), e, meta.deadline(), probe);
  }

  // ---------------------------------------------------------------------------------------------------
  // Introspection

  /**
   * How many leases on the peer {@code identifier} are not finished yet; 0 when it is not in the list.
   * Counts start again from 0 when an identifier is removed and added again.
   */
  public final int pendingRequests(String identifier) {
    requireNonNull(identifier, "identifier");
    Entry e;
    synchronized (lock) {
      e = peers.get(identifier);
    }
    return e == null ? 0 : e.pendingRequests();
  }

  /**
   * Kind {@link #name()}; every identifier in the list, in the order it was added, with its peer's
   * status and unavailable reason (read outside the list's lock) and its {@linkplain
   * #pendingRequests(String) pending requests}. A peer the list does not hold (before {@link #start()},
   * after {@link #stop()}) is {@code UNAVAILABLE} with the reason that the list is not running; a peer
   * outlier detection holds out is {@code UNAVAILABLE} with the reason it is out ({@code ejected for 30s
   * after 5 consecutive failures (last: ...); on probation in 12s}).
   */
  @Override
  public final ChooserStatus introspect() {
    List<Entry> entries;
    List<Peer> held = new ArrayList<>();
    List<String> heldOut = new ArrayList<>();
    State current;
    synchronized (lock) {
      entries = new ArrayList<>(peers.values());
      for (Entry e : entries) {
        held.add(e.active ? e.peer : null);
        heldOut.add(e.active && e.health != null ? detector.describeLocked(e.health) : null);
      }
      current = state;
    }
    List<PeerStatus> statuses = new ArrayList<>(entries.size());
    for (int i = 0; i < entries.size(); i++) {
      Entry e = entries.get(i);
      Peer p = held.get(i);
      if (p == null) {
        statuses.add(
            new PeerStatus(
                e.identifier(),
                ConnectionStatus.UNAVAILABLE,
                current == State.STOPPED
                    ? "the peer list has been stopped"
                    : "the peer list has not been started",
                e.pendingRequests()));
      } else if (heldOut.get(i) != null) {
        statuses.add(
            new PeerStatus(
                e.identifier(), ConnectionStatus.UNAVAILABLE, heldOut.get(i), e.pendingRequests()));
      } else {
        statuses.add(PeerStatus.of(p, e.pendingRequests()));
      }
    }
    return new ChooserStatus(name, statuses);
  }

  /**
   * The identifiers of the peers in rotation, in the strategy's order: the order of the next choices for
   * {@link RoundRobinPeerList}, identifier order for {@link HashRingPeerList}, an arbitrary order for the
   * others.
   */
  public final List<String> availablePeers() {
    synchronized (lock) {
      List<String> ids = new ArrayList<>(inRotation);
      for (Member m : strategy.rotation()) {
        ids.add(m.identifier());
      }
      return Collections.unmodifiableList(ids);
    }
  }

  /**
   * The identifiers in the list that are not in rotation (not available, held out by outlier detection,
   * or the list is not running).
   */
  public final List<String> unavailablePeers() {
    synchronized (lock) {
      List<String> ids = new ArrayList<>();
      for (Entry e : peers.values()) {
        if (!e.inRotation) {
          ids.add(e.identifier());
        }
      }
      return Collections.unmodifiableList(ids);
    }
  }

  /** Every identifier in the list, in the order it was added. */
  public final List<String> peerIdentifiers() {
    synchronized (lock) {
      return List.copyOf(peers.keySet());
    }
  }

  /**
   * While choices wait: {@code none of the N peers of the "round-robin" peer list is available}, with
   * the first known reason of a peer ({@code peer 10.0.0.1:80 is unreachable: Connection refused});
   * else null.
   */
  @Override
  public final String waitReason() {
    int count;
    List<Peer> members = new ArrayList<>();
    synchronized (lock) {
      if (inRotation > 0 || state != State.RUNNING) {
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
      String reason = p.unavailableReason();
      if (reason != null) {
        return NoPeerErrors.waitReason(name, count, p.identifier(), reason);
      }
    }
    return NoPeerErrors.waitReason(name, count, null, null);
  }

  @Override
  public final String toString() {
    synchronized (lock) {
      return getClass().getSimpleName()
          + "{peers="
          + peers.size()
          + ", available="
          + inRotation
          + ", waiting="
          + waiters.sizeLocked()
          + ", state="
          + state
          + "}";
    }
  }

  // ---------------------------------------------------------------------------------------------------
  // Internals

  /** Retains {@code e}'s peer (under the monitor, not under {@code lock}) and syncs it with its status. */
  private void retain(Entry e) {
    Peer peer = transport.retainPeer(e.identifier(), e);
    e.retained = true;
    if (peer == null) {
      throw new IllegalStateException(transport + " returned no peer for " + e.identifier());
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
      transport.releasePeer(e.identifier(), e);
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
   * Whether an active member with a peer belongs in rotation: the one place that decides it, under
   * {@code lock}, from the peer's last status the list saw and the member's standing under outlier
   * detection. The seam for taking a peer out of rotation for another reason: add the condition here,
   * keep its state on the {@link Entry}, and when it changes call {@link #syncLocked} under the lock
   * (then deliver its grants outside it), as {@link #decide} and {@link #endEjection} do.
   */
  private static boolean inRotation(Entry e) {
    return e.status == ConnectionStatus.AVAILABLE && (e.health == null || e.health.allowsCalls());
  }

  /**
   * Puts {@code e} in or out of rotation according to its peer's status. The status is read outside the
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
      ConnectionStatus status = peer.status();
      List<WaitQueue.Grant> grants;
      synchronized (lock) {
        if (!e.active || e.peer != peer) {
          return;
        }
        e.status = status;
        grants = syncLocked(e);
      }
      deliver(grants);
      if (peer.status() == status) {
        return;
      }
    }
  }

  /**
   * Moves {@code e} into or out of the strategy as {@link #inRotation} says; when it enters, serves the
   * waiting choices, whose grants the caller delivers after releasing the lock (null: none).
   */
  private List<WaitQueue.Grant> syncLocked(Entry e) {
    boolean wanted = e.active && e.peer != null && inRotation(e);
    if (wanted && !e.inRotation) {
      strategy.add(e);
      e.inRotation = true;
      inRotation++;
      return waiters.serveAllLocked(this::leaseLocked);
    }
    if (!wanted && e.inRotation) {
      leaveRotationLocked(e);
    }
    return null;
  }

  private static void deliver(List<WaitQueue.Grant> grants) {
    if (grants != null) {
      for (WaitQueue.Grant grant : grants) {
        grant.deliver();
      }
    }
  }

  /**
   * A lease on {@code e} ended and its health asks for a decision ({@link PeerHealth#record}): eject,
   * restore or put back on probation, then move it in or out of rotation.
   */
  private void decide(Entry e, LeaseOutcome outcome, Throwable error, boolean probe) {
    List<WaitQueue.Grant> grants;
    synchronized (lock) {
      if (!e.active
          || !detector.decideLocked(
              e.health,
              outcome,
              probe,
              error,
              peers.size(),
              inRotation - (e.inRotation ? 1 : 0) > 0)) {
        return;
      }
      grants = syncLocked(e);
    }
    deliver(grants);
  }

  /** On the timer thread: {@code e}'s ejection time is up; it returns on probation. */
  private void endEjection(Entry e) {
    List<WaitQueue.Grant> grants;
    synchronized (lock) {
      if (!e.active || !detector.endEjectionLocked(e.health)) {
        return;
      }
      grants = syncLocked(e);
    }
    deliver(grants);
  }

  /** Takes {@code e} out of the list's working set: out of rotation, and no longer followed. */
  private void deactivateLocked(Entry e) {
    e.active = false;
    if (e.inRotation) {
      leaveRotationLocked(e);
    }
    if (e.health != null) {
      detector.forgetLocked(e.health);
    }
  }

  private void leaveRotationLocked(Entry e) {
    strategy.remove(e);
    e.inRotation = false;
    inRotation--;
  }

  /** While choices wait: asks every peer of the list that is not available to connect now. */
  private void nudge() {
    List<Peer> members = new ArrayList<>();
    synchronized (lock) {
      if (waiters.isEmptyLocked() || state != State.RUNNING) {
        waiters.stopNudging();
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

  private String quotedName() {
    return NoPeerErrors.quoted(name);
  }

  /**
   * One identifier's membership in the list, and the subscriber the list registers for it with the
   * transport (one per membership, so late notifications of a removed peer are recognised and ignored);
   * under outlier detection also the owner of its leases, which tell it how their calls ended.
   */
  private final class Entry extends Member implements PeerSubscriber, CountedLease.Owner {
    boolean retained; // guarded by the monitor: holds a retain the list must release
    boolean active; // guarded by lock: retained or being retained, and still in the list
    boolean inRotation; // guarded by lock
    Peer peer; // guarded by lock; set while retained
    ConnectionStatus status; // guarded by lock: the peer's status when the list last looked
    final PeerHealth health; // null when outlier detection is off

    Entry(String id) {
      super(id);
      this.health = detector == null ? null : detector.track(() -> endEjection(this));
    }

    @Override
    public void leaseEnded(LeaseOutcome outcome, Throwable error, boolean probe) {
      if (health.record(outcome, probe)) {
        decide(this, outcome, error, probe);
      }
    }

    AtomicInteger pendingCounter() {
      return pending;
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
      return name + " peer list member{" + identifier() + "}";
    }
  }

  /**
   * What every list's builder sets: the initial peers, fail-fast, the default choose timeout and outlier
   * detection. Not thread-safe.
   *
   * @param <B> the builder's own type
   * @param <L> the list it builds
   */
  public abstract static class Builder<B extends Builder<B, L>, L extends AbstractPeerList> {
    private final PeerTransport transport;
    private List<String> peers = List.of();
    private boolean failFast;
    private Duration defaultChooseTimeout = DEFAULT_CHOOSE_TIMEOUT;
    private OutlierDetection outlierDetection;
    private Scheduler scheduler = Scheduler.SYSTEM;

    Builder(PeerTransport transport) {
      this.transport = requireNonNull(transport, "transport");
    }

    /**
     * The initial identifiers (no duplicates; default none), retained at start; more come with {@link
     * AbstractPeerList#update}.
     */
    public final B peers(List<String> identifiers) {
      requireNonNull(identifiers, "identifiers");
      for (String id : identifiers) {
        requireNonNull(id, "identifiers contains null");
      }
      this.peers = List.copyOf(identifiers);
      return self();
    }

    /** When true, a choice with no available peer fails at once instead of waiting; default false. */
    public final B failFast(boolean failFast) {
      this.failFast = failFast;
      return self();
    }

    /** How long a choice waits for a peer when the call has no deadline; positive, default 500 ms. */
    public final B defaultChooseTimeout(Duration timeout) {
      this.defaultChooseTimeout = Checks.positive(timeout, "defaultChooseTimeout");
      return self();
    }

    /**
     * Takes peers whose calls keep failing out of rotation for a while, as {@code settings} says (e.g.
     * {@link OutlierDetection#defaults()}: after 5 consecutive failures); null, the default, turns it
     * off.
     */
    public final B outlierDetection(OutlierDetection settings) {
      this.outlierDetection = settings;
      return self();
    }

    /** The time and timers of outlier detection (tests drive a clock of their own); default the system. */
    final B scheduler(Scheduler scheduler) {
      this.scheduler = requireNonNull(scheduler, "scheduler");
      return self();
    }

    /** The list, not started. Throws {@link IllegalArgumentException} when the peers hold a duplicate. */
    public abstract L build();

    @SuppressWarnings("unchecked")
    private B self() {
      return (B) this;
    }
  }
}
