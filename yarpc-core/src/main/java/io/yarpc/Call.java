package io.yarpc;

import static java.util.Objects.requireNonNull;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Headers;
import io.yarpc.transport.RequestMeta;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * The inbound call being handled: its metadata, its deadline, whether it was cancelled, and the response
 * headers the handler wants to send. The dispatcher makes one per inbound call and makes it
 * {@linkplain #current() current} on the thread that runs the handler.
 *
 * <p>Outbound calls made through a dispatcher's clients while a call is current inherit its remaining
 * deadline and are cancelled with it, with nothing passed by hand. Code that continues on another thread
 * carries the call along with {@link #wrap(Runnable)} or {@link #run(Callable)}.
 */
public final class Call {
  private static final ThreadLocal<Call> CURRENT = new ThreadLocal<>();

  private final RequestMeta meta;
  // Both made on first use: most calls set no response header and have one cancel listener or none.
  private Headers.Builder responseHeaders; // guarded by this
  private Object cancelListeners; // guarded by this: null, one Runnable, or a List<Runnable>
  private YarpcException cancellation; // guarded by this

  /** A call for {@code meta}; made by the dispatcher (and by tests that need one). */
  public Call(RequestMeta meta) {
    this.meta = requireNonNull(meta, "meta");
  }

  /** The call current on this thread, or {@code null} outside a handler. */
  public static Call current() {
    return CURRENT.get();
  }

  /** Runs {@code body} with this call current on this thread, restoring what was current before. */
  public <T> T run(Callable<T> body) throws Exception {
    Call previous = CURRENT.get();
    CURRENT.set(this);
    try {
      return body.call();
    } finally {
      restore(previous);
    }
  }

  /** {@code task}, made to run with this call current. */
  public Runnable wrap(Runnable task) {
    requireNonNull(task, "task");
    return () -> {
      Call previous = CURRENT.get();
      CURRENT.set(this);
      try {
        task.run();
      } finally {
        restore(previous);
      }
    };
  }

  // set, not remove, when nothing was current: the thread's map entry stays (holding null) and the
  // next call on this thread reuses it instead of allocating one
  private static void restore(Call previous) {
    CURRENT.set(previous);
  }

  /** The request's metadata (caller, service, procedure, encoding, headers, deadline...). */
  public RequestMeta meta() {
    return meta;
  }

  /** Shorthand for {@code meta().headers().get(key)}. */
  public String header(String key) {
    return meta.headers().get(key);
  }

  /** The call's deadline, or {@code null} (stream calls may have none). */
  public Deadline deadline() {
    return meta.deadline();
  }

  /**
   * Adds a response header; the encoding sends the collected headers with the response (unary calls
   * only).
   */
  public synchronized void setResponseHeader(String key, String value) {
    if (responseHeaders == null) {
      responseHeaders = Headers.builder();
    }
    responseHeaders.add(key, value);
  }

  /** The response headers collected so far. */
  public synchronized Headers responseHeaders() {
    return responseHeaders == null ? Headers.empty() : responseHeaders.build();
  }

  /** Whether the call was cancelled or ran past its deadline. */
  public synchronized boolean isCancelled() {
    return cancellation != null;
  }

  /** Why the call was cancelled ({@code cancelled} or {@code deadline-exceeded}), or {@code null}. */
  public synchronized YarpcException cancellation() {
    return cancellation;
  }

  /**
   * Runs {@code listener} when the call is cancelled (at once if it already was). Returns a handle that
   * removes the listener.
   */
  public AutoCloseable onCancel(Runnable listener) {
    requireNonNull(listener, "listener");
    synchronized (this) {
      if (cancellation == null) {
        addListener(listener);
        return () -> removeListener(listener);
      }
    }
    listener.run();
    return () -> {};
  }

  @SuppressWarnings("unchecked")
  private void addListener(Runnable listener) {
    if (cancelListeners == null) {
      cancelListeners = listener;
    } else if (cancelListeners instanceof Runnable) {
      List<Runnable> list = new ArrayList<>(4);
      list.add((Runnable) cancelListeners);
      list.add(listener);
      cancelListeners = list;
    } else {
      ((List<Runnable>) cancelListeners).add(listener);
    }
  }

  private synchronized void removeListener(Runnable listener) {
    if (cancelListeners == listener) {
      cancelListeners = null;
    } else if (cancelListeners instanceof List) {
      ((List<?>) cancelListeners).remove(listener);
    }
  }

  /**
   * Cancels the call for {@code reason} (code {@code cancelled} or {@code deadline-exceeded}); the first
   * reason wins. Called by the dispatcher and transports.
   */
  public void cancel(YarpcException reason) {
    requireNonNull(reason, "reason");
    Object listeners;
    synchronized (this) {
      if (cancellation != null) {
        return;
      }
      cancellation = reason;
      listeners = cancelListeners;
      cancelListeners = null;
    }
    if (listeners instanceof Runnable) {
      runListener((Runnable) listeners);
    } else if (listeners != null) {
      for (Object l : (List<?>) listeners) {
        runListener((Runnable) l);
      }
    }
  }

  private static void runListener(Runnable listener) {
    try {
      listener.run();
    } catch (RuntimeException ignored) {
      // a listener's failure must not stop the others
    }
  }

  /** Cancels the call with code {@code cancelled}. */
  public void cancel() {
    cancel(
        YarpcException.of(
            Code.CANCELLED,
            "call to procedure \"%s\" of service \"%s\" from caller " + "\"%s\" was cancelled",
            meta.procedure(),
            meta.service(),
            meta.caller()));
  }
}
