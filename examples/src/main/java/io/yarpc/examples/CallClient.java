package io.yarpc.examples;

import io.yarpc.ClientConfig;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.config.ConfigException;
import io.yarpc.config.YarpcConfig;
import io.yarpc.examples.FlagSet.Flag;
import io.yarpc.peer.ChooserStatus;
import io.yarpc.peer.ConnectionStatus;
import io.yarpc.peer.HasPeerChooser;
import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerStatus;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The client {@code call} calls through: a dispatcher with one outbound, built by {@link YarpcConfig}
 * from a configuration document. With {@code --config FILE --outbound NAME} the document is that file's
 * outbound {@code NAME} and its {@code transports} (its inbounds and other sections are left out); else
 * it is the flags written as one ({@link ClientDocument}), so that every name — a peer list's, an
 * updater's and their keys — means what it means in a file, and has one place: the specs on the class
 * path. Every peer list it builds counts its leases ({@link PeerCounts}). {@link #start()} starts the
 * dispatcher and waits until every peer connected or failed to.
 */
final class CallClient implements AutoCloseable {
  static final String CONFIG_GROUP = "from a configuration file (instead of the flags above)";

  static final List<Flag> CONFIG_FLAGS =
      List.of(
          new Flag("config", "FILE", null, "a yarpc configuration file (YAML or JSON)"),
          new Flag("outbound", "NAME", null, "its outbound to call through"));

  private static final String CALLER = "yarpc-call";
  private static final Duration CONNECT_WAIT = Duration.ofSeconds(5);

  private final Dispatcher dispatcher;
  private final String outbound;
  private final PeerCounts counts;

  private CallClient(Dispatcher dispatcher, String outbound, PeerCounts counts) {
    this.dispatcher = dispatcher;
    this.outbound = outbound;
    this.counts = counts;
  }

  /**
   * The client of the command line, not started: from {@code --config} and {@code --outbound}, or from
   * the transport, service, peer and TLS flags.
   *
   * @throws Flags.UsageException when the flags are missing, conflict, or name what does not exist
   * @throws ConfigException when the {@code --config} file is not a valid configuration
   * @throws java.io.UncheckedIOException when the {@code --config} file cannot be read
   */
  static CallClient create(Flags flags, Function<String, String> environment)
      throws Flags.UsageException {
    if (flags.has("config")) {
      return fromConfig(flags, environment);
    }
    if (flags.has("outbound")) {
      throw new Flags.UsageException("--outbound needs --config");
    }
    ClientDocument document = ClientDocument.of(flags);
    try {
      return load(document.root(), document.outbound(), environment);
    } catch (ConfigException e) {
      throw new Flags.UsageException(document.explain(e));
    }
  }

  private static CallClient fromConfig(Flags flags, Function<String, String> environment)
      throws Flags.UsageException {
    String outbound = flags.required("outbound");
    List<Flag> refused = new ArrayList<>(ClientDocument.FLAGS);
    refused.addAll(ClientDocument.PEER_FLAGS);
    refused.addAll(TlsFlags.CALL);
    for (Flag f : refused) {
      String flag = f.name();
      if (flags.has(flag)) {
        throw new Flags.UsageException(
            "--" + flag + " cannot be used with --config (the outbound comes from the file)");
      }
    }
    Path file = Path.of(flags.get("config", null));
    Map<String, Object> document = YarpcConfig.parse(file);
    Object outbounds = document.get("outbounds");
    if (!(outbounds instanceof Map) || !((Map<?, ?>) outbounds).containsKey(outbound)) {
      throw new Flags.UsageException(
          file
              + " has no outbound \""
              + outbound
              + "\"; its outbounds: "
              + (outbounds instanceof Map ? ((Map<?, ?>) outbounds).keySet() : "none"));
    }
    Map<String, Object> client = new LinkedHashMap<>(); // not the server's metrics, logs, inbounds
    if (document.containsKey("transports")) {
      client.put("transports", document.get("transports"));
    }
    client.put("outbounds", Map.of(outbound, ((Map<?, ?>) outbounds).get(outbound)));
    return load(client, outbound, environment);
  }

  private static CallClient load(
      Map<String, Object> document, String outbound, Function<String, String> environment) {
    PeerCounts counts = new PeerCounts();
    YarpcConfig.Loader loader = YarpcConfig.loader().environment(environment);
    counts.install(loader);
    Dispatcher dispatcher =
        loader.load(CALLER, document).shutdownGracePeriod(Duration.ZERO).build();
    return new CallClient(dispatcher, outbound, counts);
  }

  /**
   * Starts the client, then waits until each of the outbound's peers has connected or failed to (at most
   * {@link #CONNECT_WAIT}), so that a call's timeout measures the call rather than the JVM warming up
   * and connecting, and a list's first calls are spread over all its peers. A peer that cannot be reached
   * is left for the calls to report.
   */
  void start() throws InterruptedException {
    dispatcher.start();
    PeerChooser chooser = chooser();
    long until = System.nanoTime() + CONNECT_WAIT.toNanos();
    while (chooser != null && !settled(chooser.introspect()) && System.nanoTime() - until < 0) {
      TimeUnit.MILLISECONDS.sleep(5);
    }
  }

  /** Whether every peer is available, or unavailable for a reason (a connection attempt failed). */
  private static boolean settled(ChooserStatus status) {
    for (PeerStatus p : status.peers()) {
      boolean attempted =
          p.status() == ConnectionStatus.AVAILABLE
              || (p.status() == ConnectionStatus.UNAVAILABLE && p.unavailableReason() != null);
      if (!attempted) {
        return false;
      }
    }
    return true;
  }

  /** Where calls go. */
  ClientConfig clientConfig() {
    return dispatcher.clientConfig(outbound);
  }

  /** The leases the outbound's peer list gave, by peer (none when its chooser is not a list). */
  PeerCounts counts() {
    return counts;
  }

  /** The outbound's peer chooser, or null when its outbound has none. */
  PeerChooser chooser() {
    Outbounds o = dispatcher.outbounds().get(outbound);
    return o != null && o.unary() instanceof HasPeerChooser
        ? ((HasPeerChooser) o.unary()).chooser()
        : null;
  }

  /** Stops the client at once (no grace period). */
  @Override
  public void close() {
    dispatcher.stop();
  }
}
