package io.yarpc.examples.repo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code yarpc-bom} lists every library module of the build (those with an API file; not {@code examples}
 * or {@code yarpc-benchmarks}) at {@code ${project.version}}, and its own version is the parent's.
 */
class BomTest {
  @Test
  void bomListsEveryLibraryModuleAtTheBuildVersion() throws IOException {
    Path root = RepoRoot.find();
    String parent = Files.readString(root.resolve("pom.xml"));
    String bom = Files.readString(root.resolve("yarpc-bom/pom.xml"));

    List<String> libraries = new ArrayList<>();
    for (String module : all(parent, "<module>([^<]+)</module>")) {
      Path pom = root.resolve(module).resolve("pom.xml");
      String text = Files.readString(pom);
      boolean library =
          !text.contains("<packaging>pom</packaging>")
              && !text.contains("<yarpc.api.check>false</yarpc.api.check>");
      if (library) {
        libraries.add(first(text, "</parent>\\s*<artifactId>([^<]+)</artifactId>"));
      }
    }
    assertThat(libraries)
        .as("library modules of the parent pom")
        .contains("yarpc-core")
        .hasSizeGreaterThan(4);

    List<String> listed =
        all(bom, "<artifactId>([^<]+)</artifactId>\\s*<version>\\$\\{project.version}</version>");
    assertThat(listed)
        .as("artifacts yarpc-bom manages at ${project.version}")
        .containsExactlyInAnyOrderElementsOf(libraries);
    assertThat(first(bom, "<artifactId>yarpc-bom</artifactId>\\s*<version>([^<]+)</version>"))
        .as("yarpc-bom's version")
        .isEqualTo(
            first(parent, "<artifactId>yarpc-parent</artifactId>\\s*<version>([^<]+)</version>"));
    assertThat(bom)
        .as("yarpc-bom has no parent, so importing it pins no third-party version")
        .doesNotContain("<parent>");
  }

  private static List<String> all(String text, String regex) {
    List<String> out = new ArrayList<>();
    Matcher m = Pattern.compile(regex).matcher(text);
    while (m.find()) {
      out.add(m.group(1).strip());
    }
    return out;
  }

  private static String first(String text, String regex) {
    Matcher m = Pattern.compile(regex).matcher(text);
    assertThat(m.find()).as("pattern " + regex).isTrue();
    return m.group(1).strip();
  }
}
