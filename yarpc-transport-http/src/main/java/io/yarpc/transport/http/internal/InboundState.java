package io.yarpc.transport.http.internal;

import io.netty.channel.Channel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.Router;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the connections of one inbound share: the router, the set of open connections (at most {@code
 * InboundLimits.maxConnections}; those refused beyond are counted), the bytes held for requests not yet
 * handed to a handler ({@link PendingBytes}), the number of requests between "fully received" and
 * "response written", whether the inbound is draining (closing its connections), and whether it reports
 * itself serving to health checks (false from the moment its dispatcher begins to stop, before the inbound
 * itself drains). Thread-safe.
 */
public final class InboundState {
  /** Fired on every connection's pipeline when the inbound starts draining. */
  public static final Object DRAIN =
      new Object() {
        @Override
        public String toString() {
          return "DRAIN";
        }
      };

  /**
   * Fired on a connection's pipeline when it reaches {@code InboundLimits.maxConnectionAge}: it is asked to
   * go away (h2c: GOAWAY; HTTP/1.1: {@code Connection: close} on its next answer, or closed at once when it
   * has none to give).
   */
  public static final Object MAX_AGE =
      new Object() {
        @Override
        public String toString() {
          return "MAX_AGE";
        }
      };

  private final ChannelGroup channels =
      new DefaultChannelGroup("yarpc-http-inbound", GlobalEventExecutor.INSTANCE);
  private final Object lock = new Object();
  private final int maxConnections;
  private final AtomicInteger open = new AtomicInteger();
  private final AtomicLong refused = new AtomicLong();
  private final PendingBytes pending;
  private volatile Router router;
  private volatile boolean draining;
  private volatile boolean serving;
  private int active; // guarded by lock

  /** The state of an inbound with {@link InboundLimits#defaults()}. */
  public InboundState() {
    this(InboundLimits.defaults());
  }

  /** The state of an inbound with {@code limits}. */
  public InboundState(InboundLimits limits) {
    this.maxConnections = limits.maxConnections();
    this.pending = new PendingBytes(limits.maxPendingBytes());
  }

  /** The bytes the inbound's connections hold for requests not yet handed to a handler. */
  public PendingBytes pending() {
    return pending;
  }

  /**
   * Takes a new connection in: true when it is within {@code maxConnections} (it is then counted until it
   * closes, and closed with the inbound); false when it is one too many: it is counted as refused, and the
   * caller closes it.
   */
  public boolean admit(Channel channel) {
    if (open.incrementAndGet() > maxConnections) {
      open.decrementAndGet();
      refused.incrementAndGet();
      return false;
    }
    channel.closeFuture().addListener(f -> open.decrementAndGet());
    addChannel(channel);
    return true;
  }

  /** Connections refused because {@code maxConnections} were open. */
  public long refusedConnections() {
    return refused.get();
  }

  public void router(Router router) {
    this.router = router;
  }

  public Router router() {
    return router;
  }

  public boolean isDraining() {
    return draining;
  }

  /** Sets what the health check reports. */
  public void serving(boolean serving) {
    this.serving = serving;
  }

  /** Whether the health check reports serving: started, and neither stopping nor asked to drain. */
  public boolean isServing() {
    return serving;
  }

  /** Tracks a new connection (closed with the inbound). */
  public void addChannel(Channel channel) {
    channels.add(channel);
    if (draining) {
      channel.close();
    }
  }

  public void exchangeStarted() {
    synchronized (lock) {
      active++;
    }
  }

  public void exchangeFinished() {
    synchronized (lock) {
      if (--active == 0) {
        lock.notifyAll();
      }
    }
  }

  /** Requests received and not yet answered. */
  public int activeExchanges() {
    synchronized (lock) {
      return active;
    }
  }

  /**
   * Starts draining: every connection is told (idle HTTP/1.1 connections close at once, busy ones after
   * their response; HTTP/2 connections send GOAWAY and close when their streams are done). Then waits at
   * most {@code timeoutNanos} for in-flight requests to be answered, and closes every connection.
   */
  public void drainAndClose(long timeoutNanos) {
    draining = true;
    for (Channel ch : channels) {
      try {
        ch.eventLoop().execute(() -> ch.pipeline().fireUserEventTriggered(DRAIN));
      } catch (RejectedExecutionException e) {
        ch.close(); // its event loop is gone already (the transport was stopped first)
      }
    }
    long deadline = System.nanoTime() + timeoutNanos;
    synchronized (lock) {
      while (active > 0) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          break;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(lock, left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
    }
    channels
        .close()
        .awaitUninterruptibly(timeoutNanos + TimeUnit.SECONDS.toNanos(1), TimeUnit.NANOSECONDS);
  }
}
