package io.yarpc.examples.repo;

import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every reference to the design notes names a file and a section that exist: {@code docs/spec/wire-grpc.md
 * §4.1}, or a bare {@code §4.2} after such a reference in the same file (which it then refers to). Older
 * forms that point nowhere a reader can follow ({@code spec: wire-grpc 4.1}, {@code spec {@code model.md}
 * 2.4}, {@code Spec section 2.1}, {@code wire-tchannel spec §7}) fail the test.
 */
class SpecReferencesTest {
  private static final Set<String> EXTENSIONS = Set.of("java", "md", "xml", "proto", "js", "py");
  private static final Set<String> SKIPPED_DIRS = Set.of(".git", "target", "node_modules", ".mvn");

  private static final Pattern REFERENCE = Pattern.compile("docs/spec/([\\w-]+\\.md)");
  private static final Pattern SECTION = Pattern.compile("§(\\d+(?:\\.\\d+)*)");
  private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(\\d+(?:\\.\\d+)*)\\.?\\s");

  /** A spec cited without its path: "spec: wire-grpc 4.1", "spec {@code model.md} 2.4", "Spec section 2". */
  private static final Pattern OLD_FORM =
      Pattern.compile(
          "(?i)\\bspec\\b\\s*(?::|\\{@code|§|section\\b|\\d)|(?<!docs/spec/)\\b(?:model|wire-http|wire-grpc|wire-tchannel)\\.md\\b");

  @Test
  void everySpecReferenceNamesAFileAndSectionThatExist() throws IOException {
    Path root = RepoRoot.find();
    Path specDir = root.resolve("docs/spec");
    Map<String, Set<String>> sections = new HashMap<>();
    List<String> problems = new ArrayList<>();
    int references = 0;

    for (Path file : sourceFiles(root)) {
      if (file.startsWith(specDir)
          || file.getFileName().toString().equals("SpecReferencesTest.java")) {
        continue; // the notes refer to their own sections and to each other by name; this file
        // shows old forms
      }
      String rel = root.relativize(file).toString();
      List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
      String current = null; // the spec file the last full reference in this file named
      for (int n = 0; n < lines.size(); n++) {
        String line = lines.get(n);
        Matcher old = OLD_FORM.matcher(line);
        if (old.find()) {
          problems.add(
              rel
                  + ":"
                  + (n + 1)
                  + ": write spec references as docs/spec/<file>.md §<section>: "
                  + line.strip());
        }
        // Walk the line's full references and section marks in order.
        Matcher ref = REFERENCE.matcher(line);
        Matcher sec = SECTION.matcher(line);
        int pos = 0;
        while (true) {
          boolean hasRef = ref.find(pos);
          int refAt = hasRef ? ref.start() : Integer.MAX_VALUE;
          boolean hasSec = sec.find(pos);
          int secAt = hasSec ? sec.start() : Integer.MAX_VALUE;
          if (!hasRef && !hasSec) {
            break;
          }
          if (refAt < secAt) {
            current = ref.group(1);
            references++;
            if (!Files.isRegularFile(specDir.resolve(current))) {
              problems.add(rel + ":" + (n + 1) + ": docs/spec/" + current + " does not exist");
              current = null;
            }
            pos = ref.end();
          } else {
            String section = sec.group(1);
            if (current == null) {
              problems.add(
                  rel
                      + ":"
                      + (n + 1)
                      + ": §"
                      + section
                      + " follows no docs/spec/<file>.md reference");
            } else if (!sections
                .computeIfAbsent(current, f -> headings(specDir.resolve(f)))
                .contains(section)) {
              problems.add(
                  rel + ":" + (n + 1) + ": docs/spec/" + current + " has no section " + section);
            }
            pos = sec.end();
          }
        }
      }
    }
    if (!problems.isEmpty()) {
      fail(problems.size() + " broken spec reference(s):\n" + String.join("\n", problems));
    }
    if (references == 0) {
      fail(
          "found no docs/spec reference at all under "
              + root
              + ": is the scan looking in the right place?");
    }
  }

  private static List<Path> sourceFiles(Path root) throws IOException {
    try (Stream<Path> s = Files.walk(root)) {
      return s.filter(Files::isRegularFile)
          .filter(
              p -> {
                for (Path part : root.relativize(p)) {
                  if (SKIPPED_DIRS.contains(part.toString())) {
                    return false;
                  }
                }
                String name = p.getFileName().toString();
                int dot = name.lastIndexOf('.');
                return dot > 0 && EXTENSIONS.contains(name.substring(dot + 1));
              })
          .sorted()
          .toList();
    }
  }

  private static Set<String> headings(Path file) {
    Set<String> ids = new HashSet<>();
    try {
      for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        Matcher m = HEADING.matcher(line);
        if (m.find()) {
          ids.add(m.group(1));
        }
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return ids;
  }
}
