package io.yarpc.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import io.netty.util.ResourceLeakDetector.Level;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;

/**
 * A JUnit 5 extension that turns Netty {@link ByteBuf} leaks into test failures.
 *
 * <p>It is registered for every test class of every module whose tests depend on {@code yarpc-testing},
 * through {@code META-INF/services/org.junit.jupiter.api.extension.Extension} and the build's
 * {@code junit.jupiter.extensions.autodetection.enabled=true}; it can also be registered explicitly with
 * {@code @ExtendWith(LeakDetectionExtension.class)}.
 *
 * <h2>How leaks are found</h2>
 *
 * Netty reports a leak only when a tracked buffer that was never released has been garbage-collected
 * <em>and</em> its detector polls its reference queue, which it does on the next tracked allocation. The
 * extension installs a {@link ResourceLeakDetector.LeakListener} with {@link ByteBufUtil#setLeakListener}
 * that collects every report, and {@link #detectLeaks()} forces the reports out: it runs
 * {@link System#gc()} twice, each time waiting (at most 100 ms) until a sentinel weak
 * reference has been enqueued — which shows the JVM's reference handler has processed that collection —
 * and then allocates and releases one tracked buffer so the detector polls its queue. The second round
 * guarantees that every reference cleared by the first collection has been enqueued and reported.
 *
 * <p>Run tests with {@code -Dio.netty.leakDetection.level=paranoid} (the parent pom does): then every
 * buffer is tracked and every report carries the access records that show where the buffer was created
 * and touched. At {@code simple} or {@code advanced} only a sample of buffers is tracked (the flush raises
 * the level to {@code paranoid} for its own probe allocation so queued reports still come out); at
 * {@code disabled} nothing is tracked and the extension finds nothing. Reports also need Netty's logger to
 * have {@code ERROR} enabled (Netty skips reporting otherwise) and {@link System#gc()} to be honoured (not
 * {@code -XX:+DisableExplicitGC}).
 *
 * <h2>Which test fails</h2>
 *
 * <ul>
 *   <li><b>The test that leaked.</b> After each test — after its {@code @AfterEach} methods and the
 *       {@code afterEach} callbacks of extensions registered after this one — the extension checks for
 *       leaks (a full check as in {@link #detectLeaks()}, or the shortcut described under "Cost"). Any leak
 *       reported during the test or by that check fails <em>that</em> test with an {@link AssertionError}
 *       whose message holds every leak record. A buffer that the test (or its {@code @BeforeEach} or
 *       {@code @AfterEach}) allocates and drops unreleased is therefore always blamed on it.
 *   <li><b>The class, in {@code afterAll}, for anything outside a test's window.</b> Leaks already reported
 *       when a test starts (reported during {@code @BeforeAll}, test-instance construction, or between
 *       tests), leaks found by the flush in {@code beforeAll} (left over from before the class started,
 *       e.g. by background threads of an earlier class), and leaks found by the final flush in
 *       {@code afterAll} (after the {@code @AfterAll} methods: buffers dropped in class teardown or by
 *       background work that outlived the last test) are collected per class and fail the class from
 *       {@code afterAll}; JUnit reports that as a failure of the class container, the tests themselves
 *       stay green. Each record in the message says in which window it was reported.
 * </ul>
 *
 * <p>A buffer leaked by a test but kept reachable until after that test ended (say, by a background thread,
 * a class-level field or the test instance) can only be reported once it becomes unreachable; the next
 * check that collects garbage after that reports it, and the test or class whose window that check
 * belongs to fails (see "Cost" for when a check collects). With parallel test execution the flushes of concurrent tests share one
 * detector, so a leak fails whichever concurrent test flushes first. Netty reports each distinct leak
 * record (creation and access stack traces) only once per JVM.
 *
 * <h2>Cost</h2>
 *
 * A full check ({@link #detectLeaks()}) costs two {@link System#gc()} calls, about 5–15 ms on a test-sized
 * heap; nothing sleeps unless the JVM ignores {@link System#gc()}. The classes' {@code beforeAll} and
 * {@code afterAll} always run a full check. After a test the extension skips the collection when it can
 * prove there is nothing new to find: it reads the detector's set of unreleased tracked buffers (a private
 * Netty field, read by reflection) and, when every buffer in it was already alive at the previous full
 * check, only takes the reports Netty has already made — microseconds, which is the common case of a
 * test that releases what it allocates. Any buffer allocated since the previous full check and not
 * released forces a full check, so a buffer a test allocates and drops is always found by that test's
 * check. The one thing the shortcut defers: a buffer that was alive at the previous full check (a class
 * fixture, or a buffer a previous test kept reachable) and is dropped unreleased during this test is
 * found by the next full check — at the latest the class's {@code afterAll}. When the reflection fails
 * (another Netty version, Netty on the module path) every check is a full one.
 */
public final class LeakDetectionExtension
    implements BeforeAllCallback, BeforeEachCallback, AfterEachCallback, AfterAllCallback {

  /** How long one flush round waits for the reference handler after {@link System#gc()}. */
  static final long GC_WAIT_MILLIS = 100;

  private static final Namespace NAMESPACE = Namespace.create(LeakDetectionExtension.class);
  private static final String CLASS_LEAKS = "classLeaks";

  private static final Queue<Leak> REPORTED = new ConcurrentLinkedQueue<>();
  private static final ResourceLeakDetector.LeakListener LISTENER =
      (resourceType, records) -> REPORTED.add(new Leak(resourceType, records));
  private static final Object FLUSH_LOCK = new Object();

  /** The ByteBuf detector's set of trackers of unreleased buffers, or null when it cannot be read. */
  private static final Set<?> UNRELEASED = unreleasedTrackers();

  /** Trackers in {@link #UNRELEASED} after the last full check; guarded by {@link #FLUSH_LOCK}. */
  private static Set<Object> survivors = Collections.newSetFromMap(new IdentityHashMap<>());

  static {
    ByteBufUtil.setLeakListener(LISTENER);
  }

  /** Makes the extension; JUnit calls this once per registration. */
  public LeakDetectionExtension() {}

  /**
   * One leak that Netty's detector reported: a buffer that was garbage-collected without being
   * released.
   *
   * @param resourceType the kind of resource, e.g. {@code ByteBuf}
   * @param records the access records (where it was created and touched), empty when the buffer was
   *     tracked without records
   */
  public record Leak(String resourceType, String records) {
    /** The leak as Netty logs it, with its records. */
    @Override
    public String toString() {
      String head =
          "LEAK: " + resourceType + ".release() was not called before it was garbage-collected.";
      return records.isEmpty()
          ? head + " (no records: run with -Dio.netty.leakDetection.level=paranoid to see where)"
          : head + System.lineSeparator() + records;
    }
  }

  /**
   * Forces out the reports of every tracked buffer that is unreachable now — collects garbage, waits for
   * reference processing, makes Netty's detector poll its queue (twice) — and returns, and forgets, every
   * leak reported since the last call of this method or {@link #drainReportedLeaks()}.
   */
  public static List<Leak> detectLeaks() {
    return check(true);
  }

  /**
   * Like {@link #detectLeaks()}, but skips the garbage collection when every unreleased tracked buffer was
   * already alive at the previous full check (see "Cost" above). What the extension runs after each test.
   */
  static List<Leak> detectNewLeaks() {
    return check(false);
  }

  /** Whether the last check (full or not) skipped the collection; for tests. */
  static volatile boolean lastCheckWasQuick;

  /**
   * Whether the last full check's collections each cleared their sentinel, so that it never waited out
   * the {@value #GC_WAIT_MILLIS} ms bound; for tests.
   */
  static volatile boolean lastCheckCollectedPromptly;

  private static List<Leak> check(boolean full) {
    synchronized (FLUSH_LOCK) {
      ByteBufUtil.setLeakListener(LISTENER); // in case a test replaced it
      boolean quick = !full && onlySurvivorsUnreleased();
      lastCheckWasQuick = quick;
      if (!quick && ResourceLeakDetector.getLevel() != Level.DISABLED) {
        boolean prompt = true;
        for (int round = 0; round < 2 && prompt; round++) {
          prompt =
              collectGarbage(); // if not, System.gc() is ignored: a second round would only wait
          if (prompt) {
            pollDetector();
          }
        }
        lastCheckCollectedPromptly = prompt;
        rememberSurvivors();
      }
      return drainReportedLeaks();
    }
  }

  private static boolean onlySurvivorsUnreleased() {
    if (UNRELEASED == null) {
      return false;
    }
    for (Object tracker : UNRELEASED) {
      if (!survivors.contains(tracker)) {
        return false;
      }
    }
    return true;
  }

  private static void rememberSurvivors() {
    if (UNRELEASED != null) {
      Set<Object> now = Collections.newSetFromMap(new IdentityHashMap<>());
      now.addAll(UNRELEASED);
      survivors = now;
    }
  }

  /** {@code AbstractByteBuf.leakDetector.allLeaks}, read by reflection; null when that fails. */
  private static Set<?> unreleasedTrackers() {
    try {
      Field detectorField =
          Class.forName("io.netty.buffer.AbstractByteBuf").getDeclaredField("leakDetector");
      detectorField.setAccessible(true);
      Object detector = detectorField.get(null);
      Field trackersField = ResourceLeakDetector.class.getDeclaredField("allLeaks");
      trackersField.setAccessible(true);
      Object trackers = trackersField.get(detector);
      return trackers instanceof Set ? (Set<?>) trackers : null;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null; // every check will be a full one
    }
  }

  /**
   * Returns, and forgets, the leaks Netty has reported so far, without collecting garbage: leaks of
   * buffers that are unreachable but not yet collected or polled are not included.
   */
  public static List<Leak> drainReportedLeaks() {
    List<Leak> leaks = new ArrayList<>();
    for (Leak leak; (leak = REPORTED.poll()) != null; ) {
      leaks.add(leak);
    }
    return leaks;
  }

  /**
   * Runs {@link #detectLeaks()} and throws an {@link AssertionError} listing the leaks when there are
   * any. For code that wants a leak check at a point of its own choosing.
   */
  public static void assertNoLeaks() {
    List<Leak> leaks = detectLeaks();
    if (!leaks.isEmpty()) {
      throw new AssertionError(describe(leaks, "found by LeakDetectionExtension.assertNoLeaks()"));
    }
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    Queue<String> classLeaks = new ConcurrentLinkedQueue<>();
    context.getStore(NAMESPACE).put(CLASS_LEAKS, classLeaks);
    addAll(classLeaks, detectLeaks(), "reported before " + name(context) + " started");
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    List<Leak> early = drainReportedLeaks();
    if (!early.isEmpty()) {
      addAll(
          classLeaks(context),
          early,
          "reported before " + name(context) + " started (class setup or between tests)");
    }
  }

  @Override
  public void afterEach(ExtensionContext context) {
    List<Leak> leaks = detectNewLeaks();
    if (!leaks.isEmpty()) {
      throw new AssertionError(describe(leaks, "reported during or right after " + name(context)));
    }
  }

  @Override
  public void afterAll(ExtensionContext context) {
    Queue<String> classLeaks = classLeaks(context);
    addAll(
        classLeaks,
        detectLeaks(),
        "reported after the last test of "
            + name(context)
            + " (class teardown or background work)");
    if (!classLeaks.isEmpty()) {
      StringBuilder sb =
          new StringBuilder(
              classLeaks.size() + " ByteBuf leak(s) outside any test of " + name(context));
      for (String leak : classLeaks) {
        sb.append(System.lineSeparator()).append(leak);
      }
      throw new AssertionError(sb.toString());
    }
  }

  /**
   * Runs {@link System#gc()} and waits until the reference handler has enqueued a sentinel cleared by it.
   * Returns false when the sentinel was not cleared in time (explicit GC disabled).
   */
  private static boolean collectGarbage() {
    ReferenceQueue<Object> queue = new ReferenceQueue<>();
    WeakReference<Object> sentinel = new WeakReference<>(new Object(), queue);
    System.gc();
    try {
      return queue.remove(GC_WAIT_MILLIS) != null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      Reference.reachabilityFence(sentinel);
    }
  }

  /** Allocates and releases one tracked buffer: Netty's detector polls its queue on tracked allocations. */
  private static void pollDetector() {
    Level level = ResourceLeakDetector.getLevel();
    boolean raise = level != Level.PARANOID;
    if (raise) {
      ResourceLeakDetector.setLevel(Level.PARANOID); // sampled levels might not track the probe
    }
    try {
      // Unpooled direct and composite buffers go through the leak detector (unpooled heap ones do
      // not).
      ByteBuf probe = UnpooledByteBufAllocator.DEFAULT.compositeHeapBuffer(1);
      probe.release();
    } finally {
      if (raise) {
        ResourceLeakDetector.setLevel(level);
      }
    }
  }

  @SuppressWarnings("unchecked")
  private static Queue<String> classLeaks(ExtensionContext context) {
    Queue<String> q = context.getStore(NAMESPACE).get(CLASS_LEAKS, Queue.class);
    if (q == null) { // beforeAll did not run for this context (e.g. registered on a method)
      q = new ConcurrentLinkedQueue<>();
      context.getStore(NAMESPACE).put(CLASS_LEAKS, q);
    }
    return q;
  }

  private static void addAll(Queue<String> into, List<Leak> leaks, String window) {
    for (Leak leak : leaks) {
      into.add("[" + window + "] " + leak);
    }
  }

  private static String describe(List<Leak> leaks, String window) {
    StringBuilder sb = new StringBuilder(leaks.size() + " ByteBuf leak(s) " + window);
    for (Leak leak : leaks) {
      sb.append(System.lineSeparator()).append(leak);
    }
    return sb.toString();
  }

  private static String name(ExtensionContext context) {
    return context
        .getTestMethod()
        .map(m -> context.getRequiredTestClass().getSimpleName() + "." + m.getName() + "()")
        .orElseGet(
            () -> context.getTestClass().map(Class::getName).orElse(context.getDisplayName()));
  }
}
