package io.yarpc.encoding.protobuf.internal;

import java.util.concurrent.atomic.LongAdder;

/**
 * Counts which decode path protobuf bodies took, process-wide: for tests that prove the fast path is
 * taken and for benchmarks. Counting costs one {@link LongAdder} increment per decode.
 */
public final class DecodeStats {
  /** Binary bodies parsed in place from a single heap view, not immutable: no copy of the body. */
  public static final LongAdder IN_PLACE = new LongAdder();

  /**
   * Binary bodies parsed in place from an immutable heap array ({@code Body#isImmutable}) with aliasing:
   * no copy of the body, nor of its {@code bytes} fields.
   */
  public static final LongAdder IN_PLACE_ALIASED = new LongAdder();

  /** Binary bodies whose direct or multi-buffer views were copied once into the scratch array. */
  public static final LongAdder COPIED = new LongAdder();

  /** Binary bodies without byte access, read through their stream into the scratch array. */
  public static final LongAdder STREAMED = new LongAdder();

  /** Binary bodies copied once into a pooled array and parsed with aliasing (the unsafe opt-in). */
  public static final LongAdder ALIASED = new LongAdder();

  /** JSON bodies read from byte access (heap array or buffer views, no copy into an array). */
  public static final LongAdder JSON_VIEWS = new LongAdder();

  /** JSON bodies read through their stream. */
  public static final LongAdder JSON_STREAMED = new LongAdder();

  private DecodeStats() {}

  /** Sets every counter to zero. */
  public static void reset() {
    for (LongAdder a :
        new LongAdder[] {
          IN_PLACE, IN_PLACE_ALIASED, COPIED, STREAMED, ALIASED, JSON_VIEWS, JSON_STREAMED
        }) {
      a.reset();
    }
  }
}
