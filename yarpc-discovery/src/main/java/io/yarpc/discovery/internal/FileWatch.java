package io.yarpc.discovery.internal;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A thread that runs a task when a file may have changed: at once when the {@link WatchService} reports
 * anything in the file's directory (a Kubernetes ConfigMap volume swaps a symbolic link, not the file),
 * and at least every poll interval, because watch services miss changes on some file systems (network
 * file systems, some container overlays) or are not available at all.
 */
public final class FileWatch {
  private static final Logger log = LoggerFactory.getLogger(FileWatch.class);

  /** After an event, how long the directory must be quiet before the task runs (a write in pieces). */
  private static final long SETTLE_MILLIS = 20;

  private static final int MAX_SETTLE_ROUNDS = 50;

  private final Path file;
  private final Duration pollInterval;
  private final Runnable task;
  private final Thread thread;
  private volatile WatchService watch; // set by start, before the thread starts
  private volatile boolean stopped;

  /**
   * Runs {@code task} when {@code file} may have changed, on a new daemon thread named {@code
   * threadName}.
   */
  public FileWatch(Path file, Duration pollInterval, Runnable task, String threadName) {
    this.file = file.toAbsolutePath();
    this.pollInterval = pollInterval;
    this.task = task;
    this.thread = new Thread(this::run, threadName);
    this.thread.setDaemon(true);
  }

  /**
   * Starts watching the directory, runs the task once on this thread, then starts the thread that runs
   * it again whenever the file may have changed: a change made after this returns, or while the first run
   * reads, is not missed.
   */
  public void start() {
    watch = open();
    task.run();
    thread.start();
  }

  /** Stops watching and waits (a little) for the thread to end; the task does not run again. */
  public void stop() {
    stopped = true;
    thread.interrupt();
    try {
      thread.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    close(); // the thread closes it too; this covers a start that did not get to start the thread
  }

  private void run() {
    try {
      while (!stopped) {
        if (watch == null) {
          Thread.sleep(pollInterval.toMillis());
        } else {
          WatchKey key = watch.poll(pollInterval.toMillis(), TimeUnit.MILLISECONDS);
          if (key != null) {
            settle(watch, key);
          }
        }
        if (!stopped) {
          task.run();
        }
      }
    } catch (InterruptedException | ClosedWatchServiceException e) {
      // stopped
    } finally {
      close();
    }
  }

  private void close() {
    WatchService w = watch;
    if (w != null) {
      try {
        w.close(); // idempotent
      } catch (IOException e) {
        log.debug("closing the watch service of {} failed", file, e);
      }
    }
  }

  /** Consumes events until the directory has been quiet for a moment. */
  private static void settle(WatchService watch, WatchKey key) throws InterruptedException {
    for (int i = 0; key != null && i < MAX_SETTLE_ROUNDS; i++) {
      key.pollEvents();
      key.reset();
      key = watch.poll(SETTLE_MILLIS, TimeUnit.MILLISECONDS);
    }
    if (key != null) {
      key.pollEvents();
      key.reset();
    }
  }

  /** A watch service on the file's directory, or null (polling only) when there is none. */
  private WatchService open() {
    Path dir = file.getParent();
    WatchService watch = null;
    try {
      watch = file.getFileSystem().newWatchService();
      dir.register(
          watch,
          StandardWatchEventKinds.ENTRY_CREATE,
          StandardWatchEventKinds.ENTRY_MODIFY,
          StandardWatchEventKinds.ENTRY_DELETE);
      return watch;
    } catch (IOException | UnsupportedOperationException | SecurityException e) {
      log.debug("cannot watch {}; polling every {}", dir, pollInterval, e);
      if (watch != null) {
        try {
          watch.close();
        } catch (IOException ignored) {
          // nothing more to do
        }
      }
      return null;
    }
  }
}
