package io.yarpc.config.internal;

import io.yarpc.config.PeerChooserPreset;
import io.yarpc.config.spi.ConfigContext;
import io.yarpc.config.spi.ConfigSection;
import io.yarpc.config.spi.PeerListSpec;
import io.yarpc.config.spi.PeerListUpdaterSpec;
import io.yarpc.internal.GoStrings;
import io.yarpc.internal.HostPorts;
import io.yarpc.peer.BoundPeerChooser;
import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerList;
import io.yarpc.peer.PeerListUpdater;
import io.yarpc.peer.PeerTransport;
import io.yarpc.peer.SinglePeerChooser;
import io.yarpc.tls.ClientAuth;
import io.yarpc.tls.TlsConfig;
import io.yarpc.tls.TlsMode;
import io.yarpc.tls.TlsProvider;
import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.KeepAlive;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/** The {@link ConfigContext} of one load: the shared sections, parsed once for every transport. */
final class Context implements ConfigContext {
  private final String serviceName;
  private final Map<String, PeerListSpec> peerLists;
  private final Map<String, PeerListUpdaterSpec> updaters;
  private final Map<String, PeerChooserPreset> presets;
  private final Map<Class<?>, Object> provided;

  Context(
      String serviceName,
      Map<String, PeerListSpec> peerLists,
      Map<String, PeerListUpdaterSpec> updaters,
      Map<String, PeerChooserPreset> presets,
      Map<Class<?>, Object> provided) {
    this.serviceName = serviceName;
    this.peerLists = peerLists;
    this.updaters = updaters;
    this.presets = presets;
    this.provided = provided;
  }

  @Override
  public String serviceName() {
    return serviceName;
  }

  /** The value provided for {@code type}, or else the first one provided that is an instance of it. */
  @Override
  public <T> T provided(Class<T> type) {
    Object exact = provided.get(type);
    if (exact != null) {
      return type.cast(exact);
    }
    for (Object value : provided.values()) {
      if (type.isInstance(value)) {
        return type.cast(value);
      }
    }
    return null;
  }

  private static Sections own(ConfigSection section) {
    if (!(section instanceof Sections)) {
      throw new IllegalArgumentException("not a section the loader gave: " + section);
    }
    return (Sections) section;
  }

  // ---------------------------------------------------------------------------------------------------
  // Peers

  @Override
  public PeerChooser peerChooser(
      ConfigSection outbound, PeerTransport transport, UnaryOperator<String> identify) {
    Sections s = own(outbound);
    List<String> present = new ArrayList<>();
    for (String key : chooserKeys()) {
      s.markRead(key);
      if (s.keys().contains(key)) {
        present.add(key);
      }
    }
    if (present.isEmpty()) {
      return null;
    }
    if (present.size() > 1) {
      s.problem(
          null,
          "give one of peer, with or a peer list ("
              + String.join(", ", peerLists.keySet())
              + "), got "
              + String.join(" and ", present));
      return null;
    }
    String key = present.get(0);
    if (key.equals("peer")) {
      String peer = s.requireString("peer");
      String id = peer == null ? null : identify(s, "peer", peer.trim(), identify);
      return id == null ? null : SinglePeerChooser.of(transport, id);
    }
    if (key.equals("with")) {
      String name = s.requireString("with");
      if (name == null) {
        return null;
      }
      PeerChooserPreset preset = presets.get(name);
      if (preset == null) {
        s.problem(
            "with",
            "unknown peer chooser preset "
                + GoStrings.quote(name)
                + (presets.isEmpty()
                    ? " (none is registered: YarpcConfig.Loader.peerChooserPreset)"
                    : " (known: " + String.join(", ", presets.keySet()) + ")"));
        return null;
      }
      PeerChooser[] built = new PeerChooser[1];
      s.apply("with", () -> built[0] = preset.build(transport, transportName(s)));
      return built[0];
    }
    return peerList(s, key, transport, identify);
  }

  private List<String> chooserKeys() {
    List<String> keys = new ArrayList<>(List.of("peer", "with"));
    keys.addAll(peerLists.keySet());
    return keys;
  }

  /** The transport key of an outbound section: the last segment of its path. */
  private static String transportName(Sections s) {
    String p = s.path();
    return p.substring(p.lastIndexOf('.') + 1);
  }

  private static String identify(
      Sections s, String key, String peer, UnaryOperator<String> identify) {
    try {
      String id = identify.apply(peer);
      if (id == null || id.isEmpty()) {
        s.problem(key, "not a peer: " + GoStrings.quote(peer));
        return null;
      }
      return id;
    } catch (RuntimeException e) {
      s.problem(key, Sections.describe(e));
      return null;
    }
  }

  private PeerChooser peerList(
      Sections outbound, String name, PeerTransport transport, UnaryOperator<String> identify) {
    Sections block = outbound.child(name);
    if (block == null) {
      return null;
    }
    List<String> updaterKeys = new ArrayList<>();
    for (String key : updaterNames()) {
      block.markRead(key);
      if (block.keys().contains(key)) {
        updaterKeys.add(key);
      }
    }
    List<String> ids = List.of();
    Function<PeerList, PeerListUpdater> binder = null;
    String updaterKey = updaterKeys.size() == 1 ? updaterKeys.get(0) : null;
    if (updaterKeys.isEmpty()) {
      block.problem(
          null,
          "no peers: give them as \"peers: [host:port, ...]\" or name a peer list updater ("
              + (updaters.isEmpty()
                  ? "none is registered: add yarpc-discovery for dns and peers-file"
                  : String.join(", ", updaters.keySet()))
              + ")");
    } else if (updaterKey == null) {
      block.problem(null, "give one peer list updater, got " + String.join(" and ", updaterKeys));
    } else if (updaterKey.equals("peers")) {
      ids = staticPeers(block, identify);
    } else {
      binder = updater(block, updaterKey, identify);
    }
    PeerListSpec spec = peerLists.get(name);
    PeerChooser chooser = block.build(b -> spec.buildPeerList(b, transport, this));
    if (chooser == null) {
      if (!block.hasProblems()) {
        block.problem(null, "the " + name + " peer list spec built no peer list");
      }
      return null;
    }
    if (!(chooser instanceof PeerList)) {
      block.problem(
          null, "the " + name + " peer list spec built " + chooser + ", which is not a PeerList");
      return null;
    }
    if (!ids.isEmpty()) {
      List<String> initial = ids;
      block.apply("peers", () -> ((PeerList) chooser).update(initial, List.of()));
    }
    if (binder == null) {
      return chooser;
    }
    Function<PeerList, PeerListUpdater> bind = binder;
    PeerListUpdater[] updater = new PeerListUpdater[1];
    block.apply(updaterKey, () -> updater[0] = bind.apply((PeerList) chooser));
    if (updater[0] == null) {
      if (!block.hasProblems()) {
        block.problem(updaterKey, "the " + updaterKey + " updater spec built no updater");
      }
      return null;
    }
    return BoundPeerChooser.of((PeerChooser & PeerList) chooser, updater[0]);
  }

  /** {@code peers}, then every registered updater's name: the keys of a peer-list block that feed it. */
  private List<String> updaterNames() {
    List<String> names = new ArrayList<>(List.of("peers"));
    names.addAll(updaters.keySet());
    return names;
  }

  /** The block's static {@code peers}, identified, or an empty list and problems. */
  private static List<String> staticPeers(Sections block, UnaryOperator<String> identify) {
    List<String> peers = block.strings("peers");
    List<String> ids = new ArrayList<>();
    if (peers == null) {
      if (!block.has("peers")) { // "peers:" with nothing after it; else a problem was recorded
        block.problem("peers", "must not be empty");
      }
      return ids;
    }
    if (peers.isEmpty()) {
      block.problem("peers", "must not be empty");
      return ids;
    }
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < peers.size(); i++) {
      String key = "peers[" + i + "]";
      String id = identify(block, key, peers.get(i).trim(), identify);
      if (id != null && !seen.add(id)) {
        block.problem(key, "duplicate peer " + GoStrings.quote(peers.get(i)));
      } else if (id != null) {
        ids.add(id);
      }
    }
    return ids;
  }

  /** The binder of the updater block {@code key}, or null and problems. */
  private Function<PeerList, PeerListUpdater> updater(
      Sections block, String key, UnaryOperator<String> identify) {
    Sections section = block.child(key);
    if (section == null) {
      return null; // not a mapping: reported
    }
    PeerListUpdaterSpec spec = updaters.get(key);
    Function<PeerList, PeerListUpdater> binder =
        section.build(s -> spec.buildUpdater(s, identify, this));
    if (binder == null && !section.hasProblems()) {
      section.problem(null, "the " + key + " updater spec built no updater");
    }
    return section.hasProblems() ? null : binder;
  }

  @Override
  public String hostPort(String peer) {
    return HostPorts.checkPeer(peer, "127.0.0.1");
  }

  // ---------------------------------------------------------------------------------------------------
  // Limits and deadlines

  @Override
  public InboundLimits inboundLimits(ConfigSection limits, InboundLimits base) {
    InboundLimits start = base == null ? InboundLimits.defaults() : base;
    if (limits == null) {
      return start;
    }
    ConfigSection s = limits;
    InboundLimits.Builder b = start.toBuilder();
    s.integer("maxConnections", b::maxConnections);
    s.integer("maxConcurrentCallsPerConnection", b::maxConcurrentCallsPerConnection);
    s.integer("maxRequestSize", b::maxRequestSize);
    s.longValue("maxPendingBytesPerConnection", b::maxPendingBytesPerConnection);
    s.longValue("maxPendingBytes", b::maxPendingBytes);
    s.integer("maxHeaderCount", b::maxHeaderCount);
    s.integer("maxHeaderBytes", b::maxHeaderBytes);
    s.integer("maxRequestLineLength", b::maxRequestLineLength);
    Integer rst = s.integer("maxRstFramesPerWindow");
    Duration window = s.duration("rstFramesWindow");
    if (rst != null || window != null) {
      int max = rst != null ? rst : start.maxRstFramesPerWindow();
      Duration w = window != null ? window : start.rstFramesWindow();
      s.apply(
          rst != null ? "maxRstFramesPerWindow" : "rstFramesWindow",
          () -> b.maxRstFramesPerWindow(max, w));
    }
    s.duration("readTimeout", b::readTimeout);
    s.duration("writeTimeout", b::writeTimeout);
    s.duration("idleTimeout", b::idleTimeout);
    s.duration("handshakeTimeout", b::handshakeTimeout);
    s.duration("permitKeepAliveTime", b::permitKeepAliveTime);
    s.bool("permitKeepAliveWithoutCalls", b::permitKeepAliveWithoutCalls);
    Duration age = s.duration("maxConnectionAge");
    Duration grace = s.duration("maxConnectionAgeGrace");
    if (age != null) {
      s.apply("maxConnectionAge", () -> b.maxConnectionAge(age, grace));
    } else if (grace != null) {
      s.problem("maxConnectionAgeGrace", "needs maxConnectionAge");
    }
    InboundLimits[] out = new InboundLimits[] {start};
    s.apply(null, () -> out[0] = b.build());
    return out[0];
  }

  @Override
  public KeepAlive keepAlive(ConfigSection keepalive) {
    if (keepalive == null) {
      return null;
    }
    ConfigSection s = keepalive;
    Boolean enabled = s.bool("enabled");
    KeepAlive.Builder b = KeepAlive.builder();
    s.duration("time", b::time);
    s.duration("timeout", b::timeout);
    s.bool(s.alias("withoutCalls", "permit-without-stream"), b::withoutCalls);
    if (Boolean.FALSE.equals(enabled)) {
      return null;
    }
    KeepAlive[] out = new KeepAlive[1];
    s.apply(null, () -> out[0] = b.build());
    return out[0];
  }

  @Override
  public DeadlinePolicy deadlinePolicy(ConfigSection policy, DeadlinePolicy transportDefault) {
    if (policy == null) {
      return transportDefault;
    }
    Duration defaultTimeout = policy.duration("defaultTimeout");
    Duration maxTimeout = policy.duration("maxTimeout");
    Boolean require = policy.bool("requireDeadline");
    DeadlinePolicy.Builder b = DeadlinePolicy.builder();
    if (Boolean.TRUE.equals(require)) {
      if (defaultTimeout != null) {
        policy.problem(
            "requireDeadline", "give either requireDeadline: true or a defaultTimeout, not both");
      }
      b.requireDeadline();
    } else if (defaultTimeout != null) {
      policy.apply("defaultTimeout", () -> b.defaultTimeout(defaultTimeout));
    } else if (Boolean.FALSE.equals(require)) {
      if (transportDefault.defaultTimeout() == null) {
        policy.problem(
            "requireDeadline",
            "false needs a defaultTimeout (the timeout of calls that arrive without a deadline)");
      } else {
        b.defaultTimeout(transportDefault.defaultTimeout());
      }
    } else if (transportDefault.defaultTimeout() != null) {
      b.defaultTimeout(transportDefault.defaultTimeout());
    }
    if (maxTimeout != null) {
      policy.apply("maxTimeout", () -> b.maxTimeout(maxTimeout));
    } else if (transportDefault.maxTimeout() != null) {
      b.maxTimeout(transportDefault.maxTimeout());
    }
    return b.build();
  }

  // ---------------------------------------------------------------------------------------------------
  // TLS

  @Override
  public void inboundTls(ConfigSection tls, BiConsumer<TlsConfig, TlsMode> apply) {
    if (tls == null) {
      return;
    }
    TlsMode mode = tls.enumValue("mode", TlsMode.class);
    Boolean enabled = tls.bool("enabled");
    boolean hasCertificate = tls.has("certFile") || tls.has("keyFile");
    if (mode == null) {
      if (Boolean.FALSE.equals(enabled)) {
        mode = TlsMode.DISABLED;
      } else if (Boolean.TRUE.equals(enabled) || hasCertificate) {
        mode = TlsMode.ENFORCED;
      } else if (tls.has("mode")) {
        mode = TlsMode.DISABLED; // a bad mode: reported already
      } else if (!tls.keys().isEmpty()) {
        tls.problem("certFile", "missing required key (a TLS inbound needs certFile and keyFile)");
        mode = TlsMode.DISABLED;
      } else {
        mode = TlsMode.DISABLED;
      }
    } else if (enabled != null && enabled != (mode != TlsMode.DISABLED)) {
      tls.problem("enabled", "contradicts mode: " + mode.name().toLowerCase(java.util.Locale.ROOT));
    }
    boolean on = mode != TlsMode.DISABLED;
    TlsConfig.Builder b = material(tls, on);
    String ca = tls.string("caFile");
    ClientAuth clientAuth = tls.enumValue("clientAuth", ClientAuth.class);
    if (clientAuth != null) {
      b.clientAuth(clientAuth);
    } else if (ca != null) {
      b.clientAuth(ClientAuth.OPTIONAL);
    }
    if (ca != null) {
      Path p = file(tls, "caFile", ca);
      if (p != null) {
        b.trustedCertificates(p);
      }
    }
    if (!on || tls.hasProblems()) {
      return;
    }
    TlsMode m = mode;
    tls.apply(null, () -> apply.accept(b.build(), m));
  }

  @Override
  public TlsConfig clientTls(ConfigSection tls) {
    if (tls == null) {
      return null;
    }
    TlsConfig.Builder b = material(tls, false);
    String ca = tls.string("caFile");
    if (ca != null) {
      Path p = file(tls, "caFile", ca);
      if (p != null) {
        b.trustedCertificates(p);
      }
    }
    tls.string("serverName", b::serverName);
    tls.bool("hostnameVerification", b::hostnameVerification);
    if (tls.hasProblems()) {
      return null;
    }
    TlsConfig[] out = new TlsConfig[1];
    tls.apply(null, () -> out[0] = b.build());
    return out[0];
  }

  /** The keys both sides share: the certificate and key, provider, protocols, reload interval. */
  private static TlsConfig.Builder material(ConfigSection tls, boolean requireCertificate) {
    TlsConfig.Builder b = TlsConfig.builder();
    String cert = tls.string("certFile");
    String key = tls.string("keyFile");
    if (cert != null && key == null) {
      tls.problem("keyFile", "missing required key (certFile and keyFile go together)");
    } else if (key != null && cert == null) {
      tls.problem("certFile", "missing required key (certFile and keyFile go together)");
    } else if (cert == null && requireCertificate) {
      tls.problem("certFile", "missing required key (a TLS inbound needs certFile and keyFile)");
    } else if (cert != null) {
      Path c = file(tls, "certFile", cert);
      Path k = file(tls, "keyFile", key);
      if (c != null && k != null) {
        b.keyCertChain(c, k);
      }
    }
    tls.string("keyPassword", b::keyPassword);
    tls.enumValue("provider", TlsProvider.class, b::provider);
    List<String> protocols = tls.strings("protocols");
    if (protocols != null) {
      tls.apply("protocols", () -> b.protocols(protocols.toArray(new String[0])));
    }
    tls.duration("reloadInterval", b::reloadCheckInterval);
    return b;
  }

  private static Path file(ConfigSection tls, String key, String name) {
    Path p;
    try {
      p = Path.of(name);
    } catch (InvalidPathException e) {
      tls.problem(key, "not a file name: " + GoStrings.quote(name));
      return null;
    }
    if (!Files.isReadable(p)) {
      tls.problem(key, "cannot read file " + GoStrings.quote(name));
      return null;
    }
    return p;
  }
}
