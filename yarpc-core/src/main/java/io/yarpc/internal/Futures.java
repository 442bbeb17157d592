package io.yarpc.internal;

/** Small helpers for {@link java.util.concurrent.CompletableFuture}s. */
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
}
