package io.yarpc.examples.readme;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.yarpc.examples.repo.RepoRoot;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.xml.sax.InputSource;

/**
 * The README's "Add it to your build" section is enough to build a project: a fresh Maven project whose
 * {@code pom.xml} is that section's {@code xml} blocks (and nothing else but its coordinates), with the
 * README's whole-file snippets as its sources and the example's {@code keyvalue.proto}, builds offline and
 * runs a snippet.
 *
 * <p>The yarpc-java artifacts are not installed during {@code mvn verify}; the project resolves them from a
 * temporary local repository: every file of this build's local repository linked (not copied), but {@code
 * io/yarpc}, which holds this reactor's freshly packaged jars and their poms instead. The test needs those
 * jars (the reactor builds every library module before {@code examples}); without them, e.g. run from an
 * IDE, it is skipped, unless {@code YARPC_REQUIRE_PEERS} is set. The child Maven is killed after {@link
 * #CHILD_LIMIT}.
 */
class ReadmeBuildTest {
  private static final Duration CHILD_LIMIT = Duration.ofMinutes(4);
  private static final String SECTION = "## Add it to your build";
  private static final String SNIPPETS_SECTION = "## Write a service, write a client";

  /** The snippet the fresh project runs: it needs the code generated from keyvalue.proto. */
  private static final String RUN_CLASS = "KeyValueExample";

  private static final List<String> RUN_EXPECTS =
      List.of("k = v", "INVALID_ARGUMENT: key is required, key must not be empty");

  /** The README's versions are the build's: each property, plugin and extension named in both. */
  @Test
  void readmeVersionsAreTheBuildsVersions() throws IOException {
    Path root = RepoRoot.find();
    String xml = String.join("\n", xmlBlocks(readme(root), SECTION));
    String parent = Files.readString(root.resolve("pom.xml"));

    Map<String, String> buildProperties = elements(sectionOf(parent, "properties"));
    Map<String, String> readmeProperties = elements(sectionOf(xml, "properties"));
    assertThat(readmeProperties)
        .as("the README's <properties>")
        .containsEntry("maven.compiler.release", "17")
        .containsEntry("yarpc.version", projectVersion(parent));
    int compared = 0;
    for (Map.Entry<String, String> p : readmeProperties.entrySet()) {
      if (buildProperties.containsKey(p.getKey())) {
        assertThat(p.getValue())
            .as("README property %s (root pom.xml has it too)", p.getKey())
            .isEqualTo(buildProperties.get(p.getKey()));
        compared++;
      }
    }
    assertThat(compared).as("properties compared with the root pom").isGreaterThanOrEqualTo(6);
    String plugin = buildProperties.get("protoc-gen-grpc-java.version");
    String grpc = buildProperties.get("grpc.version");
    if (!plugin.equals(grpc)) {
      assertThat(section(readme(root), SECTION))
          .as("the README says why protoc-gen-grpc-java is not grpc-java's version")
          .contains("it is " + plugin + " rather than " + grpc);
    }

    // Plugins and extensions with a literal version, in the root pom and in examples'
    // (os-maven-plugin).
    Map<String, String> buildVersions =
        literalVersions(parent + Files.readString(root.resolve("examples/pom.xml")));
    Map<String, String> readmeVersions = literalVersions(xml);
    assertThat(readmeVersions)
        .as("plugins and extensions the README pins")
        .containsKeys(
            "os-maven-plugin",
            "protobuf-maven-plugin",
            "maven-compiler-plugin",
            "exec-maven-plugin");
    for (Map.Entry<String, String> v : readmeVersions.entrySet()) {
      assertThat(buildVersions)
          .as("the build's version of %s", v.getKey())
          .containsEntry(v.getKey(), v.getValue());
    }
  }

  @Test
  @Timeout(value = 10, unit = TimeUnit.MINUTES)
  void aFreshProjectFromTheReadmeBuildsAndRunsASnippet() throws Exception {
    Path root = RepoRoot.find();
    String parent = Files.readString(root.resolve("pom.xml"));
    String version = projectVersion(parent);
    List<String> libraries = libraryModules(root);

    List<String> missing = new ArrayList<>();
    for (String module : libraries) {
      Path jar = root.resolve(module).resolve("target").resolve(module + "-" + version + ".jar");
      if (!Files.isRegularFile(jar)) {
        missing.add(root.relativize(jar) + " is missing");
      } else if (newestFile(root.resolve(module).resolve("src/main"))
              .compareTo(Files.getLastModifiedTime(jar))
          > 0) {
        missing.add(root.relativize(jar) + " is older than " + module + "/src/main");
      }
    }
    Path maven = mavenExecutable();
    if (maven == null) {
      missing.add("no mvn (neither the yarpc.test.mavenHome property nor mvn on the PATH)");
    }
    requireOrSkip(
        missing.isEmpty(),
        "it needs this reactor's packaged jars and Maven, and "
            + String.join("; ", missing)
            + " (run it through Maven: mvn -B -ntp verify -pl examples -am)");

    Path work = Files.createTempDirectory("yarpc-readme-build");
    Path project = work.resolve("project");
    Path repo = work.resolve("repository");
    boolean passed = false;
    try {
      String readme = readme(root);
      writeProject(root, readme, project);
      long linked = linkLocalRepository(localRepository().toAbsolutePath(), repo);
      installReactor(root, version, libraries, repo);

      List<String> command =
          List.of(
              maven.toString(),
              "-B",
              "-o",
              "-q",
              "-Dstyle.color=never",
              "-Dmaven.repo.local=" + repo,
              "package",
              "exec:java",
              "-Dexec.mainClass=" + RUN_CLASS);
      long started = System.nanoTime();
      Run run = run(command, project, work.resolve("mvn.log"));
      long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
      String context =
          String.join(" ", command)
              + "\nin "
              + project
              + " ("
              + linked
              + " files of the local repository linked), "
              + seconds
              + " s; its output:\n"
              + run.output();
      assertThat(run.finished()).as("finished within %s: %s", CHILD_LIMIT, context).isTrue();
      assertThat(run.exitCode()).as("exit status of %s", context).isZero();
      assertThat(
              run.output().replaceAll("\\u001B\\[[;\\d]*m", "").lines().map(String::strip).toList())
          .as("what %s printed: %s", RUN_CLASS, context)
          .containsSubsequence(RUN_EXPECTS);
      assertThat(project.resolve("target/readme-fresh-project-1.0-SNAPSHOT.jar"))
          .as("the packaged jar")
          .isRegularFile();
      assertThat(
              project.resolve(
                  "target/generated-sources/protobuf/grpc-java/io/yarpc/examples/keyvalue/KeyValueGrpc.java"))
          .as("the grpc-java code generated from keyvalue.proto")
          .isRegularFile();
      passed = true;
      System.out.printf(
          "ReadmeBuildTest: the fresh project built and ran %s in %d s%n", RUN_CLASS, seconds);
    } finally {
      if (passed) {
        deleteTree(work);
      } else {
        System.err.println("ReadmeBuildTest: the fresh project is kept in " + work);
      }
    }
  }

  /** The fresh project: pom.xml from the README's build section, its snippets, keyvalue.proto. */
  private static void writeProject(Path root, String readme, Path project) throws IOException {
    List<String> blocks = xmlBlocks(readme, SECTION);
    assertThat(blocks).as("xml blocks of the README's %s", SECTION).hasSizeGreaterThanOrEqualTo(4);
    StringBuilder pom = new StringBuilder();
    pom.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        .append("<project xmlns=\"http://maven.apache.org/POM/4.0.0\"\n")
        .append("         xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\"\n")
        .append("         xsi:schemaLocation=\"http://maven.apache.org/POM/4.0.0")
        .append(" https://maven.apache.org/xsd/maven-4.0.0.xsd\">\n")
        .append("<modelVersion>4.0.0</modelVersion>\n")
        .append("<groupId>com.example</groupId>\n")
        .append("<artifactId>readme-fresh-project</artifactId>\n")
        .append("<version>1.0-SNAPSHOT</version>\n");
    for (String block : blocks) {
      pom.append(block).append('\n');
    }
    pom.append("</project>\n");
    wellFormed(pom.toString());
    Files.createDirectories(project);
    Files.writeString(project.resolve("pom.xml"), pom);

    Path java = Files.createDirectories(project.resolve("src/main/java"));
    Pattern publicClass = Pattern.compile("(?m)^public (?:final )?class (\\w+)");
    List<String> classes = new ArrayList<>();
    for (ReadmeSnippetsTest.Block b :
        ReadmeSnippetsTest.javaBlocks(List.of(section(readme, SNIPPETS_SECTION).split("\n")))) {
      Matcher m = publicClass.matcher(b.text());
      if (m.find()) {
        classes.add(m.group(1));
        Files.writeString(java.resolve(m.group(1) + ".java"), b.text() + "\n");
      }
    }
    assertThat(classes).as("whole-file snippets of %s", SNIPPETS_SECTION).contains(RUN_CLASS);

    Path proto = Files.createDirectories(project.resolve("src/main/proto"));
    Files.copy(
        root.resolve("examples/src/main/proto/yarpc/examples/keyvalue.proto"),
        proto.resolve("keyvalue.proto"));
  }

  /**
   * Recreates {@code from}'s directories under {@code to} and links every file into them, leaving out
   * {@code io/yarpc}; returns the number of files linked. Whatever Maven writes lands in {@code to}.
   */
  private static long linkLocalRepository(Path from, Path to) throws IOException {
    Path yarpc = from.resolve("io/yarpc");
    long[] linked = {0};
    Files.walkFileTree(
        from,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs)
              throws IOException {
            if (dir.equals(yarpc)) {
              return FileVisitResult.SKIP_SUBTREE;
            }
            Files.createDirectories(to.resolve(from.relativize(dir).toString()));
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
              throws IOException {
            Files.createSymbolicLink(to.resolve(from.relativize(file).toString()), file);
            linked[0]++;
            return FileVisitResult.CONTINUE;
          }
        });
    return linked[0];
  }

  /** This reactor's artifacts, in the standard layout: the libraries, the parent pom and the BOM. */
  private static void installReactor(Path root, String version, List<String> libraries, Path repo)
      throws IOException {
    for (String module : libraries) {
      Path dir = Files.createDirectories(repo.resolve("io/yarpc").resolve(module).resolve(version));
      String base = module + "-" + version;
      Files.copy(
          root.resolve(module).resolve("target").resolve(base + ".jar"),
          dir.resolve(base + ".jar"),
          StandardCopyOption.REPLACE_EXISTING);
      Files.copy(
          root.resolve(module).resolve("pom.xml"),
          dir.resolve(base + ".pom"),
          StandardCopyOption.REPLACE_EXISTING);
    }
    for (Map.Entry<String, Path> pom :
        Map.of(
                "yarpc-parent",
                root.resolve("pom.xml"),
                "yarpc-bom",
                root.resolve("yarpc-bom/pom.xml"))
            .entrySet()) {
      Path dir =
          Files.createDirectories(repo.resolve("io/yarpc").resolve(pom.getKey()).resolve(version));
      Files.copy(
          pom.getValue(),
          dir.resolve(pom.getKey() + "-" + version + ".pom"),
          StandardCopyOption.REPLACE_EXISTING);
    }
  }

  record Run(boolean finished, int exitCode, String output) {}

  /** Runs {@code command} in {@code dir} with this JVM's Java, at most {@link #CHILD_LIMIT}. */
  private static Run run(List<String> command, Path dir, Path log)
      throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
    pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
    for (String inherited : List.of("MAVEN_OPTS", "MAVEN_CONFIG", "MAVEN_ARGS", "MAVEN_BASEDIR")) {
      pb.environment().remove(inherited); // what the Maven running this test was given
    }
    pb.redirectErrorStream(true).redirectOutput(log.toFile());
    Process p = pb.start();
    boolean finished = p.waitFor(CHILD_LIMIT.toSeconds(), TimeUnit.SECONDS);
    if (!finished) {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
      p.waitFor(30, TimeUnit.SECONDS);
    }
    return new Run(
        finished, finished ? p.exitValue() : -1, Files.readString(log, StandardCharsets.UTF_8));
  }

  /** The Maven running this build (surefire passes its home), else {@code mvn} on the PATH. */
  private static Path mavenExecutable() {
    String home = System.getProperty("yarpc.test.mavenHome", "");
    if (!home.isEmpty() && Files.isExecutable(Path.of(home, "bin", "mvn"))) {
      return Path.of(home, "bin", "mvn");
    }
    for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "mvn"))) {
        return Path.of(dir, "mvn");
      }
    }
    return null;
  }

  /** This build's local repository (surefire passes it), else {@code ~/.m2/repository}. */
  private static Path localRepository() {
    String configured = System.getProperty("yarpc.test.localRepository", "");
    return configured.isEmpty()
        ? Path.of(System.getProperty("user.home"), ".m2", "repository")
        : Path.of(configured);
  }

  /** The artifacts yarpc-bom manages: the library modules, each a directory of the root. */
  private static List<String> libraryModules(Path root) throws IOException {
    String bom = Files.readString(root.resolve("yarpc-bom/pom.xml"));
    List<String> modules = new ArrayList<>();
    Matcher m =
        Pattern.compile("<artifactId>([^<]+)</artifactId>\\s*<version>\\$\\{project.version}")
            .matcher(bom);
    while (m.find()) {
      modules.add(m.group(1).strip());
    }
    assertThat(modules).as("yarpc-bom's artifacts").contains("yarpc-core");
    return modules;
  }

  private static void requireOrSkip(boolean available, String why) {
    if (System.getenv("YARPC_REQUIRE_PEERS") != null && !available) {
      fail("YARPC_REQUIRE_PEERS is set and this test cannot run: " + why);
    }
    Assumptions.assumeTrue(available, "skipped: " + why);
  }

  private static String readme(Path root) throws IOException {
    return Files.readString(root.resolve("README.md"), StandardCharsets.UTF_8);
  }

  /** A {@code ## } section of the README, up to the next one. */
  private static String section(String readme, String heading) {
    int start = readme.indexOf("\n" + heading + "\n");
    assertThat(start).as("README section %s", heading).isNotNegative();
    int end = readme.indexOf("\n## ", start + 1);
    return readme.substring(start + 1, end < 0 ? readme.length() : end);
  }

  /** The fenced {@code xml} blocks of a README section. */
  static List<String> xmlBlocks(String readme, String heading) {
    List<String> blocks = new ArrayList<>();
    Matcher m = Pattern.compile("(?ms)^```xml\\n(.*?)^```$").matcher(section(readme, heading));
    while (m.find()) {
      blocks.add(m.group(1));
    }
    return blocks;
  }

  /** The text between {@code <name>} and {@code </name>} (the first such element). */
  private static String sectionOf(String xml, String name) {
    Matcher m =
        Pattern.compile("(?s)<" + Pattern.quote(name) + ">(.*?)</" + Pattern.quote(name) + ">")
            .matcher(xml);
    assertThat(m.find()).as("<%s> in %s", name, xml).isTrue();
    return m.group(1);
  }

  /** Simple {@code <key>value</key>} elements, in order. */
  private static Map<String, String> elements(String xml) {
    Map<String, String> out = new LinkedHashMap<>();
    Matcher m = Pattern.compile("<([\\w.-]+)>([^<]*)</\\1>").matcher(xml);
    while (m.find()) {
      out.put(m.group(1), m.group(2).strip());
    }
    return out;
  }

  /** artifactId to version, for every {@code <artifactId>} directly followed by a literal version. */
  private static Map<String, String> literalVersions(String xml) {
    Map<String, String> out = new LinkedHashMap<>();
    Matcher m =
        Pattern.compile("<artifactId>([^<]+)</artifactId>\\s*<version>([^<$]+)</version>")
            .matcher(xml);
    while (m.find()) {
      out.put(m.group(1).strip(), m.group(2).strip());
    }
    return out;
  }

  private static String projectVersion(String parentPom) {
    Matcher m =
        Pattern.compile("<artifactId>yarpc-parent</artifactId>\\s*<version>([^<]+)</version>")
            .matcher(parentPom);
    assertThat(m.find()).as("yarpc-parent's version").isTrue();
    return m.group(1).strip();
  }

  private static void wellFormed(String xml) {
    try {
      DocumentBuilderFactory.newInstance()
          .newDocumentBuilder()
          .parse(new InputSource(new java.io.StringReader(xml)));
    } catch (Exception e) {
      throw new AssertionError("the pom built from the README is not well-formed XML:\n" + xml, e);
    }
  }

  private static FileTime newestFile(Path dir) throws IOException {
    FileTime newest = FileTime.fromMillis(0);
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
        FileTime t = Files.getLastModifiedTime(f);
        if (t.compareTo(newest) > 0) {
          newest = t;
        }
      }
    }
    return newest;
  }

  /** Deletes a tree without following links: the linked repository's targets stay untouched. */
  private static void deleteTree(Path dir) throws IOException {
    Files.walkFileTree(
        dir,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
              throws IOException {
            Files.delete(file);
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
            Files.delete(d);
            return FileVisitResult.CONTINUE;
          }
        });
  }
}
