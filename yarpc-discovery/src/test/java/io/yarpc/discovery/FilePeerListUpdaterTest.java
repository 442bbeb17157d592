package io.yarpc.discovery;

import static io.yarpc.discovery.Fixtures.await;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.Dispatcher;
import io.yarpc.discovery.Fixtures.Callers;
import io.yarpc.discovery.Fixtures.CountingTransport;
import io.yarpc.discovery.Fixtures.RecordingList;
import io.yarpc.discovery.Fixtures.Server;
import io.yarpc.peer.BoundPeerChooser;
import io.yarpc.peer.UpdaterStatus;
import io.yarpc.transport.http.HttpTransport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The file updater with real HTTP servers: the file rewritten while calls run, a Kubernetes ConfigMap
 * volume's symbolic-link swap, polling where the directory cannot be watched, a malformed file keeping
 * the last membership, and nothing touching the list after stop.
 */
@Timeout(120)
class FilePeerListUpdaterTest {
  /** Long enough that only the watch service can be what finds a change within a test. */
  private static final Duration NO_POLLING = Duration.ofHours(1);

  @TempDir Path dir;
  private final List<AutoCloseable> closing = new ArrayList<>();
  private final HttpTransport http = HttpTransport.builder().eventLoopThreads(1).build();

  @AfterEach
  void close() throws Exception {
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
    http.stop();
  }

  private Server server(String name) {
    Server s = new Server(name);
    closing.add(s);
    return s;
  }

  /** Writes {@code content} to {@code file} atomically: another file, renamed over it. */
  private static void replace(Path file, String content) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.writeString(tmp, content, StandardCharsets.UTF_8);
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  private static String yaml(Server... servers) {
    StringBuilder b = new StringBuilder("# the users service\n");
    for (Server s : servers) {
      b.append("- ").append(s.hostPort()).append('\n');
    }
    return b.toString();
  }

  @Test
  void callsFollowTheFileAsItIsRewritten() throws Exception {
    Server one = server("one");
    Server two = server("two");
    Server three = server("three");
    Path file = dir.resolve("peers.yaml");
    replace(file, yaml(one, two));
    CountingTransport counting = new CountingTransport(http);
    RecordingList list = new RecordingList(counting);
    FilePeerListUpdater updater =
        FilePeerListUpdater.builder(file).pollInterval(NO_POLLING).build(list);
    Dispatcher client = Fixtures.client(http, BoundPeerChooser.of(list, updater));
    client.start(); // reads the file
    assertThat(list.peers()).containsExactly(one.hostPort(), two.hostPort());

    try (Callers callers = new Callers(client, 4)) {
      assertThat(await(30, () -> one.calls.get() >= 20 && two.calls.get() >= 20)).isTrue();
      replace(file, yaml(two, three));
      assertThat(await(30, () -> list.peers().equals(List.of(two.hostPort(), three.hostPort()))))
          .as("peers %s", list.peers())
          .isTrue();
      int oneAtRemoval = one.calls.get();
      int threeAtAddition = three.calls.get();
      assertThat(await(30, () -> three.calls.get() >= threeAtAddition + 50)).isTrue();
      callers.stop();
      assertThat(callers.failures).as("failed calls").isEmpty();
      assertThat(one.calls.get()).isLessThanOrEqualTo(oneAtRemoval + 4);
      assertThat(callers.succeeded.get())
          .isEqualTo(one.calls.get() + two.calls.get() + three.calls.get());
    }
    assertThat(list.updates)
        .containsExactly(
            "+[" + one.hostPort() + ", " + two.hostPort() + "] -[]",
            "+[" + three.hostPort() + "] -[" + one.hostPort() + "]");
    UpdaterStatus status = updater.status();
    assertThat(status.kind()).isEqualTo("peers-file");
    assertThat(status.source()).isEqualTo(file.toAbsolutePath().toString());
    assertThat(status.peers()).containsExactly(two.hostPort(), three.hostPort());
    assertThat(status.lastError()).isNull();

    client.stop();
    assertThat(CountingTransport.snapshot(counting.retains))
        .isEqualTo(Map.of(one.hostPort(), 1, two.hostPort(), 1, three.hostPort(), 1));
    assertThat(CountingTransport.snapshot(counting.releases))
        .isEqualTo(CountingTransport.snapshot(counting.retains));
  }

  @Test
  void aConfigMapVolumeSwapsASymbolicLink() throws Exception {
    // The layout the kubelet writes: peers.json -> ..data/peers.json, ..data -> ..<timestamp>; an
    // update writes a new timestamped directory and renames a new ..data link over the old one.
    Path volume = Files.createDirectory(dir.resolve("volume"));
    Path first = Files.createDirectory(volume.resolve("..2026_12_01_10_00_00.1"));
    Files.writeString(first.resolve("peers.json"), "[\"10.0.0.1:8080\", \"10.0.0.2:8080\"]");
    Files.createSymbolicLink(volume.resolve("..data"), first.getFileName());
    Files.createSymbolicLink(volume.resolve("peers.json"), Path.of("..data/peers.json"));
    RecordingList list = new RecordingList(http);
    FilePeerListUpdater updater =
        FilePeerListUpdater.builder(volume.resolve("peers.json"))
            .pollInterval(NO_POLLING)
            .build(list);
    updater.start();
    assertThat(list.peers()).containsExactly("10.0.0.1:8080", "10.0.0.2:8080");

    Path second = Files.createDirectory(volume.resolve("..2026_12_01_10_05_00.2"));
    Files.writeString(
        second.resolve("peers.json"), "[{\"targets\": [\"10.0.0.2:8080\", \"10.0.0.3:8080\"]}]");
    Files.createSymbolicLink(volume.resolve("..data_tmp"), second.getFileName());
    Files.move(
        volume.resolve("..data_tmp"), volume.resolve("..data"), StandardCopyOption.ATOMIC_MOVE);
    assertThat(await(30, () -> list.peers().equals(List.of("10.0.0.2:8080", "10.0.0.3:8080"))))
        .as("peers %s", list.peers())
        .isTrue();
    assertThat(list.updates)
        .containsExactly(
            "+[10.0.0.1:8080, 10.0.0.2:8080] -[]", "+[10.0.0.3:8080] -[10.0.0.1:8080]");
    updater.stop();
  }

  @Test
  void aFileWhoseDirectoryCannotBeWatchedIsPolled() throws Exception {
    Path later = dir.resolve("mounted-later").resolve("peers.yaml"); // no directory to watch yet
    RecordingList list = new RecordingList(http);
    FilePeerListUpdater updater =
        FilePeerListUpdater.builder(later).pollInterval(Duration.ofMillis(50)).build(list);
    updater.start();
    assertThat(updater.status().lastError()).isEqualTo("no such file");
    assertThat(updater.status().source()).isEqualTo(later.toAbsolutePath().toString());
    assertThat(list.peers()).isEmpty();

    Files.createDirectories(later.getParent());
    replace(later, "- 10.0.0.1:8080\n");
    assertThat(await(30, () -> list.peers().equals(List.of("10.0.0.1:8080")))).isTrue();
    assertThat(updater.status().lastError()).isNull();
    updater.stop();
  }

  @Test
  void aBrokenFileKeepsTheLastMembershipAndSaysWhy() throws Exception {
    Path file = dir.resolve("peers.json");
    replace(file, "[\"10.0.0.1:8080\", \"10.0.0.2:8080\"]");
    RecordingList list = new RecordingList(http);
    FilePeerListUpdater updater =
        FilePeerListUpdater.builder(file).pollInterval(Duration.ofMillis(50)).build(list);
    updater.start();
    assertThat(list.peers()).containsExactly("10.0.0.1:8080", "10.0.0.2:8080");

    replace(file, "[\"10.0.0.1:8080\", \"10.0.0.3:8080\""); // cut short
    assertThat(await(30, () -> updater.status().lastError() != null)).isTrue();
    assertThat(updater.status().lastError())
        .isEqualTo("not valid JSON: End of input at line 1 column 34 path $[2]");
    assertThat(await(30, () -> updater.status().consecutiveFailures() >= 3))
        .as("read again at every poll")
        .isTrue();

    replace(file, "[\"10.0.0.1:8080\", \"localhost\"]");
    assertThat(await(30, () -> updater.status().lastError().contains("localhost"))).isTrue();
    assertThat(updater.status().lastError())
        .isEqualTo("[1]: not host:port: \"localhost\" (no port)");

    Files.delete(file);
    assertThat(await(30, () -> updater.status().lastError().contains("no such file"))).isTrue();
    assertThat(list.peers()).containsExactly("10.0.0.1:8080", "10.0.0.2:8080");
    assertThat(list.updates).hasSize(1);
    assertThat(updater.status().peers()).containsExactly("10.0.0.1:8080", "10.0.0.2:8080");

    replace(file, "[\"10.0.0.2:8080\"]");
    assertThat(await(30, () -> list.peers().equals(List.of("10.0.0.2:8080")))).isTrue();
    assertThat(updater.status().lastError()).isNull();
    assertThat(updater.status().consecutiveFailures()).isZero();

    replace(file, "[]"); // an empty list is a membership: no peers
    assertThat(await(30, () -> list.peers().isEmpty())).isTrue();
    assertThat(list.updates)
        .containsExactly(
            "+[10.0.0.1:8080, 10.0.0.2:8080] -[]", "+[] -[10.0.0.1:8080]", "+[] -[10.0.0.2:8080]");

    updater.stop(); // then nothing touches the list
    replace(file, "[\"10.0.0.9:8080\"]");
    Thread.sleep(300); // six poll intervals: a running updater would have read the file
    assertThat(list.updates).hasSize(3);
    assertThat(updater.status().running()).isFalse();
  }

  @Test
  void theFormatFollowsTheFileNameUnlessGiven() {
    assertThat(FilePeerListUpdater.formatOf(Path.of("/etc/peers.JSON")))
        .isEqualTo(FilePeerListUpdater.Format.JSON);
    assertThat(FilePeerListUpdater.formatOf(Path.of("peers.yml")))
        .isEqualTo(FilePeerListUpdater.Format.YAML);
    assertThat(FilePeerListUpdater.formatOf(Path.of("peers")))
        .isEqualTo(FilePeerListUpdater.Format.YAML);
    assertThat(Set.of(FilePeerListUpdater.Format.values())).hasSize(2);
  }
}
