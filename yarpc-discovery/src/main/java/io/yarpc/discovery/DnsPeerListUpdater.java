package io.yarpc.discovery;

import static java.util.Objects.requireNonNull;

import io.netty.channel.EventLoop;
import io.yarpc.discovery.internal.DnsEventLoop;
import io.yarpc.discovery.internal.DnsLookup;
import io.yarpc.discovery.internal.Membership;
import io.yarpc.internal.Checks;
import io.yarpc.internal.GoDurations;
import io.yarpc.peer.PeerList;
import io.yarpc.peer.PeerListUpdater;
import io.yarpc.peer.UpdaterStatus;
import io.yarpc.transport.AbstractLifecycle;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link PeerListUpdater} that looks its peers up in DNS and follows the records as they change: the
 * addresses of a name's A or AAAA records, each with one port, or the targets of its SRV records, each
 * with its record's port. A Kubernetes headless service is consumed this way: its name has an A record
 * per ready pod, and {@code _<port>._tcp.<service>.<namespace>.svc.cluster.local} an SRV record per pod
 * and named port.
 *
 * <pre>{@code
 * RoundRobinPeerList list = RoundRobinPeerList.builder(http).build();
 * DnsPeerListUpdater dns =
 *     DnsPeerListUpdater.builder("_http._tcp.users.default.svc.cluster.local")
 *         .record(DnsPeerListUpdater.RecordType.SRV)
 *         .build(list);
 * HttpOutbound users = http.outbound(BoundPeerChooser.of(list, dns));
 * }</pre>
 *
 * <p><b>Refreshing.</b> After a lookup the next one comes when the smallest TTL of the records it used
 * runs out, but never sooner than {@link Builder#minInterval} nor later than {@link
 * Builder#maxInterval}. After a failure it retries after {@code minInterval}, doubling with every failure
 * in a row up to {@code maxInterval}. Answers are not cached, so every refresh asks the server.
 *
 * <p><b>Failures</b> ({@code NXDOMAIN}, {@code SERVFAIL}, {@code REFUSED}, a name without records, a
 * server that does not answer within {@link Builder#timeout}) keep the last good membership: the list is
 * not touched, {@link #status()} says why ({@code SRV lookup of _http._tcp.users.svc.test failed:
 * NXDOMAIN}), and the reason is logged once, not at every retry. An answer without records counts as a
 * failure too: a service that really has no peer left fails its calls either way, and a DNS hiccup must
 * not empty the list. A refresh is all or nothing: when an SRV target cannot be resolved, nothing
 * changes.
 *
 * <p><b>Servers.</b> By default the system's DNS servers and search domains ({@code /etc/resolv.conf});
 * a name ending in a dot is not searched. {@link Builder#server} sends every query to one server
 * instead (a test's, or a discovery agent's such as Consul's), and names are then used as they are.
 *
 * <p><b>Lifecycle and threads.</b> {@link #start()} looks the name up and waits for the answer (at most
 * twice the timeout), so the list has its peers when start returns; a failed first lookup does not fail
 * the start. Queries, timers and the list's {@link PeerList#update} calls run on one event loop thread
 * ({@code yarpc-dns}) that every running DNS updater shares; the transport's {@code retainPeer} must not
 * block (yarpc's transports' do not). Once {@link #stop()} has returned the list is never called again.
 * Thread-safe.
 */
public final class DnsPeerListUpdater extends AbstractLifecycle implements PeerListUpdater {
  /** The updater's kind in configuration ({@code dns: {...}}) and in its status. */
  public static final String KIND = "dns";

  /** How long a query waits for an answer unless the builder says otherwise: 5 s. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

  /** The shortest time between lookups unless the builder says otherwise: 5 s. */
  public static final Duration DEFAULT_MIN_INTERVAL = Duration.ofSeconds(5);

  /** The longest time between lookups unless the builder says otherwise: 1 min. */
  public static final Duration DEFAULT_MAX_INTERVAL = Duration.ofMinutes(1);

  private static final Logger log = LoggerFactory.getLogger(DnsPeerListUpdater.class);

  /** The records a lookup asks for. */
  public enum RecordType {
    /** IPv4 addresses, each a peer with the builder's port. */
    A,
    /** IPv6 addresses, each a peer with the builder's port. */
    AAAA,
    /** Targets with ports, each a peer (see {@link Builder#resolveTargets}). */
    SRV
  }

  private final String name;
  private final RecordType type;
  private final int port;
  private final InetSocketAddress server;
  private final Duration timeout;
  private final Duration minInterval;
  private final Duration maxInterval;
  private final boolean resolveTargets;
  private final UnaryOperator<String> identify;
  private final Membership membership;

  private final Object lock = new Object();
  private volatile EventLoop loop; // set by doStart
  private volatile DnsLookup lookup; // set by doStart
  private ScheduledFuture<?> next; // guarded by lock
  private boolean stopped; // guarded by lock

  private DnsPeerListUpdater(Builder b, PeerList list) {
    this.name = b.name;
    this.type = b.type;
    this.port = b.port;
    this.server = b.server;
    this.timeout = b.timeout;
    this.minInterval = b.minInterval;
    this.maxInterval = b.maxInterval;
    this.resolveTargets = b.resolveTargets == null || b.resolveTargets;
    this.identify = b.identify;
    String source = type + " " + name + (type == RecordType.SRV ? "" : ", port " + port);
    if (server != null) {
      source += " at " + DnsLookup.hostPort(server.getAddress(), server.getPort());
    }
    this.membership = new Membership(list, KIND, source, log);
  }

  /** A builder for an updater that looks {@code name} up (e.g. {@code users.default.svc.cluster.local}). */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  @Override
  public UpdaterStatus status() {
    return membership.status(isRunning());
  }

  /** Looks the name up and waits for the answer, at most twice the timeout. */
  @Override
  protected void doStart() {
    loop = DnsEventLoop.acquire();
    lookup = new DnsLookup(loop, server, timeout);
    membership.start();
    CompletableFuture<Void> first = refresh();
    try {
      first.get(2 * timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      // the lookup goes on, and fills the list when it is answered
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      throw new IllegalStateException("the first lookup failed unexpectedly", e.getCause());
    }
  }

  /** Stops refreshing; waits for an update of the list in progress. */
  @Override
  protected void doStop() {
    synchronized (lock) {
      stopped = true;
      if (next != null) {
        next.cancel(false);
      }
    }
    membership.stop();
    if (lookup != null) {
      lookup.close();
    }
    if (loop != null) {
      DnsEventLoop.release();
    }
  }

  /** One lookup, its result applied and the next one scheduled; never completes exceptionally. */
  private CompletableFuture<Void> refresh() {
    CompletableFuture<DnsLookup.Answer> answered;
    try {
      answered = lookup.lookup(name, type, port, resolveTargets);
    } catch (RuntimeException e) { // the event loop refused the query: stopping
      answered = CompletableFuture.failedFuture(e);
    }
    return answered.handle(
        (answer, error) -> {
          Duration delay;
          String reason = error == null ? null : reason(error);
          List<String> ids = new ArrayList<>();
          if (answer != null) {
            try {
              for (String hostPort : answer.hostPorts()) {
                ids.add(identify.apply(hostPort));
              }
            } catch (RuntimeException e) {
              reason = type + " lookup of " + name + ": " + e.getMessage();
            }
          }
          if (reason == null) {
            membership.succeeded(ids);
            delay = refreshAfter(answer.ttlSeconds(), minInterval, maxInterval);
          } else {
            membership.failed(reason);
            delay = retryAfter(membership.consecutiveFailures(), minInterval, maxInterval);
          }
          schedule(delay);
          return null;
        });
  }

  private void schedule(Duration delay) {
    synchronized (lock) {
      if (!stopped) {
        next = loop.schedule(this::refresh, delay.toNanos(), TimeUnit.NANOSECONDS);
      }
    }
  }

  private static String reason(Throwable error) {
    Throwable e =
        error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    return e instanceof DnsLookup.Failure ? e.getMessage() : String.valueOf(e);
  }

  /** When to look up again after an answer whose records live {@code ttlSeconds}: the TTL, bounded. */
  static Duration refreshAfter(long ttlSeconds, Duration min, Duration max) {
    Duration ttl = Duration.ofSeconds(Math.min(ttlSeconds, max.getSeconds() + 1));
    return ttl.compareTo(min) < 0 ? min : ttl.compareTo(max) > 0 ? max : ttl;
  }

  /** When to retry after {@code failures} failed lookups in a row: {@code min} doubled, up to {@code max}. */
  static Duration retryAfter(int failures, Duration min, Duration max) {
    Duration d = min;
    for (int i = 1; i < failures && d.compareTo(max) < 0; i++) {
      d = d.multipliedBy(2);
    }
    return d.compareTo(max) > 0 ? max : d;
  }

  @Override
  public String toString() {
    return "DnsPeerListUpdater{" + membership.status(isRunning()).source() + "}";
  }

  /** Builds a {@link DnsPeerListUpdater}; not thread-safe. */
  public static final class Builder {
    private final String name;
    private RecordType type = RecordType.A;
    private int port;
    private InetSocketAddress server;
    private Duration timeout = DEFAULT_TIMEOUT;
    private Duration minInterval = DEFAULT_MIN_INTERVAL;
    private Duration maxInterval = DEFAULT_MAX_INTERVAL;
    private Boolean resolveTargets;
    private UnaryOperator<String> identify = UnaryOperator.identity();

    private Builder(String name) {
      requireNonNull(name, "name");
      if (name.isBlank()) {
        throw new IllegalArgumentException("the name to look up must not be empty");
      }
      this.name = DnsLookup.checkName(name.trim());
    }

    /** The records to ask for; default {@link RecordType#A}. */
    public Builder record(RecordType type) {
      this.type = requireNonNull(type, "type");
      return this;
    }

    /** The peers' port, 1 to 65535: required with A and AAAA records, refused with SRV (which give it). */
    public Builder port(int port) {
      if (port < 1 || port > 65535) {
        throw new IllegalArgumentException("port must be 1 to 65535: " + port);
      }
      this.port = port;
      return this;
    }

    /**
     * The DNS server to ask, an IP address and port (e.g. {@code 127.0.0.1:5353}); default the system's
     * servers. Names are then not searched.
     */
    public Builder server(InetSocketAddress server) {
      requireNonNull(server, "server");
      if (server.isUnresolved()) {
        throw new IllegalArgumentException(
            "the DNS server must be an IP address: " + server.getHostString());
      }
      this.server = server;
      return this;
    }

    /** How long a query waits for an answer; positive, default 5 s. */
    public Builder timeout(Duration timeout) {
      this.timeout = Checks.positive(timeout, "timeout");
      return this;
    }

    /** The shortest time between lookups, whatever the TTL; positive, default 5 s. */
    public Builder minInterval(Duration interval) {
      this.minInterval = Checks.positive(interval, "minInterval");
      return this;
    }

    /** The longest time between lookups, whatever the TTL; positive, default 1 min. */
    public Builder maxInterval(Duration interval) {
      this.maxInterval = Checks.positive(interval, "maxInterval");
      return this;
    }

    /**
     * With SRV records: whether each target is resolved to its A records (its AAAA records when it has
     * none), making one peer {@code address:port} per address (true, the default), or used as it is,
     * {@code target:port}, leaving the transport to resolve it when it connects (false).
     */
    public Builder resolveTargets(boolean resolve) {
      this.resolveTargets = resolve;
      return this;
    }

    /**
     * Turns each {@code host:port} found into the identifier the list's transport retains; default
     * unchanged. E.g. {@code hp -> "https://" + hp} for an HTTP outbound over TLS.
     */
    public Builder identify(UnaryOperator<String> identify) {
      this.identify = requireNonNull(identify, "identify");
      return this;
    }

    /**
     * The updater, not started, feeding {@code list}.
     *
     * @throws IllegalArgumentException when A or AAAA records have no port, SRV records have one,
     *     {@code resolveTargets} is set without SRV, or {@code minInterval} exceeds {@code maxInterval}
     */
    public DnsPeerListUpdater build(PeerList list) {
      requireNonNull(list, "list");
      if (type != RecordType.SRV && port == 0) {
        throw new IllegalArgumentException(
            "a port is required with " + type + " records (they give addresses only)");
      }
      if (type == RecordType.SRV && port != 0) {
        throw new IllegalArgumentException("no port with SRV records: each record gives its own");
      }
      if (type != RecordType.SRV && resolveTargets != null) {
        throw new IllegalArgumentException("resolveTargets is for SRV records only");
      }
      if (minInterval.compareTo(maxInterval) > 0) {
        throw new IllegalArgumentException(
            "minInterval ("
                + GoDurations.format(minInterval)
                + ") must not be longer than maxInterval ("
                + GoDurations.format(maxInterval)
                + ")");
      }
      return new DnsPeerListUpdater(this, list);
    }
  }
}
