package io.yarpc.examples.repo;

import java.nio.file.Files;
import java.nio.file.Path;

/** The repository's root directory, found from the test's working directory (the module's). */
public final class RepoRoot {
  private RepoRoot() {}

  /** The nearest directory at or above the working directory holding the parent pom and {@code docs/spec}. */
  public static Path find() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null) {
      if (Files.isRegularFile(dir.resolve("pom.xml"))
          && Files.isDirectory(dir.resolve("docs/spec"))) {
        return dir;
      }
      dir = dir.getParent();
    }
    throw new AssertionError(
        "no repository root (pom.xml and docs/spec) above " + Path.of("").toAbsolutePath());
  }
}
