package io.yarpc.encoding.protobuf.internal;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.ExtensionRegistryLite;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.Parser;
import com.google.protobuf.UninitializedMessageException;
import com.google.protobuf.UnsafeByteOperations;
import io.yarpc.transport.Body;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;

/**
 * The binary decode paths, byte access first (see the module's package documentation):
 *
 * <ol>
 *   <li>one heap view ({@link Body#arrayView}): parsed in place from its array, no copy ({@link
 *       DecodeStats#IN_PLACE}); with aliasing when the body is {@linkplain Body#isImmutable()
 *       immutable} (an array allocated for this one message), so that {@code bytes} fields point into
 *       it instead of being copied out ({@link DecodeStats#IN_PLACE_ALIASED});
 *   <li>direct or several views: copied once into the thread's {@link Scratch} array ({@link
 *       Body#copyTo}, which allocates no views) and parsed from there ({@link DecodeStats#COPIED}) —
 *       protobuf-java 4.34+ would copy direct memory itself, and a rope of buffers decodes through a
 *       stream that copies again;
 *   <li>no byte access: read through the body's stream into the scratch array ({@link
 *       DecodeStats#STREAMED}).
 * </ol>
 *
 * Apart from an immutable body, none of these parse with aliasing: {@code bytes} fields are copied
 * out, so the message never points into the body or the scratch array and stays valid after both are
 * reused or released. An immutable body's array is never reused, so a message aliasing it stays valid
 * too; it keeps the whole array alive for as long as any of its {@code bytes} fields is reachable.
 * {@link #parseAliased} is the opt-in exception for pooled arrays.
 */
public final class ProtoDecoding {
  private static final ExtensionRegistryLite NO_EXTENSIONS =
      ExtensionRegistryLite.getEmptyRegistry();
  private static final int MAX_ARRAY = Integer.MAX_VALUE - 8;

  private ProtoDecoding() {}

  /** A message parsed with aliasing together with the pooled array it points into. */
  public record Aliased<T>(T message, byte[] array) {}

  /** The message in {@code body} (not released); see the class comment for the paths. */
  public static <T> T parse(Parser<T> parser, Body body) throws IOException {
    if (body.hasByteAccess()) {
      ByteBuffer v = body.arrayView();
      if (v != null) {
        boolean alias = body.isImmutable();
        (alias ? DecodeStats.IN_PLACE_ALIASED : DecodeStats.IN_PLACE).increment();
        return parse(parser, v.array(), v.arrayOffset() + v.position(), v.remaining(), alias);
      }
      int length = checkedLength(body);
      byte[] scratch = Scratch.take(length);
      try {
        body.copyTo(scratch, 0);
        DecodeStats.COPIED.increment();
        return parse(parser, scratch, 0, length, false);
      } finally {
        Scratch.giveBack(scratch);
      }
    }
    InputStream in = body.openStream();
    long promised = body.length();
    byte[] scratch = Scratch.take(promised >= 0 ? (int) Math.min(promised, MAX_ARRAY) : 8192);
    int n = 0;
    try {
      while (true) {
        if (n == scratch.length) {
          int next =
              in.read(); // full: at the end (the usual case when the length was known) or not
          if (next < 0) {
            break;
          }
          scratch = Scratch.grow(scratch, n, grownSize(n));
          scratch[n++] = (byte) next;
        }
        int r = in.read(scratch, n, scratch.length - n);
        if (r < 0) {
          break;
        }
        n += r;
      }
      DecodeStats.STREAMED.increment();
      return parse(parser, scratch, 0, n, false);
    } finally {
      Scratch.giveBack(scratch);
    }
  }

  /**
   * The message in {@code body} (not released), parsed with aliasing from one copy in an array borrowed
   * from {@code pool}: {@code bytes} fields point into that array, so the caller gives it back only when
   * nothing reads the message any more. On failure the array is given back here.
   */
  public static <T> Aliased<T> parseAliased(Parser<T> parser, Body body, ArrayPool pool)
      throws IOException {
    byte[] array;
    int n;
    if (body.hasByteAccess()) {
      n = checkedLength(body);
      array = pool.borrow(n);
      try {
        body.copyTo(array, 0);
      } catch (IOException | RuntimeException e) {
        pool.giveBack(array);
        throw e;
      }
    } else {
      InputStream in = body.openStream();
      long promised = body.length();
      array = pool.borrow(promised >= 0 ? (int) Math.min(promised, MAX_ARRAY) : 8192);
      n = 0;
      try {
        while (true) {
          if (n == array.length) {
            int next = in.read();
            if (next < 0) {
              break;
            }
            byte[] bigger = pool.borrow(grownSize(n));
            System.arraycopy(array, 0, bigger, 0, n);
            pool.giveBack(array);
            array = bigger;
            array[n++] = (byte) next;
          }
          int r = in.read(array, n, array.length - n);
          if (r < 0) {
            break;
          }
          n += r;
        }
      } catch (IOException | RuntimeException e) {
        pool.giveBack(array);
        throw e;
      }
    }
    try {
      T message = parse(parser, array, 0, n, true);
      DecodeStats.ALIASED.increment();
      return new Aliased<>(message, array);
    } catch (IOException | RuntimeException e) {
      pool.giveBack(array);
      throw e;
    }
  }

  /**
   * Parses {@code length} bytes of {@code array} from {@code offset}: the whole range must be one
   * message (no trailing end-group tag) with every required field set.
   */
  public static <T> T parse(Parser<T> parser, byte[] array, int offset, int length, boolean alias)
      throws InvalidProtocolBufferException {
    CodedInputStream in;
    if (alias) {
      // Aliasing needs an input protobuf treats as immutable, which only a wrapped ByteString
      // gives.
      in = UnsafeByteOperations.unsafeWrap(array, offset, length).newCodedInput();
      in.enableAliasing(true);
    } else {
      in = CodedInputStream.newInstance(array, offset, length);
    }
    T message = parser.parsePartialFrom(in, NO_EXTENSIONS);
    in.checkLastTagWas(0);
    MessageLite parsed = (MessageLite) message;
    if (!parsed.isInitialized()) {
      throw missingRequiredFields(parsed);
    }
    return message;
  }

  /** The next size of a buffer of {@code n} bytes that is full. */
  private static int grownSize(int n) throws InvalidProtocolBufferException {
    if (n >= MAX_ARRAY) {
      throw new InvalidProtocolBufferException("body larger than " + MAX_ARRAY + " bytes");
    }
    return (int) Math.min(MAX_ARRAY, Math.max(8192L, (long) n * 2));
  }

  /** protobuf's own message for a message without its required fields, naming them when it can. */
  static InvalidProtocolBufferException missingRequiredFields(MessageLite message) {
    if (message instanceof MessageOrBuilder) {
      return new InvalidProtocolBufferException(
              "Message missing required fields: "
                  + String.join(", ", ((MessageOrBuilder) message).findInitializationErrors()))
          .setUnfinishedMessage(message);
    }
    return new UninitializedMessageException(message)
        .asInvalidProtocolBufferException()
        .setUnfinishedMessage(message);
  }

  /** The length of a byte-access body, which must fit one array. */
  private static int checkedLength(Body body) throws InvalidProtocolBufferException {
    long total = body.length();
    if (total > MAX_ARRAY) {
      throw new InvalidProtocolBufferException("body larger than " + MAX_ARRAY + " bytes");
    }
    return (int) total;
  }
}
