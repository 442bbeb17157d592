package io.yarpc.benchmarks.load;

import com.google.gson.GsonBuilder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The results of one harness run: every cell, the run's settings and environment; printed as markdown
 * tables (each row with its ratio to plain grpc-java at the same size and in-flight count) and written as
 * JSON.
 */
public final class LoadReport {
  private final Map<String, Object> environment;
  private final List<CellResult> cells;

  LoadReport(Map<String, Object> environment, List<CellResult> cells) {
    this.environment = environment;
    this.cells = List.copyOf(cells);
  }

  /** Every cell, in the order they ran. */
  public List<CellResult> cells() {
    return cells;
  }

  /** The run's settings and environment (options, JVM, cores, load average). */
  public Map<String, Object> environment() {
    return environment;
  }

  /** The plain grpc-java cell with the same mode, size and in-flight count, or null. */
  CellResult baseline(CellResult c) {
    for (CellResult b : cells) {
      if (b.system().equals(EchoSystem.GRPC_JAVA)
          && b.mode().equals(c.mode())
          && b.size() == c.size()
          && b.inflight() == c.inflight()) {
        return b;
      }
    }
    return null;
  }

  /** The results as markdown: a unary table and, if streams ran, a streaming table. */
  public String toMarkdown() {
    StringBuilder sb = new StringBuilder();
    sb.append(
        "| system | size | in flight | calls/s | × | p50 µs | p90 µs | p99 µs | server B/call | × "
            + "| client B/call | × | CPU µs/call | × |\n");
    sb.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for (CellResult c : cells) {
      if (c.mode().equals("unary")) {
        row(sb, c);
      }
    }
    boolean streams = cells.stream().anyMatch(c -> c.mode().equals("stream"));
    if (streams) {
      sb.append(
          "\n| gRPC stream | size | window | messages/s | × | p50 µs | p90 µs | p99 µs | server B/msg | × "
              + "| client B/msg | × | CPU µs/msg | × |\n");
      sb.append("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
      for (CellResult c : cells) {
        if (c.mode().equals("stream")) {
          row(sb, c);
        }
      }
    }
    sb.append(
        "\n× = ratio to plain grpc-java at the same size and in-flight count (calls/s: higher is better; "
            + "bytes and CPU: lower is better).\n");
    return sb.toString();
  }

  private void row(StringBuilder sb, CellResult c) {
    CellResult b = baseline(c);
    sb.append("| ")
        .append(c.system())
        .append(" | ")
        .append(size(c.size()))
        .append(" | ")
        .append(c.inflight())
        .append(" | ");
    if (!c.ok()) {
      sb.append("failed: ")
          .append(c.error() == null ? "no calls completed" : oneLine(c.error()))
          .append(" | | | | | | | | | | |\n");
      return;
    }
    boolean base = b != null && b.ok() && b != c;
    sb.append(String.format(Locale.ROOT, "%,.0f", c.callsPerSecond()))
        .append(" | ")
        .append(base ? ratio(c.callsPerSecond(), b.callsPerSecond()) : b == c ? "1" : "")
        .append(" | ")
        .append(micros(c.p50Micros()))
        .append(" | ")
        .append(micros(c.p90Micros()))
        .append(" | ")
        .append(micros(c.p99Micros()))
        .append(" | ")
        .append(bytes(c.serverBytesPerCall()))
        .append(" | ")
        .append(base ? ratio(c.serverBytesPerCall(), b.serverBytesPerCall()) : b == c ? "1" : "")
        .append(" | ")
        .append(bytes(c.clientBytesPerCall()))
        .append(" | ")
        .append(base ? ratio(c.clientBytesPerCall(), b.clientBytesPerCall()) : b == c ? "1" : "")
        .append(" | ")
        .append(micros(c.cpuMicrosPerCall()))
        .append(" | ")
        .append(base ? ratio(c.cpuMicrosPerCall(), b.cpuMicrosPerCall()) : b == c ? "1" : "")
        .append(" |");
    if (c.errors() > 0) {
      sb.append(" ")
          .append(c.errors())
          .append(" errors: ")
          .append(oneLine(String.valueOf(c.error())));
    }
    sb.append('\n');
  }

  private static String oneLine(String s) {
    String t = s.replace('\n', ' ').replace('|', '/');
    return t.length() > 120 ? t.substring(0, 117) + "..." : t;
  }

  static String size(int bytes) {
    if (bytes >= 1 << 20 && bytes % (1 << 20) == 0) {
      return (bytes >> 20) + " MiB";
    }
    if (bytes >= 1 << 10 && bytes % (1 << 10) == 0) {
      return (bytes >> 10) + " KiB";
    }
    return bytes + " B";
  }

  /** Decimal units, three significant digits: {@code 6.41 KB}, {@code 1.08 MB}. */
  static String bytes(double b) {
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

  private static String ratio(double v, double base) {
    return base > 0 ? String.format(Locale.ROOT, "%.2f", v / base) : "";
  }

  /** The results as a JSON document: {@code environment}, then {@code unary} and {@code stream} rows. */
  public String toJson() {
    Map<String, Object> root = new LinkedHashMap<>();
    root.put("environment", environment);
    List<Object> unary = new ArrayList<>();
    List<Object> stream = new ArrayList<>();
    for (CellResult c : cells) {
      (c.mode().equals("stream") ? stream : unary).add(c.toJson(baseline(c), true));
    }
    root.put("unary", unary);
    root.put("stream", stream);
    return new GsonBuilder()
        .setPrettyPrinting()
        .serializeNulls()
        .disableHtmlEscaping()
        .create()
        .toJson(root);
  }

  /** Writes {@link #toJson()} to {@code path}, creating its directory. */
  public void writeJson(Path path) throws IOException {
    Path parent = path.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    Files.writeString(path, toJson() + "\n", StandardCharsets.UTF_8);
  }
}
