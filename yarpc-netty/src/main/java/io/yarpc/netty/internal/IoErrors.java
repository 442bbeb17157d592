package io.yarpc.netty.internal;

import io.yarpc.errors.YarpcException;
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

  /**
   * {@code t}'s message without the native system call ({@code Connection refused: /127.0.0.1:4040}), or
   * its class name when it has none (as {@link YarpcException#describe}).
   */
  public static String describe(Throwable t) {
    return plain(YarpcException.describe(t));
  }

  /** {@code message} without any native system call in it. */
  public static String plain(String message) {
    Matcher m = NATIVE_CALL.matcher(message);
    return m.find() ? m.replaceAll("") : message;
  }
}
