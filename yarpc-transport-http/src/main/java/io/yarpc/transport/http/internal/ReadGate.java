package io.yarpc.transport.http.internal;

import io.netty.channel.Channel;

/**
 * Whether an HTTP/1.1 connection reads ({@code autoRead}), from the reasons the server has to stop: a
 * pipelined request waits for its turn ({@link #QUEUED}), the connection or the inbound holds too many
 * received bytes ({@link #BUDGET}, see {@link ConnectionBudget}), the client does not read our answers
 * ({@link #UNWRITABLE}). It reads when there is none. A connection closing after a rejection reads (and
 * discards) whatever still arrives whatever the reasons ({@link #openForGood()}).
 *
 * <p>Event loop only.
 */
final class ReadGate {
  static final int QUEUED = 1;
  static final int BUDGET = 2;
  static final int UNWRITABLE = 4;

  private final Channel channel;
  private int reasons;
  private boolean open;

  ReadGate(Channel channel) {
    this.channel = channel;
  }

  void pause(int reason) {
    reasons |= reason;
    apply();
  }

  void resume(int reason) {
    reasons &= ~reason;
    apply();
  }

  /** Whether the server stopped reading for one of its reasons (so a stalled request is not the client's fault). */
  boolean isPaused() {
    return reasons != 0 && !open;
  }

  /** Reads from now on whatever the reasons (the connection is closing and drains what arrives). */
  void openForGood() {
    open = true;
    channel.config().setAutoRead(true);
  }

  private void apply() {
    if (!open) {
      channel.config().setAutoRead(reasons == 0);
    }
  }
}
