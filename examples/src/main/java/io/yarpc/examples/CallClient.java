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
import java.nio.file.Files;
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
 * the flags are written as one:
 *
 * <pre>
 * call --transport grpc --service S --peers a:1,b:2 --peer-list random --tls-ca ca.pem
 *
 * outbounds:
 *   S:
 *     grpc:
 *       random: {peers: [a:1, b:2]}     # --peer a:1: peer: a:1
 *                                       # --peer-file F: peers-file: {path: F}
 *                                       # --dns-srv N --dns-server IP:P: dns: {name: N, record: SRV, server: IP:P}
 *       tls: {mode: enforced}           # HTTP over TLS only
 * transports:
 *   grpc:
 *     tls: {caFile: ca.pem}
 * </pre>
 *
 * so that every name — a peer list's, an updater's and their keys — means what it means in a file, and
 * has one place: the specs on the class path. Every peer list it builds counts its leases ({@link
 * PeerCounts}). {@link #start()} starts the dispatcher and waits until every peer connected or failed to.
 */
final class CallClient implements AutoCloseable {
  static final String PEERS_GROUP = "peers (give one of --peer, --peers, --peer-file, --dns-*)";
  static final String CONFIG_GROUP = "from a configuration file (instead of the flags above)";
  static final String DEFAULT_LIST = "round-robin";

  static final List<Flag> FLAGS =
      List.of(
          new Flag("transport", "T", null, "http, grpc or tchannel"),
          new Flag("service", "NAME", null, "the service to call"));
  static final List<Flag> PEER_FLAGS =
      List.of(
          new Flag("peer", "HOST:PORT", null, "the one peer to call"),
          new Flag("peers", "HOST:PORT,...", null, "peers to spread the calls over (may repeat)"),
          new Flag(
              "peer-file",
              "FILE",
              null,
              "the peers listed in a JSON or YAML file, followed as it changes"),
          new Flag("dns-srv", "NAME", null, "the peers are the targets of NAME's SRV records"),
          new Flag("dns-a", "NAME:PORT", null, "the peers are NAME's IPv4 addresses, with PORT"),
          new Flag("dns-aaaa", "NAME:PORT", null, "the peers are NAME's IPv6 addresses, with PORT"),
          new Flag(
              "dns-server",
              "IP[:PORT]",
              "the system's resolvers",
              "the DNS server the --dns-* lookups ask (port 53 unless given)"),
          new Flag(
              "peer-list",
              "NAME",
              DEFAULT_LIST,
              "how calls are spread over the peers: " + String.join(", ", PeerCounts.listNames())));
  static final List<Flag> CONFIG_FLAGS =
      List.of(
          new Flag("config", "FILE", null, "a yarpc configuration file (YAML or JSON)"),
          new Flag("outbound", "NAME", null, "its outbound to call through"));

  private static final String CALLER = "yarpc-call";
  private static final Duration CONNECT_WAIT = Duration.ofSeconds(5);
  private static final List<String> PEER_SOURCES =
      List.of("peer", "peers", "peer-file", "dns-srv", "dns-a", "dns-aaaa");

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
    String transport = flags.required("transport");
    if (!List.of("http", "grpc", "tchannel").contains(transport)) {
      throw new Flags.UsageException(
          "--transport must be http, grpc or tchannel, got \"" + transport + "\"");
    }
    String service = flags.required("service");
    Document document = new Document(service, transport);
    document.peers(flags);
    Map<String, Object> tls = TlsFlags.clientSection(flags);
    if (tls != null) {
      document.tls(tls);
    }
    try {
      return load(document.root, service, environment);
    } catch (ConfigException e) {
      throw new Flags.UsageException(document.explain(e));
    }
  }

  private static CallClient fromConfig(Flags flags, Function<String, String> environment)
      throws Flags.UsageException {
    String outbound = flags.required("outbound");
    List<String> refused = new ArrayList<>(List.of("transport", "service", "peer-list"));
    refused.addAll(PEER_SOURCES);
    refused.add("dns-server");
    TlsFlags.CALL.forEach(f -> refused.add(f.name()));
    for (String flag : refused) {
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

  /**
   * A configuration document written from flags, and which flag wrote which key, so that a problem the
   * loader finds is reported by its flag's name.
   */
  private static final class Document {
    final Map<String, Object> root = new LinkedHashMap<>();
    private final Map<String, Object> outbound = new LinkedHashMap<>();
    private final String outboundPath;
    private final String transport;
    private final Map<String, String> flagOfPath = new LinkedHashMap<>();

    Document(String service, String transport) {
      this.transport = transport;
      this.outboundPath = "outbounds." + service + "." + transport;
      root.put("outbounds", Map.of(service, Map.of(transport, outbound)));
      flagOfPath.put("outbounds." + service, "--service");
    }

    /** The peer chooser of the peer flags: one peer, or a peer list fed by one source. */
    void peers(Flags flags) throws Flags.UsageException {
      List<String> given = new ArrayList<>();
      for (String flag : PEER_SOURCES) {
        if (flags.has(flag)) {
          given.add("--" + flag);
        }
      }
      if (given.isEmpty()) {
        throw new Flags.UsageException(
            "missing --peer (or --peers, --peer-file, --dns-srv, --dns-a, --dns-aaaa)");
      }
      if (given.size() > 1) {
        throw new Flags.UsageException(
            "give one of --peer, --peers, --peer-file, --dns-srv, --dns-a, --dns-aaaa, got "
                + String.join(" and ", given));
      }
      if (flags.has("dns-server") && !given.get(0).startsWith("--dns-")) {
        throw new Flags.UsageException("--dns-server needs --dns-srv, --dns-a or --dns-aaaa");
      }
      if (flags.has("peer")) {
        if (flags.has("peer-list")) {
          throw new Flags.UsageException(
              "--peer-list needs several peers: --peers, --peer-file or --dns-*, not --peer");
        }
        put(outbound, "peer", flags.get("peer", null), "--peer");
        return;
      }
      String list = flags.get("peer-list", DEFAULT_LIST);
      List<String> known = PeerCounts.listNames();
      if (!known.contains(list)) {
        throw new Flags.UsageException(
            "--peer-list must be one of " + String.join(", ", known) + ", got \"" + list + "\"");
      }
      Map<String, Object> block = new LinkedHashMap<>();
      outbound.put(list, block);
      String path = outboundPath + "." + list;
      flagOfPath.put(path, "--peer-list");
      if (flags.has("peers")) {
        List<String> peers = new ArrayList<>();
        for (String value : flags.all("peers")) {
          for (String peer : value.split(",", -1)) {
            peers.add(peer.trim());
          }
        }
        block.put("peers", peers);
        flagOfPath.put(path + ".peers", "--peers");
      } else if (flags.has("peer-file")) {
        String file = flags.get("peer-file", null);
        if (!Files.isReadable(Path.of(file))) {
          // a file may appear later in a configuration; on the command line it is a typo
          throw new Flags.UsageException("--peer-file: cannot read " + file);
        }
        block.put("peers-file", Map.of("path", file));
        flagOfPath.put(path + ".peers-file", "--peer-file");
      } else {
        block.put("dns", dns(flags, path + ".dns"));
      }
    }

    private Map<String, Object> dns(Flags flags, String path) throws Flags.UsageException {
      Map<String, Object> dns = new LinkedHashMap<>();
      String flag = flags.has("dns-srv") ? "dns-srv" : flags.has("dns-a") ? "dns-a" : "dns-aaaa";
      String value = flags.get(flag, null);
      flagOfPath.put(path, "--" + flag);
      if (flag.equals("dns-srv")) {
        dns.put("name", value);
        dns.put("record", "SRV");
      } else {
        int colon = value.lastIndexOf(':');
        if (colon <= 0 || value.endsWith("]")) {
          throw new Flags.UsageException(
              "--" + flag + " wants NAME:PORT (the peers' port), got \"" + value + "\"");
        }
        dns.put("name", value.substring(0, colon));
        dns.put("record", flag.equals("dns-a") ? "A" : "AAAA");
        dns.put("port", (int) portOf(flag, value.substring(colon + 1)));
      }
      if (flags.has("dns-server")) {
        put(dns, "server", flags.get("dns-server", null), "--dns-server", path + ".server");
      }
      return dns;
    }

    private static long portOf(String flag, String digits) throws Flags.UsageException {
      try {
        int port = Integer.parseInt(digits);
        if (port >= 1 && port <= 65535) {
          return port;
        }
      } catch (NumberFormatException e) {
        // reported below
      }
      throw new Flags.UsageException(
          "--"
              + flag
              + " wants NAME:PORT with a port from 1 to 65535, got port \""
              + digits
              + "\"");
    }

    /** The client TLS block: on the transport, and for HTTP {@code tls: {mode: enforced}} too. */
    void tls(Map<String, Object> tls) {
      root.put("transports", Map.of(transport, Map.of("tls", tls)));
      flagOfPath.put("transports." + transport + ".tls", "--tls-*");
      if (transport.equals("http")) {
        outbound.put("tls", Map.of("mode", "enforced"));
      }
    }

    private void put(Map<String, Object> section, String key, Object value, String flag) {
      put(section, key, value, flag, outboundPath + "." + key);
    }

    private void put(
        Map<String, Object> section, String key, Object value, String flag, String path) {
      section.put(key, value);
      flagOfPath.put(path, flag);
    }

    /** The loader's problems, each by the flag that wrote its key ({@code --peers: ...}). */
    String explain(ConfigException e) {
      List<String> lines = new ArrayList<>();
      for (ConfigException.Problem p : e.problems()) {
        String flag = null;
        int longest = -1;
        for (Map.Entry<String, String> f : flagOfPath.entrySet()) {
          String path = f.getKey();
          boolean under =
              p.path().equals(path)
                  || p.path().startsWith(path + ".")
                  || p.path().startsWith(path + "[");
          if (under && path.length() > longest) {
            flag = f.getValue();
            longest = path.length();
          }
        }
        lines.add(flag == null ? p.toString() : flag + ": " + p.message());
      }
      return String.join("\n", lines);
    }
  }
}
