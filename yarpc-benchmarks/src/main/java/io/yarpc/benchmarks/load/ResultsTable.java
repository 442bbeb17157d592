package io.yarpc.benchmarks.load;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The README's Performance results tables, from a harness run: a header line (when, machine, load average,
 * processes, Netty I/O, command), a unary table, a streaming table if streams ran, and a note on cells
 * whose warm-up did not settle; each figure next to its ratio to plain grpc-java at the same size and
 * in-flight count. As markdown, or as aligned plain text. {@code java -jar yarpc-benchmarks.jar report
 * --json load-results.json [--markdown]} prints them from a results file ({@link #main}).
 */
final class ResultsTable {
  private static final List<String> COLUMNS =
      List.of(
          "calls/s",
          "×",
          "p50 µs",
          "p90 µs",
          "p99 µs",
          "server CPU µs/call",
          "×",
          "server B/call",
          "×",
          "client CPU µs/call",
          "×",
          "client B/call",
          "×");

  private ResultsTable() {}

  /**
   * The {@code report} subcommand: prints the tables of {@code --json PATH}, as markdown with {@code
   * --markdown}, else as plain text.
   *
   * @return the process exit code: 0, 1 when the file cannot be read, 2 for bad arguments
   */
  static int main(PrintStream out, PrintStream err, String... args) {
    Path json = null;
    boolean markdown = false;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--json":
          if (i + 1 >= args.length) {
            return usage(err, "--json needs a value");
          }
          json = Path.of(args[++i]);
          break;
        case "--markdown":
          markdown = true;
          break;
        case "--help":
        case "-h":
          out.println(usage());
          return 0;
        default:
          return usage(err, "unknown option " + args[i]);
      }
    }
    if (json == null) {
      return usage(err, "--json is missing");
    }
    try {
      out.print(render(LoadReport.read(json), markdown));
      return 0;
    } catch (IOException | IllegalArgumentException e) {
      err.println("cannot read " + json + ": " + e.getMessage());
      return 1;
    }
  }

  private static int usage(PrintStream err, String problem) {
    err.println(problem);
    err.println(usage());
    return 2;
  }

  /** The usage text of the {@code report} subcommand. */
  static String usage() {
    return String.join(
        "\n",
        "usage: java -jar yarpc-benchmarks.jar report --json PATH [--markdown]",
        "  --json PATH   the results file of a load run (load --json PATH)",
        "  --markdown    markdown tables, as in the README (default: aligned plain text)");
  }

  /** The header line, the tables and the warm-up note of {@code report}. */
  static String render(LoadReport report, boolean markdown) {
    StringBuilder sb = new StringBuilder();
    sb.append(header(report.environment())).append("\n\n");
    table(sb, report, "unary", "system", "in flight", "call", markdown);
    if (report.cells().stream().anyMatch(c -> c.mode().equals("stream"))) {
      sb.append('\n');
      table(sb, report, "stream", "gRPC stream", "window", "msg", markdown);
    }
    sb.append(
        "\n× = ratio to plain grpc-java at the same size and in-flight count (calls/s: higher is "
            + "better; CPU and bytes: lower is better).\n");
    List<String> unstable = new ArrayList<>();
    for (CellResult c : report.cells()) {
      if (c.ok() && !c.warmupStable()) {
        unstable.add(c.system() + " " + c.mode() + " " + size(c.size()) + " × " + c.inflight());
      }
    }
    if (!unstable.isEmpty()) {
      sb.append("Warm-up did not settle (calls/s of 3 consecutive 1 s windows within 5 %) in: ")
          .append(String.join(", ", unstable))
          .append(".\n");
    }
    return sb.toString();
  }

  /** When, where and how the run was made, in one line. */
  static String header(Map<String, Object> env) {
    StringBuilder sb = new StringBuilder();
    sb.append(text(env, "started"));
    if (env.get("finished") != null) {
      sb.append(" – ").append(text(env, "finished"));
    }
    sb.append("; ").append((long) number(env, "processors")).append(" CPUs");
    if (env.get("memoryBytes") != null) {
      sb.append(", ").append(bytes(number(env, "memoryBytes"))).append(" RAM");
    }
    sb.append(", ").append(text(env, "os")).append(", ").append(text(env, "java"));
    if (env.get("maxHeapBytes") != null) {
      sb.append(" (max heap ").append(bytes(number(env, "maxHeapBytes"))).append(')');
    }
    sb.append("; load average ")
        .append(String.format(Locale.ROOT, "%.2f", number(env, "loadAverageAtStart")));
    if (env.get("loadAverageAtEnd") != null) {
      sb.append(" → ").append(String.format(Locale.ROOT, "%.2f", number(env, "loadAverageAtEnd")));
    }
    sb.append("; processes ")
        .append(env.getOrDefault("processes", "shared"))
        .append("; io ")
        .append(text(env, "io"))
        .append("; tls ")
        .append(env.getOrDefault("tls", "none"));
    if (env.get("command") != null) {
      sb.append("; `").append(text(env, "command")).append('`');
    }
    return sb.toString();
  }

  private static void table(
      StringBuilder sb,
      LoadReport report,
      String mode,
      String first,
      String inflight,
      String unit,
      boolean markdown) {
    List<List<String>> rows = new ArrayList<>();
    List<String> head = new ArrayList<>(List.of(first, "size", inflight));
    for (String c : COLUMNS) {
      head.add(
          c.equals("calls/s") && unit.equals("msg")
              ? "messages/s"
              : c.replace("/call", "/" + unit));
    }
    rows.add(head);
    for (CellResult c : report.cells()) {
      if (c.mode().equals(mode)) {
        rows.add(row(c, report.baseline(c)));
      }
    }
    if (markdown) {
      markdown(sb, rows);
    } else {
      aligned(sb, rows);
    }
  }

  /** One cell's row: its figures, each with its ratio to {@code baseline} (null: none ran). */
  static List<String> row(CellResult c, CellResult baseline) {
    List<String> r =
        new ArrayList<>(List.of(c.system(), size(c.size()), String.valueOf(c.inflight())));
    if (!c.ok()) {
      r.add("failed: " + (c.error() == null ? "no calls completed" : oneLine(c.error())));
      while (r.size() < COLUMNS.size() + 3) {
        r.add("");
      }
      return r;
    }
    CellResult b = baseline != null && baseline.ok() ? baseline : null;
    r.add(String.format(Locale.ROOT, "%,.0f", c.callsPerSecond()));
    r.add(ratio(c, b, CellResult::callsPerSecond));
    r.add(micros(c.p50Micros()));
    r.add(micros(c.p90Micros()));
    r.add(micros(c.p99Micros()));
    r.add(micros(c.serverCpuMicrosPerCall()));
    r.add(ratio(c, b, CellResult::serverCpuMicrosPerCall));
    r.add(bytes(c.serverBytesPerCall()));
    r.add(ratio(c, b, CellResult::serverBytesPerCall));
    r.add(micros(c.clientCpuMicrosPerCall()));
    r.add(ratio(c, b, CellResult::clientCpuMicrosPerCall));
    r.add(bytes(c.clientBytesPerCall()));
    r.add(ratio(c, b, CellResult::clientBytesPerCall));
    if (c.errors() > 0) {
      int last = r.size() - 1;
      r.set(
          last, r.get(last) + " " + c.errors() + " errors: " + oneLine(String.valueOf(c.error())));
    }
    return r;
  }

  private static void markdown(StringBuilder sb, List<List<String>> rows) {
    for (int i = 0; i < rows.size(); i++) {
      sb.append("| ").append(String.join(" | ", rows.get(i))).append(" |\n");
      if (i == 0) {
        sb.append("|---|--:|--:|");
        sb.append("--:|".repeat(COLUMNS.size()));
        sb.append('\n');
      }
    }
  }

  private static void aligned(StringBuilder sb, List<List<String>> rows) {
    int[] width = new int[rows.get(0).size()];
    for (List<String> r : rows) {
      for (int i = 0; i < r.size() && i < width.length; i++) {
        if (!r.get(i).startsWith("failed: ")) {
          width[i] = Math.max(width[i], r.get(i).length());
        }
      }
    }
    for (List<String> r : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < r.size(); i++) {
        String v = r.get(i);
        int pad = Math.max(0, width[i] - v.length());
        line.append(i == 0 ? "" : "  ");
        if (i == 0) {
          line.append(v).append(" ".repeat(pad)); // names left, numbers right
        } else {
          line.append(" ".repeat(pad)).append(v);
        }
      }
      sb.append(line.toString().stripTrailing()).append('\n');
    }
  }

  private static String ratio(CellResult c, CellResult b, ToDoubleFunction<CellResult> f) {
    if (b == null) {
      return "";
    }
    if (b == c) {
      return "1";
    }
    double base = f.applyAsDouble(b);
    return base > 0 ? String.format(Locale.ROOT, "%.2f", f.applyAsDouble(c) / base) : "";
  }

  private static String text(Map<String, Object> env, String key) {
    return String.valueOf(env.get(key));
  }

  private static double number(Map<String, Object> env, String key) {
    Object v = env.get(key);
    return v instanceof Number ? ((Number) v).doubleValue() : 0;
  }

  private static String oneLine(String s) {
    String t = s.replace('\n', ' ').replace('|', '/');
    return t.length() > 120 ? t.substring(0, 117) + "..." : t;
  }

  /** A payload size: {@code 350 B}, {@code 10 KiB}, {@code 1 MiB}. */
  static String size(int bytes) {
    if (bytes >= 1 << 20 && bytes % (1 << 20) == 0) {
      return (bytes >> 20) + " MiB";
    }
    if (bytes >= 1 << 10 && bytes % (1 << 10) == 0) {
      return (bytes >> 10) + " KiB";
    }
    return bytes + " B";
  }

  /** Decimal units, three significant digits: {@code 6.41 KB}, {@code 1.08 MB}, {@code 6.30 GB}. */
  static String bytes(double b) {
    if (b >= 1e9) {
      return sig(b / 1e9) + " GB";
    }
    if (b >= 1e6) {
      return sig(b / 1e6) + " MB";
    }
    if (b >= 1e3) {
      return sig(b / 1e3) + " KB";
    }
    return String.format(Locale.ROOT, "%.0f B", b);
  }

  private static String sig(double v) {
    return v >= 100
        ? String.format(Locale.ROOT, "%.0f", v)
        : v >= 10 ? String.format(Locale.ROOT, "%.1f", v) : String.format(Locale.ROOT, "%.2f", v);
  }

  private static String micros(double us) {
    return us >= 100
        ? String.format(Locale.ROOT, "%,.0f", us)
        : String.format(Locale.ROOT, "%.1f", us);
  }
}
