package io.yarpc.netty.internal;

import io.yarpc.errors.YarpcException;
import java.nio.channels.ClosedChannelException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The text of an I/O error, the same under every {@link NettyIo}: Netty's epoll and io_uring word a
 * failed system call {@code finishConnect(..) failed with error(-111): Connection refused}, where NIO
 * (the JDK) says {@code Connection refused}. Transports describe socket errors with {@link #describe} so
 * that callers, logs and peer reasons read alike whatever the I/O; the system call is no use to them.
 */
public final class IoErrors {
  /**
   * Netty's native wording ({@code io.netty.channel.unix.Errors}): the call (io_uring's prefixed {@code
   * io_uring }) and the negated errno.
   */
  private static final Pattern NATIVE_CALL =
      Pattern.compile("\\b(?:io_uring )?\\w+\\(\\.\\.\\) failed with error\\(-?\\d+\\): ?");

  private IoErrors() {}

  /** What a connection that closed under a call reads as; the JDK's exception for it has no message. */
  static final String CLOSED = "the connection was closed";

  /**
   * {@code t}'s message without the native system call ({@code Connection refused: /127.0.0.1:4040});
   * {@value #CLOSED} for a {@link ClosedChannelException} (Netty's and the JDK's have no message); else,
   * without a message, its class name (as {@link YarpcException#describe}).
   */
  public static String describe(Throwable t) {
    if (t instanceof ClosedChannelException
        && (t.getMessage() == null || t.getMessage().isEmpty())) {
      return CLOSED;
    }
    return plain(YarpcException.describe(t));
  }

  /** {@code message} without any native system call in it. */
  public static String plain(String message) {
    Matcher m = NATIVE_CALL.matcher(message);
    return m.find() ? m.replaceAll("") : message;
  }
}
