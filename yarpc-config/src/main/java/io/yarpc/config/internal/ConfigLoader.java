package io.yarpc.config.internal;

import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.config.ConfigException;
import io.yarpc.config.PeerChooserPreset;
import io.yarpc.config.spi.PeerListSpec;
import io.yarpc.config.spi.PeerListUpdaterSpec;
import io.yarpc.config.spi.SectionSpec;
import io.yarpc.config.spi.TransportSpec;
import io.yarpc.internal.GoStrings;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.OnewayOutbound;
import io.yarpc.transport.RpcType;
import io.yarpc.transport.StreamOutbound;
import io.yarpc.transport.Transport;
import io.yarpc.transport.TransportComponent;
import io.yarpc.transport.UnaryOutbound;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * One load: reads a parsed document with the specs, collects every problem, and returns the dispatcher
 * builder or throws one {@link ConfigException}.
 */
public final class ConfigLoader {
  private static final List<String> TOP_LEVEL =
      List.of("inbounds", "outbounds", "transports", "logging", "metrics");

  /** The keys this loader reads itself: a {@link SectionSpec} may not take them. */
  private static final Set<String> OWN = Set.of("inbounds", "outbounds", "transports", "logging");

  /** yarpc-go's sections that another module reads (with a {@link SectionSpec}), and that module. */
  private static final Map<String, String> READ_ELSEWHERE =
      Map.of(
          "metrics", "io.yarpc:yarpc-observability (its YarpcMetrics reads this section)",
          "logging.levels", "io.yarpc:yarpc-observability (its YarpcCallLogs reads this section)");

  private static final Map<String, RpcType> EXPLICIT = new LinkedHashMap<>();
  private static final Set<String> RESERVED =
      Set.of("unary", "oneway", "stream", "service", "type", "disabled", "peer", "with");

  static {
    EXPLICIT.put("unary", RpcType.UNARY);
    EXPLICIT.put("oneway", RpcType.ONEWAY);
    EXPLICIT.put("stream", RpcType.STREAMING);
  }

  private final Function<String, String> environment;
  private final Map<String, TransportSpec> transportSpecs = new TreeMap<>();
  private final Map<String, PeerListSpec> peerListSpecs = new TreeMap<>();
  private final Map<String, SectionSpec> sectionSpecs = new TreeMap<>();
  private final Map<String, PeerListUpdaterSpec> updaterSpecs = new TreeMap<>();
  private final Map<String, PeerChooserPreset> presets;
  private final Map<Class<?>, Object> provided;

  /**
   * A loader with the specs {@link ServiceLoader} finds through {@code classLoader}, then {@code
   * transports}, {@code peerLists}, {@code sections} and {@code updaters} (which replace those of the
   * same name or key); {@code provided} are the objects the program gave for specs, by type.
   */
  public ConfigLoader(
      Function<String, String> environment,
      ClassLoader classLoader,
      Map<String, TransportSpec> transports,
      Map<String, PeerListSpec> peerLists,
      Map<String, SectionSpec> sections,
      Map<String, PeerListUpdaterSpec> updaters,
      Map<String, PeerChooserPreset> presets,
      Map<Class<?>, Object> provided) {
    this.environment = environment;
    discover(TransportSpec.class, classLoader, transportSpecs, TransportSpec::name);
    discover(PeerListSpec.class, classLoader, peerListSpecs, PeerListSpec::name);
    discover(SectionSpec.class, classLoader, sectionSpecs, SectionSpec::key);
    discover(PeerListUpdaterSpec.class, classLoader, updaterSpecs, PeerListUpdaterSpec::name);
    transportSpecs.putAll(transports);
    peerListSpecs.putAll(peerLists);
    sectionSpecs.putAll(sections);
    updaterSpecs.putAll(updaters);
    if (updaterSpecs.containsKey("peers")) {
      throw new IllegalStateException(
          "a PeerListUpdaterSpec may not be named \"peers\" ("
              + updaterSpecs.get("peers").getClass().getName()
              + "): the name is the static peer list's key");
    }
    for (String name : transportSpecs.keySet()) {
      if (RESERVED.contains(name)) {
        throw new IllegalStateException(
            "a TransportSpec may not be named \""
                + name
                + "\" ("
                + transportSpecs.get(name).getClass().getName()
                + "): the name is a key of the configuration");
      }
    }
    for (Map.Entry<String, SectionSpec> e : sectionSpecs.entrySet()) {
      checkSectionKey(e.getKey(), e.getValue());
    }
    this.presets = new LinkedHashMap<>(presets);
    this.provided = new LinkedHashMap<>(provided);
  }

  /** A section spec's key: a top-level key not the loader's, or {@code logging.<key>} but lifecycle. */
  private static void checkSectionKey(String key, SectionSpec spec) {
    String[] parts = key.split("\\.", -1);
    boolean ok =
        parts.length == 1
            ? !OWN.contains(key)
            : parts.length == 2
                && parts[0].equals("logging")
                && !parts[1].isEmpty()
                && !parts[1].equals("lifecycle");
    if (!ok || parts[0].isEmpty()) {
      throw new IllegalStateException(
          "a SectionSpec may not have the key \""
              + key
              + "\" ("
              + spec.getClass().getName()
              + "): it takes a top-level key other than "
              + String.join(", ", new TreeSet<>(OWN))
              + ", or logging.<key> other than logging.lifecycle");
    }
  }

  private static <S> void discover(
      Class<S> type, ClassLoader classLoader, Map<String, S> into, Function<S, String> name) {
    ServiceLoader<S> loader = ServiceLoader.load(type, classLoader);
    for (ServiceLoader.Provider<S> provider :
        (Iterable<ServiceLoader.Provider<S>>) () -> loader.stream().iterator()) {
      S spec;
      try {
        spec = provider.get();
      } catch (ServiceConfigurationError e) {
        throw new IllegalStateException(
            "cannot load the " + type.getSimpleName() + " " + provider.type().getName() + ": " + e,
            e);
      }
      String n = name.apply(spec);
      if (n == null || n.isEmpty()) {
        throw new IllegalStateException(
            type.getSimpleName() + " " + spec.getClass().getName() + " has no name");
      }
      S previous = into.putIfAbsent(n, spec);
      if (previous != null && previous.getClass() != spec.getClass()) {
        throw new IllegalStateException(
            "two "
                + type.getSimpleName()
                + "s are named \""
                + n
                + "\": "
                + previous.getClass().getName()
                + " and "
                + spec.getClass().getName());
      }
    }
  }

  /**
   * Loads {@code document} for the service {@code serviceName}.
   *
   * @throws ConfigException listing every problem found; {@code source} names the document in it
   */
  public Dispatcher.Builder load(String serviceName, Map<String, ?> document, String source) {
    return new Run(serviceName).load(document, source);
  }

  /** The state of one load. */
  private final class Run {
    private final String serviceName;
    private final Problems problems = new Problems();
    private final Interpolation interpolation = new Interpolation(environment);
    private final Context context;
    private final Map<String, Sections> transportSections = new LinkedHashMap<>();
    private final Map<String, Transport> transports = new HashMap<>();
    // what the sections read by SectionSpecs do to the builder, by key path, in document order
    private final Map<String, Consumer<Dispatcher.Builder>> sectionActions = new LinkedHashMap<>();

    Run(String serviceName) {
      this.serviceName = serviceName;
      this.context = new Context(serviceName, peerListSpecs, updaterSpecs, presets, provided);
    }

    Dispatcher.Builder load(Map<String, ?> document, String source) {
      List<ConfigException.Problem> shape = new ArrayList<>();
      Object normalized = Documents.normalize(document, "", shape);
      for (ConfigException.Problem p : shape) {
        problems.add(p.path(), p.message());
      }
      @SuppressWarnings("unchecked")
      Map<String, Object> doc = (Map<String, Object>) normalized;
      Sections root = new Sections("", doc, problems, interpolation);

      Dispatcher.Builder builder = null;
      try {
        builder = Dispatcher.builder(serviceName);
      } catch (IllegalArgumentException e) {
        problems.add("", e.getMessage());
      }

      Sections transportsSection = root.child("transports");
      if (transportsSection != null) {
        for (String name : transportsSection.keys()) {
          if (transportSpecs.containsKey(name)) {
            Sections s = transportsSection.child(name);
            if (s != null) {
              transportSections.put(name, s);
            }
          } else {
            transportsSection.problem(name, unknownTransport(name));
          }
        }
      }

      List<Inbound> inbounds = loadInbounds(root.child("inbounds"));
      Map<String, Outbounds> outbounds = loadOutbounds(root.child("outbounds"));
      for (String name : transportSections.keySet()) {
        transport(name); // an unused transport's section is checked all the same
      }
      boolean logLifecycle = true;
      for (String key : root.keys()) {
        if (key.equals("logging")) {
          logLifecycle = loadLogging(root.child("logging"));
        } else if (!OWN.contains(key)) {
          configureSection(root, key);
        }
      }
      for (String key : TOP_LEVEL) {
        root.markRead(key);
      }
      for (String key : sectionSpecs.keySet()) {
        if (!key.contains(".")) {
          root.markRead(key);
        }
      }
      root.reportUnknownKeys();

      if (problems.size() == 0) {
        for (Inbound in : inbounds) {
          builder.inbound(in);
        }
        outbounds.forEach(builder::outbound);
        builder.logLifecycle(logLifecycle);
        for (Map.Entry<String, Consumer<Dispatcher.Builder>> e : sectionActions.entrySet()) {
          try {
            e.getValue().accept(builder);
          } catch (RuntimeException x) {
            problems.add(e.getKey(), Sections.describe(x));
          }
        }
      }
      if (problems.size() > 0) {
        throw new ConfigException(source, sorted(doc));
      }
      return builder;
    }

    /**
     * The section at {@code key} of {@code parent}, read by its {@link SectionSpec}; a problem naming
     * the module to add when no spec reads it and another module would. Other keys are left unread.
     */
    private void configureSection(Sections parent, String key) {
      String path = Sections.join(parent.path(), key);
      SectionSpec spec = sectionSpecs.get(path);
      if (spec == null) {
        String module = READ_ELSEWHERE.get(path);
        if (module != null) {
          parent.problem(
              key, "needs the module " + module + " on the class path: add it, or remove the key");
        }
        return;
      }
      Sections section = parent.child(key);
      if (section == null) {
        return;
      }
      Consumer<Dispatcher.Builder> action = section.build(s -> spec.configure(s, context));
      if (action != null) {
        sectionActions.put(path, action);
      }
    }

    /** The problems, in the document order of the deepest part of their path that the document has. */
    private List<ConfigException.Problem> sorted(Map<String, Object> doc) {
      Map<String, Integer> order = new HashMap<>();
      order.put("", 0);
      index(doc, "", order);
      List<ConfigException.Problem> list = new ArrayList<>(problems.list());
      list.sort((a, b) -> Integer.compare(position(a.path(), order), position(b.path(), order)));
      return list;
    }

    private void index(Object value, String path, Map<String, Integer> order) {
      if (value instanceof Map) {
        for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
          String p = Sections.join(path, String.valueOf(e.getKey()));
          order.putIfAbsent(p, order.size());
          index(e.getValue(), p, order);
        }
      } else if (value instanceof List) {
        List<?> l = (List<?>) value;
        for (int i = 0; i < l.size(); i++) {
          String p = path + "[" + i + "]";
          order.putIfAbsent(p, order.size());
          index(l.get(i), p, order);
        }
      }
    }

    private int position(String path, Map<String, Integer> order) {
      String p = path;
      while (true) {
        Integer i = order.get(p);
        if (i != null) {
          return i;
        }
        int cut = Math.max(p.lastIndexOf('.'), p.lastIndexOf('['));
        if (cut <= 0) {
          return 0;
        }
        p = p.substring(0, cut);
      }
    }

    private String unknownTransport(String name) {
      return "unknown transport "
          + GoStrings.quote(name)
          + (transportSpecs.isEmpty()
              ? " (no transport is on the class path)"
              : " (known: " + String.join(", ", transportSpecs.keySet()) + ")");
    }

    /** The transport {@code name}, built on first use from its section (or an empty one); null on error. */
    private Transport transport(String name) {
      if (transports.containsKey(name)) {
        return transports.get(name);
      }
      TransportSpec spec = transportSpecs.get(name);
      Sections section = transportSections.get(name);
      if (section == null) {
        section =
            new Sections(
                Sections.join("transports", name), new LinkedHashMap<>(), problems, interpolation);
      }
      Sections s = section;
      Transport t = s.build(x -> spec.buildTransport(x, context));
      if (t == null && !s.hasProblems()) {
        problems.add(s.path(), "the " + name + " transport spec built no transport");
      }
      s.reportUnknownKeys();
      transports.put(name, t);
      return t;
    }

    private List<Inbound> loadInbounds(Sections section) {
      List<Inbound> out = new ArrayList<>();
      if (section == null) {
        return out;
      }
      for (String key : section.keys()) {
        Sections in = section.child(key);
        if (in == null) {
          continue;
        }
        String type = in.string("type");
        if (type == null) {
          type = key;
        }
        Boolean disabled = in.bool("disabled");
        if (Boolean.TRUE.equals(disabled)) {
          in.markAllRead();
          continue;
        }
        TransportSpec spec = transportSpecs.get(type);
        if (spec == null) {
          in.problem(in.has("type") ? "type" : null, unknownTransport(type));
          in.markAllRead();
          continue;
        }
        if (!spec.supportsInbound()) {
          in.problem(null, "transport " + GoStrings.quote(type) + " does not support inbounds");
          in.markAllRead();
          continue;
        }
        Transport t = transport(type);
        if (t == null) {
          in.markAllRead();
          continue;
        }
        Inbound inbound = in.build(s -> spec.buildInbound(s, t, context));
        if (inbound != null) {
          out.add(inbound);
        } else if (!in.hasProblems()) {
          in.problem(null, "the " + type + " transport spec built no inbound");
        }
      }
      return out;
    }

    private Map<String, Outbounds> loadOutbounds(Sections section) {
      Map<String, Outbounds> out = new LinkedHashMap<>();
      if (section == null) {
        return out;
      }
      for (String key : section.keys()) {
        Sections o = section.child(key);
        if (o == null) {
          continue;
        }
        Outbounds.Builder b = Outbounds.builder().serviceName(o.string("service"));
        boolean explicit = false;
        for (String k : EXPLICIT.keySet()) {
          explicit |= o.keys().contains(k);
        }
        boolean any = false;
        if (explicit) {
          for (Map.Entry<String, RpcType> e : EXPLICIT.entrySet()) {
            Sections typed = o.child(e.getKey());
            if (typed == null) {
              continue;
            }
            TransportComponent c = typedOutbound(typed, e.getValue());
            any |= c != null && set(b, c, Set.of(e.getValue()));
          }
        } else {
          List<String> names = new ArrayList<>(o.keys());
          names.remove("service");
          if (names.size() != 1) {
            o.problem(
                null,
                names.isEmpty()
                    ? "an outbound needs a transport ("
                        + String.join(", ", transportSpecs.keySet())
                        + ") or unary, oneway or stream"
                    : "an outbound takes one transport, got "
                        + String.join(", ", names)
                        + " (use unary, oneway and stream for several)");
            o.markAllRead();
            continue;
          }
          String name = names.get(0);
          TransportSpec spec = transportSpecs.get(name);
          Sections ts = o.child(name);
          if (ts == null) {
            continue;
          }
          if (spec == null) {
            ts.problem(null, unknownTransport(name));
            ts.markAllRead();
            continue;
          }
          Set<RpcType> types = spec.outboundTypes();
          if (types.isEmpty()) {
            ts.problem(null, "transport " + GoStrings.quote(name) + " does not support outbounds");
            ts.markAllRead();
            continue;
          }
          TransportComponent c = buildOutbound(ts, spec, name, types);
          any = c != null && set(b, c, types);
        }
        if (any) {
          out.put(key, b.build());
        }
      }
      return out;
    }

    /** The outbound of {@code outbounds.<key>.unary} (or oneway, stream): one transport key. */
    private TransportComponent typedOutbound(Sections typed, RpcType type) {
      List<String> names = new ArrayList<>(typed.keys());
      if (names.size() != 1) {
        typed.problem(
            null,
            names.isEmpty()
                ? "needs one transport (" + String.join(", ", transportSpecs.keySet()) + ")"
                : "takes one transport, got " + String.join(", ", names));
        typed.markAllRead();
        return null;
      }
      String name = names.get(0);
      Sections ts = typed.child(name);
      if (ts == null) {
        return null;
      }
      TransportSpec spec = transportSpecs.get(name);
      if (spec == null) {
        ts.problem(null, unknownTransport(name));
        ts.markAllRead();
        return null;
      }
      if (!spec.outboundTypes().contains(type)) {
        ts.problem(
            null,
            "transport "
                + GoStrings.quote(name)
                + " does not support "
                + typed.path().substring(typed.path().lastIndexOf('.') + 1)
                + " outbounds");
        ts.markAllRead();
        return null;
      }
      return buildOutbound(ts, spec, name, Set.of(type));
    }

    private TransportComponent buildOutbound(
        Sections ts, TransportSpec spec, String name, Set<RpcType> types) {
      Transport t = transport(name);
      if (t == null) {
        ts.markAllRead();
        return null;
      }
      TransportComponent c = ts.build(s -> spec.buildOutbound(s, t, types, context));
      if (c == null) {
        if (!ts.hasProblems()) {
          ts.problem(null, "the " + name + " transport spec built no outbound");
        }
        return null;
      }
      for (RpcType type : types) {
        if (!implementsType(c, type)) {
          ts.problem(
              null,
              "the "
                  + name
                  + " transport spec built "
                  + c
                  + ", which is not a "
                  + type.toString().toLowerCase(Locale.ROOT)
                  + " outbound");
          return null;
        }
      }
      return c;
    }

    private boolean implementsType(TransportComponent c, RpcType type) {
      switch (type) {
        case UNARY:
          return c instanceof UnaryOutbound;
        case ONEWAY:
          return c instanceof OnewayOutbound;
        default:
          return c instanceof StreamOutbound;
      }
    }

    private boolean set(Outbounds.Builder b, TransportComponent c, Set<RpcType> types) {
      for (RpcType type : types) {
        switch (type) {
          case UNARY:
            b.unary((UnaryOutbound) c);
            break;
          case ONEWAY:
            b.oneway((OnewayOutbound) c);
            break;
          default:
            b.stream((StreamOutbound) c);
            break;
        }
      }
      return true;
    }

    /** {@code logging}: {@code lifecycle} here, {@code levels} and the others by section specs. */
    private boolean loadLogging(Sections logging) {
      if (logging == null) {
        return true;
      }
      Boolean lifecycle = null;
      for (String key : logging.keys()) {
        if (key.equals("lifecycle")) {
          lifecycle = logging.bool("lifecycle");
        } else {
          configureSection(logging, key);
        }
      }
      logging.markRead("lifecycle");
      logging.markRead("levels");
      for (String key : sectionSpecs.keySet()) {
        if (key.startsWith("logging.")) {
          logging.markRead(key.substring("logging.".length()));
        }
      }
      return lifecycle == null || lifecycle;
    }
  }
}
