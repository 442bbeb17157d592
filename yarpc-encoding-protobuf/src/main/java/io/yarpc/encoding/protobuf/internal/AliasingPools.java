package io.yarpc.encoding.protobuf.internal;

import io.yarpc.encoding.protobuf.unsafe.UnsafeAliasing;
import java.util.function.Function;

/**
 * Gives the encoding the {@link ArrayPool} behind an {@link UnsafeAliasing} without making the pool part
 * of {@code UnsafeAliasing}'s public API: {@code UnsafeAliasing} registers the accessor when its class is
 * initialised, which happens before any instance exists.
 */
public final class AliasingPools {
  private static volatile Function<UnsafeAliasing, ArrayPool> accessor;

  private AliasingPools() {}

  /** Called once, by {@link UnsafeAliasing}'s static initialiser. */
  public static void register(Function<UnsafeAliasing, ArrayPool> poolOf) {
    accessor = poolOf;
  }

  /** The pool of {@code aliasing}, or {@code null} for {@code null}. */
  public static ArrayPool poolOf(UnsafeAliasing aliasing) {
    return aliasing == null ? null : accessor.apply(aliasing);
  }
}
