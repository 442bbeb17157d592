package io.yarpc.discovery.internal;

import io.yarpc.config.spi.ConfigContext;
import io.yarpc.config.spi.ConfigSection;
import io.yarpc.config.spi.PeerListUpdaterSpec;
import io.yarpc.discovery.FilePeerListUpdater;
import io.yarpc.internal.GoStrings;
import io.yarpc.peer.PeerList;
import io.yarpc.peer.PeerListUpdater;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * The {@code peers-file} block of a peer list (the name and keys of yarpc-go's documentation example): a
 * {@link FilePeerListUpdater}. Keys: {@code path} (required; relative to the working directory), {@code
 * format} ({@code json} or {@code yaml}; default by the file name) and {@code pollInterval}. The file need
 * not exist when the configuration is loaded. Registered through {@code META-INF/services}.
 */
public final class PeersFileUpdaterSpec implements PeerListUpdaterSpec {
  /** For {@link java.util.ServiceLoader}. */
  public PeersFileUpdaterSpec() {}

  @Override
  public String name() {
    return FilePeerListUpdater.KIND;
  }

  @Override
  public Function<PeerList, PeerListUpdater> buildUpdater(
      ConfigSection c, UnaryOperator<String> identify, ConfigContext context) {
    String path = c.requireString("path");
    FilePeerListUpdater.Format format = c.enumValue("format", FilePeerListUpdater.Format.class);
    java.time.Duration pollInterval = c.duration("pollInterval");
    if (path == null) {
      return null;
    }
    Path file;
    try {
      file = Path.of(path);
    } catch (InvalidPathException e) {
      c.problem("path", "not a file name: " + GoStrings.quote(path));
      return null;
    }
    FilePeerListUpdater.Builder b = FilePeerListUpdater.builder(file).identify(identify);
    if (format != null) {
      b.format(format);
    }
    if (pollInterval != null) {
      c.apply("pollInterval", () -> b.pollInterval(pollInterval));
    }
    if (c.hasProblems()) {
      return null;
    }
    return b::build;
  }
}
