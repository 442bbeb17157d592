package io.yarpc.discovery;

import static java.util.Objects.requireNonNull;

import io.yarpc.discovery.internal.FileWatch;
import io.yarpc.discovery.internal.Membership;
import io.yarpc.discovery.internal.PeersFile;
import io.yarpc.internal.Checks;
import io.yarpc.peer.PeerList;
import io.yarpc.peer.PeerListUpdater;
import io.yarpc.peer.UpdaterStatus;
import io.yarpc.transport.AbstractLifecycle;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link PeerListUpdater} that reads its peers from a file and follows it as it changes: a JSON or YAML
 * list of {@code host:port}, or of target groups {@code {targets: [host:port, ...], labels: {...}}} as
 * Prometheus's file-based discovery writes them (labels are ignored; duplicates count once).
 *
 * <pre>
 * # peers.yaml                          // peers.json
 * - 10.0.0.1:8080                       ["10.0.0.1:8080", "10.0.0.2:8080"]
 * - 10.0.0.2:8080
 * - "[2001:db8::1]:8080"               # IPv6 in brackets, quoted in YAML
 * </pre>
 *
 * <p><b>Following changes.</b> The file's directory is watched ({@link java.nio.file.WatchService}), so a
 * change is read at once, including a Kubernetes ConfigMap volume's swap of a symbolic link; and the file
 * is read every {@link Builder#pollInterval} anyway, because watching misses changes on some file systems.
 * Replace the file atomically (write another file in the same directory, then rename it over this one): a
 * file read while it is half written may look like a shorter list.
 *
 * <p><b>Failures</b> (a missing or unreadable file, bad syntax, an entry that is not {@code host:port},
 * an empty file) keep the last good membership: the list is not touched, {@link #status()} says why
 * ({@code [2]: not host:port: "localhost" (no port)}, its source being the file's path) and the reason is
 * logged once, not at every read. A file that holds an empty list ({@code []}) empties the list.
 *
 * <p><b>Lifecycle and threads.</b> {@link #start()} reads the file before it returns (a failed read does
 * not fail the start), then one daemon thread per updater ({@code yarpc-peers-file}) watches and reads it
 * and calls the list's {@link PeerList#update}. Once {@link #stop()} has returned the list is never called
 * again. Thread-safe.
 */
public final class FilePeerListUpdater extends AbstractLifecycle implements PeerListUpdater {
  /** The updater's kind in configuration ({@code peers-file: {...}}) and in its status. */
  public static final String KIND = "peers-file";

  /** How often the file is read even when no change is reported, unless the builder says otherwise: 5 s. */
  public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(5);

  private static final Logger log = LoggerFactory.getLogger(FilePeerListUpdater.class);

  /** The file's syntax. */
  public enum Format {
    /** JSON (RFC 8259, strict). */
    JSON,
    /** YAML 1.2. */
    YAML
  }

  private final Path path;
  private final Format format;
  private final UnaryOperator<String> identify;
  private final Membership membership;
  private final FileWatch watch;

  private FilePeerListUpdater(Builder b, PeerList list) {
    this.path = b.path;
    this.format = b.format != null ? b.format : formatOf(b.path);
    this.identify = b.identify;
    this.membership = new Membership(list, KIND, path.toString(), log);
    this.watch = new FileWatch(path, b.pollInterval, this::read, "yarpc-peers-file");
  }

  /** A builder for an updater that reads {@code path}. */
  public static Builder builder(Path path) {
    return new Builder(path);
  }

  @Override
  public UpdaterStatus status() {
    return membership.status(isRunning());
  }

  /** Starts watching the file, and reads it. */
  @Override
  protected void doStart() {
    membership.start();
    watch.start();
  }

  /** Stops watching; waits for an update of the list in progress. */
  @Override
  protected void doStop() {
    membership.stop();
    watch.stop();
  }

  /** Reads the file and applies what it lists, or reports why it cannot. */
  private void read() {
    byte[] content;
    try {
      content = Files.readAllBytes(path);
    } catch (NoSuchFileException e) {
      membership.failed("no such file");
      return;
    } catch (IOException e) {
      membership.failed("cannot read it: " + e);
      return;
    }
    List<String> ids = new ArrayList<>();
    try {
      for (String hostPort : PeersFile.parse(content, format)) {
        ids.add(identify.apply(hostPort));
      }
    } catch (RuntimeException e) {
      membership.failed(e.getMessage());
      return;
    }
    membership.succeeded(ids);
  }

  /** JSON for a {@code .json} file, else YAML. */
  static Format formatOf(Path path) {
    Path name = path.getFileName();
    return name != null && name.toString().toLowerCase(Locale.ROOT).endsWith(".json")
        ? Format.JSON
        : Format.YAML;
  }

  @Override
  public String toString() {
    return "FilePeerListUpdater{" + path + "}";
  }

  /** Builds a {@link FilePeerListUpdater}; not thread-safe. */
  public static final class Builder {
    private final Path path;
    private Format format;
    private Duration pollInterval = DEFAULT_POLL_INTERVAL;
    private UnaryOperator<String> identify = UnaryOperator.identity();

    private Builder(Path path) {
      this.path = requireNonNull(path, "path").toAbsolutePath().normalize();
    }

    /** The file's syntax; default JSON for a file whose name ends in {@code .json}, else YAML. */
    public Builder format(Format format) {
      this.format = requireNonNull(format, "format");
      return this;
    }

    /** How often the file is read when no change is reported; positive, default 5 s. */
    public Builder pollInterval(Duration interval) {
      this.pollInterval = Checks.positive(interval, "pollInterval");
      return this;
    }

    /**
     * Turns each {@code host:port} of the file into the identifier the list's transport retains; default
     * unchanged. E.g. {@code hp -> "https://" + hp} for an HTTP outbound over TLS.
     */
    public Builder identify(UnaryOperator<String> identify) {
      this.identify = requireNonNull(identify, "identify");
      return this;
    }

    /** The updater, not started, feeding {@code list}. */
    public FilePeerListUpdater build(PeerList list) {
      return new FilePeerListUpdater(this, requireNonNull(list, "list"));
    }
  }
}
