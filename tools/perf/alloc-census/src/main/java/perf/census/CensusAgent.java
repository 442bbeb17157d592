package perf.census;

import com.google.monitoring.runtime.instrumentation.AllocationRecorder;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * Counts every allocation the JVM's Java code makes while a census is on, by thread, type and site.
 *
 * <p>Loaded after Google's allocation instrumenter ({@code -javaagent:java-allocation-instrumenter.jar
 * -javaagent:alloc-census.jar=DIR}), which rewrites every class so that each {@code new} reports its
 * object and size. A control thread polls {@code DIR}: the file {@code on} starts a census (from zero),
 * {@code off} ends it and writes {@code DIR/types.txt} and {@code DIR/sites.txt} (lines of bytes, count,
 * then {@code thread | type} or {@code thread | type | site}; digits in thread names folded to {@code N};
 * the site is the first {@value #FRAMES} frames outside this agent and the instrumenter), then {@code
 * done}. Everything runs many times slower under the instrumenter: it is for counting, never for timing.
 * Not seen: what the instrumenter cannot rewrite or reach (instances of capturing lambdas, whose classes
 * are hidden; arrays made through {@code Unsafe}, as behind string concatenation; the JVM's own objects).
 */
public final class CensusAgent {
  static final int FRAMES = 7;

  private static volatile boolean on;
  private static final Map<String, long[]> byType = new ConcurrentHashMap<>();
  private static final Map<String, long[]> bySite = new ConcurrentHashMap<>();
  private static final ThreadLocal<boolean[]> inSampler = ThreadLocal.withInitial(() -> new boolean[1]);
  private static final StackWalker WALKER = StackWalker.getInstance();

  private CensusAgent() {}

  public static void premain(String args) {
    Path dir = Path.of(args == null || args.isEmpty() ? "census" : args);
    AllocationRecorder.addSampler(CensusAgent::sample);
    Thread control = new Thread(() -> control(dir), "alloc-census");
    control.setDaemon(true);
    control.start();
  }

  private static void sample(int count, String desc, Object newObj, long size) {
    if (!on) {
      return;
    }
    boolean[] busy = inSampler.get();
    if (busy[0]) {
      return; // the census's own allocations
    }
    busy[0] = true;
    try {
      String type = count >= 0 ? desc + "[]" : desc;
      String key = Thread.currentThread().getName().replaceAll("[0-9]+", "N") + " | " + type;
      add(byType, key, size);
      String site =
          WALKER.walk(
              frames ->
                  frames
                      .filter(f -> !f.getClassName().startsWith("com.google.monitoring."))
                      .filter(f -> !f.getClassName().startsWith("perf.census."))
                      .limit(FRAMES)
                      .map(CensusAgent::frame)
                      .collect(Collectors.joining(" < ")));
      add(bySite, key + " | " + site, size);
    } finally {
      busy[0] = false;
    }
  }

  private static String frame(StackWalker.StackFrame f) {
    String c = f.getClassName();
    return c.substring(c.lastIndexOf('.') + 1) + "." + f.getMethodName() + ":" + f.getLineNumber();
  }

  private static void add(Map<String, long[]> counts, String key, long size) {
    long[] c = counts.computeIfAbsent(key, k -> new long[2]);
    synchronized (c) {
      c[0] += size;
      c[1]++;
    }
  }

  private static void control(Path dir) {
    try {
      Files.createDirectories(dir);
      while (true) {
        Thread.sleep(100);
        if (Files.deleteIfExists(dir.resolve("on"))) {
          byType.clear();
          bySite.clear();
          on = true;
        }
        if (Files.deleteIfExists(dir.resolve("off"))) {
          on = false;
          Thread.sleep(100); // samplers under way finish
          write(dir.resolve("types.txt"), byType);
          write(dir.resolve("sites.txt"), bySite);
          Files.writeString(dir.resolve("done"), "done\n");
        }
      }
    } catch (IOException | InterruptedException e) {
      System.err.println("alloc-census: control stopped: " + e);
    }
  }

  private static void write(Path file, Map<String, long[]> counts) throws IOException {
    List<Map.Entry<String, long[]>> rows = new ArrayList<>(counts.entrySet());
    rows.sort((a, b) -> Long.compare(b.getValue()[0], a.getValue()[0]));
    try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(file))) {
      for (Map.Entry<String, long[]> e : rows) {
        w.printf("%d %d %s%n", e.getValue()[0], e.getValue()[1], e.getKey());
      }
    }
  }
}
