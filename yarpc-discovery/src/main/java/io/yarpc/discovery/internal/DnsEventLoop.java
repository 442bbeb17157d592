package io.yarpc.discovery.internal;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.TimeUnit;

/**
 * The one Netty event loop ({@code yarpc-dns}, a daemon thread) that every running DNS updater shares
 * for its queries and its refresh timer: created by the first {@link #acquire()}, shut down by the last
 * {@link #release()}. Tasks on it must not block.
 */
public final class DnsEventLoop {
  private static EventLoopGroup group; // guarded by DnsEventLoop.class
  private static int users; // guarded by DnsEventLoop.class

  private DnsEventLoop() {}

  /** The loop; pair each call with one {@link #release()}. */
  public static synchronized EventLoop acquire() {
    if (users++ == 0) {
      group =
          new MultiThreadIoEventLoopGroup(
              1, new DefaultThreadFactory("yarpc-dns", true), NioIoHandler.newFactory());
    }
    return group.next();
  }

  /** Gives the loop back; the last user shuts it down (without waiting for it). */
  public static synchronized void release() {
    if (users == 0) {
      throw new IllegalStateException("released more often than acquired");
    }
    if (--users == 0) {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      group = null;
    }
  }
}
