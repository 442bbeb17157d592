package io.yarpc.benchmarks.jmh;

import io.yarpc.transport.Headers;

/** Application headers of the header benchmarks: {@code n} pairs shaped like real request metadata. */
final class HeaderSets {
  private HeaderSets() {}

  /** {@code n} headers {@code x-bench-key-<i>: value-<i>-...} with values of about 24 bytes. */
  static Headers of(int n) {
    Headers.Builder b = Headers.builder();
    for (int i = 0; i < n; i++) {
      b.add("x-bench-key-" + i, "value-" + i + "-0123456789abcdef");
    }
    return b.build();
  }
}
