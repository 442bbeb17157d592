package io.yarpc.internal;

import java.util.concurrent.CompletableFuture;

/** Small helpers for {@link CompletableFuture}s. */
public final class Futures {
  private Futures() {}

  /** The cause behind a {@link java.util.concurrent.CompletionException} wrapper, or {@code t}. */
  public static Throwable unwrap(Throwable t) {
    while ((t instanceof java.util.concurrent.CompletionException
            || t instanceof java.util.concurrent.ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  /** Completes {@code target} like {@code source} when it completes; returns whether target took it. */
  public static <T> void forward(CompletableFuture<T> source, CompletableFuture<T> target) {
    source.whenComplete((v, e) -> {
      if (e != null) {
        target.completeExceptionally(unwrap(e));
      } else {
        target.complete(v);
      }
    });
  }
}
