package io.yarpc.netty.internal;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.ServerSocketChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import java.util.Locale;
import java.util.concurrent.ThreadFactory;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Netty I/O every transport of this JVM uses: its event loops and its socket channel classes, which
 * must match. Chosen once, from the system property {@value #PROPERTY}:
 *
 * <ul>
 *   <li>{@code auto} (the default, {@value #DEFAULT_MODE}): Linux's native epoll when Netty's native
 *       library loads ({@code netty-all} ships it for x86_64, aarch64 and riscv64), else NIO;
 *   <li>{@code nio}: Java NIO;
 *   <li>{@code epoll}, {@code io_uring}: that native I/O, or NIO with a warning when it is not available
 *       here (another OS, a kernel without io_uring, a sandbox that forbids it). io_uring is never chosen
 *       unless asked for.
 * </ul>
 *
 * <p>The native I/Os always read into direct memory, whatever the channel's allocator prefers;
 * transports that receive into heap install {@link HeapReads} so that their handlers see what they see
 * under NIO (except where a protocol copies what it keeps into heap itself: h2c, see {@link
 * HeapReads#remove}).
 *
 * <p>The choice, and why a native one was not taken, is logged once at INFO (logger {@code
 * io.yarpc.netty.internal.NettyIo}) when the first transport starts. Immutable and thread-safe.
 */
public final class NettyIo {
  /** The system property that chooses the I/O: {@code auto}, {@code epoll}, {@code io_uring}, {@code nio}. */
  public static final String PROPERTY = "yarpc.io";

  /** The mode when {@value #PROPERTY} is not set: epoll where it is available, else NIO. */
  public static final String DEFAULT_MODE = "auto";

  private static final Logger log = LoggerFactory.getLogger(NettyIo.class);

  private final String name;
  private final Supplier<IoHandlerFactory> handlers;
  private final Class<? extends ServerSocketChannel> serverChannel;
  private final Class<? extends SocketChannel> socketChannel;
  private final Supplier<ServerSocketChannel> newServerChannel;

  private NettyIo(
      String name,
      Supplier<IoHandlerFactory> handlers,
      Class<? extends ServerSocketChannel> serverChannel,
      Class<? extends SocketChannel> socketChannel,
      Supplier<ServerSocketChannel> newServerChannel) {
    this.name = name;
    this.handlers = handlers;
    this.serverChannel = serverChannel;
    this.socketChannel = socketChannel;
    this.newServerChannel = newServerChannel;
  }

  private static final class Chosen {
    static final NettyIo IO = choose(System.getProperty(PROPERTY, DEFAULT_MODE), true);
  }

  /** The I/O of this JVM, chosen (and logged) on first use. */
  public static NettyIo get() {
    return Chosen.IO;
  }

  /**
   * The I/O {@code mode} names ({@code auto}, {@code epoll}, {@code io_uring}, {@code nio}; case and
   * {@code -} for {@code _} do not matter), falling back to NIO when that one is not available.
   *
   * @throws IllegalArgumentException for any other name
   */
  public static NettyIo of(String mode) {
    return choose(mode, false);
  }

  private static NettyIo choose(String mode, boolean logChoice) {
    String m = mode.trim().toLowerCase(Locale.ROOT).replace('-', '_');
    NettyIo io;
    String why = null;
    switch (m) {
      case "auto":
      case "epoll":
        if (Epoll.isAvailable()) {
          io = epoll();
        } else {
          io = nio();
          why = "epoll is not available: " + Epoll.unavailabilityCause();
        }
        break;
      case "io_uring":
        if (IoUring.isAvailable()) {
          io = ioUring();
        } else {
          io = nio();
          why = "io_uring is not available: " + IoUring.unavailabilityCause();
        }
        break;
      case "nio":
        io = nio();
        break;
      default:
        throw new IllegalArgumentException(
            PROPERTY + " must be auto, epoll, io_uring or nio, not \"" + mode + "\"");
    }
    if (logChoice) {
      if (why == null) {
        log.info("yarpc transports use {} I/O ({}={})", io.name, PROPERTY, m);
      } else if (m.equals("auto")) { // NIO is what auto gives where there is no epoll
        log.info("yarpc transports use {} I/O ({})", io.name, why);
      } else {
        log.warn("yarpc transports use {} I/O, not {}: {}", io.name, m, why);
      }
    }
    return io;
  }

  private static NettyIo nio() {
    return new NettyIo(
        "nio",
        NioIoHandler::newFactory,
        NioServerSocketChannel.class,
        NioSocketChannel.class,
        NioServerSocketChannel::new);
  }

  private static NettyIo epoll() {
    return new NettyIo(
        "epoll",
        EpollIoHandler::newFactory,
        EpollServerSocketChannel.class,
        EpollSocketChannel.class,
        EpollServerSocketChannel::new);
  }

  private static NettyIo ioUring() {
    return new NettyIo(
        "io_uring",
        IoUringIoHandler::newFactory,
        IoUringServerSocketChannel.class,
        IoUringSocketChannel.class,
        IoUringServerSocketChannel::new);
  }

  /** {@code nio}, {@code epoll} or {@code io_uring}. */
  public String name() {
    return name;
  }

  /** Event loops of this I/O: {@code threads} of them (0: Netty's default, twice the cores). */
  public EventLoopGroup newGroup(int threads, ThreadFactory threadFactory) {
    return new MultiThreadIoEventLoopGroup(threads, threadFactory, handlers.get());
  }

  /** The server channel class to give a {@code ServerBootstrap} on this I/O's event loops. */
  public Class<? extends ServerSocketChannel> serverChannel() {
    return serverChannel;
  }

  /** The client channel class to give a {@code Bootstrap} on this I/O's event loops. */
  public Class<? extends SocketChannel> socketChannel() {
    return socketChannel;
  }

  /** A new, unregistered server channel of this I/O (for a channel factory). */
  public ServerSocketChannel newServerChannel() {
    return newServerChannel.get();
  }

  @Override
  public String toString() {
    return "NettyIo{" + name + "}";
  }
}
