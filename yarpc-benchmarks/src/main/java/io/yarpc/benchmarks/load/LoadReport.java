package io.yarpc.benchmarks.load;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.reflect.TypeToken;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The results of one harness run: every cell, the run's settings and environment; written as JSON and read
 * back ({@link #read}), printed as tables by {@link ResultsTable} (each row with its ratio to plain
 * grpc-java at the same size and in-flight count).
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

  /** The results as markdown: a header line, a unary table and, if streams ran, a streaming table. */
  public String toMarkdown() {
    return ResultsTable.render(this, true);
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

  /**
   * The report a {@link #writeJson} file holds.
   *
   * @throws IOException when the file cannot be read
   * @throws IllegalArgumentException when it is not a harness results file
   */
  public static LoadReport read(Path path) throws IOException {
    JsonObject root;
    try {
      root =
          JsonParser.parseString(Files.readString(path, StandardCharsets.UTF_8)).getAsJsonObject();
    } catch (JsonParseException | IllegalStateException e) {
      throw new IllegalArgumentException(path + " is not JSON: " + e.getMessage(), e);
    }
    if (!root.has("environment") || !root.has("unary")) {
      throw new IllegalArgumentException(
          path + " is not a load harness results file (no environment or unary rows)");
    }
    Map<String, Object> env =
        new Gson()
            .fromJson(root.get("environment"), new TypeToken<Map<String, Object>>() {}.getType());
    List<CellResult> cells = new ArrayList<>();
    for (String mode : List.of("unary", "stream")) {
      if (root.has(mode)) {
        for (JsonElement e : root.getAsJsonArray(mode)) {
          cells.add(CellResult.fromJson(e.getAsJsonObject()));
        }
      }
    }
    return new LoadReport(env, cells);
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
