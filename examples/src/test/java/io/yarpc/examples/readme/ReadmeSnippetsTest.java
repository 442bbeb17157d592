package io.yarpc.examples.readme;

import static org.assertj.core.api.Assertions.fail;

import io.yarpc.examples.repo.RepoRoot;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every {@code java} block of the README is a region of the compiled {@link ReadmeSnippets} (or another
 * file in this package), and every region appears in the README: so the README's code compiles against
 * today's API. On a mismatch the message shows both texts; fix the code here first, then the README.
 */
class ReadmeSnippetsTest {
  private static final Pattern START = Pattern.compile("^\\s*// \\[START ([\\w-]+)]\\s*$");
  private static final Pattern END = Pattern.compile("^\\s*// \\[END ([\\w-]+)]\\s*$");

  /** A README code block: where it starts (1-based line of its first code line) and its text. */
  record Block(int line, String text) {}

  @Test
  void everyReadmeJavaBlockIsACompiledRegionAndBack() throws IOException {
    Path root = RepoRoot.find();
    List<Block> blocks =
        javaBlocks(Files.readAllLines(root.resolve("README.md"), StandardCharsets.UTF_8));
    Map<String, String> regions =
        regions(root.resolve("examples/src/test/java/io/yarpc/examples/readme"));

    List<String> problems = new ArrayList<>();
    List<String> used = new ArrayList<>();
    for (Block b : blocks) {
      String match = null;
      for (Map.Entry<String, String> r : regions.entrySet()) {
        if (r.getValue().equals(b.text())) {
          match = r.getKey();
        }
      }
      if (match != null) {
        used.add(match);
        continue;
      }
      String closest = closest(b.text(), regions);
      problems.add(
          "README.md line "
              + b.line()
              + ": this java block is no region of "
              + "examples/src/test/java/io/yarpc/examples/readme/*.java"
              + (closest == null
                  ? ""
                  : "; the closest is '"
                      + closest
                      + "', which differs:\n"
                      + firstDifference(b.text(), regions.get(closest))));
    }
    for (String name : regions.keySet()) {
      if (!used.contains(name)) {
        problems.add("region '" + name + "' is not in README.md; its text:\n" + regions.get(name));
      }
    }
    if (!problems.isEmpty()) {
      fail(String.join("\n\n", problems));
    }
  }

  /** The fenced {@code java} blocks of a Markdown file. */
  static List<Block> javaBlocks(List<String> lines) {
    List<Block> blocks = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).strip().equals("```java")) {
        int start = i + 1;
        int end = start;
        while (end < lines.size() && !lines.get(end).strip().equals("```")) {
          end++;
        }
        blocks.add(new Block(start + 1, normalize(lines.subList(start, end))));
        i = end;
      }
    }
    return blocks;
  }

  /** The {@code // [START name]} ... {@code // [END name]} regions of the Java files in {@code dir}. */
  static Map<String, String> regions(Path dir) throws IOException {
    Map<String, String> regions = new LinkedHashMap<>();
    List<Path> files;
    try (Stream<Path> s = Files.list(dir)) {
      files = s.filter(p -> p.toString().endsWith(".java")).sorted().toList();
    }
    for (Path file : files) {
      List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
      for (int i = 0; i < lines.size(); i++) {
        Matcher start = START.matcher(lines.get(i));
        if (!start.matches()) {
          continue;
        }
        String name = start.group(1);
        int end = i + 1;
        while (end < lines.size()
            && !lines.get(end).matches("^\\s*// \\[END " + Pattern.quote(name) + "]\\s*$")) {
          if (START.matcher(lines.get(end)).matches() || END.matcher(lines.get(end)).matches()) {
            throw new AssertionError(
                file
                    + ":"
                    + (end + 1)
                    + ": region '"
                    + name
                    + "' is not closed before "
                    + lines.get(end).strip());
          }
          end++;
        }
        if (end == lines.size()) {
          throw new AssertionError(file + ":" + (i + 1) + ": region '" + name + "' has no END");
        }
        if (regions.put(name, normalize(lines.subList(i + 1, end))) != null) {
          throw new AssertionError("two regions named '" + name + "'");
        }
        i = end;
      }
    }
    return regions;
  }

  /** Lines without trailing blanks, their common indentation and leading/trailing empty lines. */
  static String normalize(List<String> lines) {
    List<String> out = new ArrayList<>();
    for (String line : lines) {
      out.add(line.stripTrailing());
    }
    while (!out.isEmpty() && out.get(0).isEmpty()) {
      out.remove(0);
    }
    while (!out.isEmpty() && out.get(out.size() - 1).isEmpty()) {
      out.remove(out.size() - 1);
    }
    int indent = Integer.MAX_VALUE;
    for (String line : out) {
      if (!line.isEmpty()) {
        indent = Math.min(indent, line.length() - line.stripLeading().length());
      }
    }
    List<String> dedented = new ArrayList<>();
    for (String line : out) {
      dedented.add(line.isEmpty() ? line : line.substring(indent));
    }
    return String.join("\n", dedented);
  }

  private static String closest(String text, Map<String, String> regions) {
    String best = null;
    int bestScore = 0;
    List<String> lines = List.of(text.split("\n"));
    for (Map.Entry<String, String> r : regions.entrySet()) {
      int score = 0;
      for (String line : r.getValue().split("\n")) {
        if (!line.isBlank() && lines.contains(line)) {
          score++;
        }
      }
      if (score > bestScore) {
        bestScore = score;
        best = r.getKey();
      }
    }
    return best;
  }

  private static String firstDifference(String readme, String region) {
    String[] a = readme.split("\n", -1);
    String[] b = region.split("\n", -1);
    for (int i = 0; i < Math.max(a.length, b.length); i++) {
      String x = i < a.length ? a[i] : "(end of block)";
      String y = i < b.length ? b[i] : "(end of region)";
      if (!x.equals(y)) {
        return "  block line " + (i + 1) + ":\n    README: " + x + "\n    region: " + y;
      }
    }
    return "";
  }
}
