package io.yarpc.examples;

import io.yarpc.config.ConfigException;
import io.yarpc.examples.FlagSet.Flag;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code call}'s transport, service, peer and TLS flags written as the configuration document a file would
 * hold for the same client, and which flag wrote which key, so that a problem the loader finds there is
 * reported by its flag's name ({@code --peers: not host:port: "nowhere" (no port)}).
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
 *                                       # --dns-a N:P: dns: {name: N, record: A, port: P}
 *       tls: {mode: enforced}           # HTTP over TLS only
 * transports:
 *   grpc:
 *     tls: {caFile: ca.pem}
 * </pre>
 *
 * What the configuration checks (a peer's form, a DNS server's address) is left to it; what only the
 * command line can get wrong (two sources of peers, a list name that does not exist) is checked here.
 */
final class ClientDocument {
  static final String PEERS_GROUP = "peers (give one of --peer, --peers, --peer-file, --dns-*)";
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

  private static final List<String> PEER_SOURCES =
      List.of("peer", "peers", "peer-file", "dns-srv", "dns-a", "dns-aaaa");

  private final Map<String, Object> root = new LinkedHashMap<>();
  private final Map<String, Object> outboundSection = new LinkedHashMap<>();
  private final String service;
  private final String transport;
  private final String outboundPath;
  private final Map<String, String> flagOfPath = new LinkedHashMap<>();

  private ClientDocument(String service, String transport) {
    this.service = service;
    this.transport = transport;
    this.outboundPath = "outbounds." + service + "." + transport;
    root.put("outbounds", Map.of(service, Map.of(transport, outboundSection)));
    flagOfPath.put("outbounds." + service, "--service");
  }

  /**
   * The document of the flags.
   *
   * @throws Flags.UsageException when a flag is missing, two conflict, or one names what does not exist
   */
  static ClientDocument of(Flags flags) throws Flags.UsageException {
    String transport = flags.required("transport");
    if (!List.of("http", "grpc", "tchannel").contains(transport)) {
      throw new Flags.UsageException(
          "--transport must be http, grpc or tchannel, got \"" + transport + "\"");
    }
    ClientDocument d = new ClientDocument(flags.required("service"), transport);
    d.peers(flags);
    Map<String, Object> tls = TlsFlags.clientSection(flags);
    if (tls != null) {
      d.tls(tls);
    }
    return d;
  }

  /** The document, for {@link io.yarpc.config.YarpcConfig.Loader#load}. */
  Map<String, Object> root() {
    return root;
  }

  /** Its one outbound's key: the service. */
  String outbound() {
    return service;
  }

  /** The peer chooser of the peer flags: one peer, or a peer list fed by one source. */
  private void peers(Flags flags) throws Flags.UsageException {
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
      put(outboundSection, "peer", flags.get("peer", null), "--peer", outboundPath + ".peer");
      return;
    }
    String list = flags.get("peer-list", DEFAULT_LIST);
    List<String> known = PeerCounts.listNames();
    if (!known.contains(list)) {
      throw new Flags.UsageException(
          "--peer-list must be one of " + String.join(", ", known) + ", got \"" + list + "\"");
    }
    Map<String, Object> block = new LinkedHashMap<>();
    String path = outboundPath + "." + list;
    put(outboundSection, list, block, "--peer-list", path);
    if (flags.has("peers")) {
      List<String> peers = new ArrayList<>();
      for (String value : flags.all("peers")) {
        for (String peer : value.split(",", -1)) {
          peers.add(peer.trim());
        }
      }
      put(block, "peers", peers, "--peers", path + ".peers");
    } else if (flags.has("peer-file")) {
      String file = flags.get("peer-file", null);
      if (!Files.isReadable(Path.of(file))) {
        // a file may appear later in a configuration; on the command line it is a typo
        throw new Flags.UsageException("--peer-file: cannot read " + file);
      }
      put(block, "peers-file", Map.of("path", file), "--peer-file", path + ".peers-file");
    } else {
      block.put("dns", dns(flags, path + ".dns"));
    }
  }

  /** The {@code dns} block of {@code --dns-srv}, {@code --dns-a} or {@code --dns-aaaa}. */
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
      if (colon <= 0) {
        throw new Flags.UsageException(
            "--" + flag + " wants NAME:PORT (the peers' port), got \"" + value + "\"");
      }
      dns.put("name", value.substring(0, colon));
      dns.put("record", flag.equals("dns-a") ? "A" : "AAAA");
      dns.put("port", port(flag, value.substring(colon + 1)));
    }
    if (flags.has("dns-server")) {
      put(dns, "server", flags.get("dns-server", null), "--dns-server", path + ".server");
    }
    return dns;
  }

  private static int port(String flag, String digits) throws Flags.UsageException {
    try {
      int port = Integer.parseInt(digits);
      if (port >= 1 && port <= 65535) {
        return port;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new Flags.UsageException(
        "--" + flag + " wants NAME:PORT with a port from 1 to 65535, got port \"" + digits + "\"");
  }

  /** The client TLS block: on the transport, and for HTTP {@code tls: {mode: enforced}} too. */
  private void tls(Map<String, Object> tls) {
    root.put("transports", Map.of(transport, Map.of("tls", tls)));
    flagOfPath.put("transports." + transport + ".tls", "--tls-*");
    if (transport.equals("http")) {
      outboundSection.put("tls", Map.of("mode", "enforced"));
    }
  }

  /** Sets {@code key} of {@code section}, written at {@code path} by {@code flag}. */
  private void put(
      Map<String, Object> section, String key, Object value, String flag, String path) {
    section.put(key, value);
    flagOfPath.put(path, flag);
  }

  /** The loader's problems with this document, one a line, each by the flag that wrote its key. */
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
