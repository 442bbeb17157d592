package io.yarpc.netty.internal;

import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;

/**
 * Logs at most one line a second at INFO, counting the lines it drops into the next one ({@code (12 more
 * like it since the last line)}): for events a peer can cause at will, such as failed TLS handshakes, so
 * that a flood of them costs a counter, not a log line each. Thread-safe.
 */
public final class RateLimitedLog {
  private static final long INTERVAL_NANOS = 1_000_000_000L;

  private final Logger log;
  private final AtomicLong nextNanos = new AtomicLong(System.nanoTime());
  private final AtomicLong dropped = new AtomicLong();

  /** Lines go to {@code log}. */
  public RateLimitedLog(Logger log) {
    this.log = log;
  }

  /** Logs {@code format} with {@code args} (slf4j placeholders), or counts it when a line went out less than a second ago. */
  public void info(String format, Object... args) {
    long now = System.nanoTime();
    long next = nextNanos.get();
    if (now - next < 0 || !nextNanos.compareAndSet(next, now + INTERVAL_NANOS)) {
      dropped.incrementAndGet();
      return;
    }
    long more = dropped.getAndSet(0);
    if (more == 0) {
      log.info(format, args);
      return;
    }
    Object[] withCount = java.util.Arrays.copyOf(args, args.length + 1);
    withCount[args.length] = more;
    log.info(format + " ({} more like it since the last line)", withCount);
  }
}
