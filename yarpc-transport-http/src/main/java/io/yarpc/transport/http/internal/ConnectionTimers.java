package io.yarpc.transport.http.internal;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.ScheduledFuture;
import io.yarpc.transport.InboundLimits;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The timers of one accepted connection, from {@code InboundLimits}: the handshake ({@code
 * handshakeTimeout}: an h2c client must have sent its preface and SETTINGS, an HTTP/1.1 client its first
 * request head, else the connection is closed) and the connection's age ({@code maxConnectionAge}: then
 * {@link InboundState#MAX_AGE} is fired on its pipeline, and after the grace period it is closed). All are
 * cancelled when the connection closes, so a closed connection is not kept by a pending timer.
 *
 * <p>Event loop only, except {@link #handshakeDone}, which looks the timers up on the channel.
 */
final class ConnectionTimers {
  private static final Logger log = LoggerFactory.getLogger(ConnectionTimers.class);
  private static final AttributeKey<ConnectionTimers> KEY =
      AttributeKey.valueOf(ConnectionTimers.class, "timers");

  private ScheduledFuture<?> handshake;
  private ScheduledFuture<?> age;
  private ScheduledFuture<?> grace;

  private ConnectionTimers() {}

  /** Starts the timers of {@code ch}, just accepted. */
  static void start(Channel ch, InboundLimits limits) {
    ConnectionTimers t = new ConnectionTimers();
    ch.attr(KEY).set(t);
    t.handshake =
        ch.eventLoop()
            .schedule(
                () -> {
                  log.debug("HTTP inbound {}: no handshake within the timeout; closing", ch);
                  ch.close();
                },
                limits.handshakeTimeout().toNanos(),
                TimeUnit.NANOSECONDS);
    Duration maxAge = limits.maxConnectionAge();
    if (maxAge != null) {
      t.age =
          ch.eventLoop()
              .schedule(
                  () -> ch.pipeline().fireUserEventTriggered(InboundState.MAX_AGE),
                  maxAge.toNanos(),
                  TimeUnit.NANOSECONDS);
      Duration g = limits.maxConnectionAgeGrace();
      if (g != null) {
        t.grace =
            ch.eventLoop()
                .schedule(
                    () -> {
                      log.debug("HTTP inbound {}: maximum age and grace reached; closing", ch);
                      ch.close();
                    },
                    maxAge.toNanos() + g.toNanos(),
                    TimeUnit.NANOSECONDS);
      }
    }
    ch.closeFuture().addListener(f -> t.cancelAll());
  }

  /** {@code ch} completed its handshake: its handshake timer stops. */
  static void handshakeDone(Channel ch) {
    ConnectionTimers t = ch.attr(KEY).get();
    if (t != null) {
      t.cancel(t.handshake);
      t.handshake = null;
    }
  }

  private void cancelAll() {
    cancel(handshake);
    cancel(age);
    cancel(grace);
    handshake = null;
    age = null;
    grace = null;
  }

  private static void cancel(ScheduledFuture<?> f) {
    if (f != null) {
      f.cancel(false);
    }
  }
}
