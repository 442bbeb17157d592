package io.yarpc.config;

import static java.util.Objects.requireNonNull;

import io.yarpc.Dispatcher;
import io.yarpc.config.internal.ConfigLoader;
import io.yarpc.config.internal.Documents;
import io.yarpc.config.spi.PeerListSpec;
import io.yarpc.config.spi.PeerListUpdaterSpec;
import io.yarpc.config.spi.SectionSpec;
import io.yarpc.config.spi.TransportSpec;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * Builds a {@link Dispatcher.Builder} from a YAML or JSON document with yarpc-go's {@code yarpcconfig}
 * keys, so code can still register procedures and add middleware before it builds and starts the
 * dispatcher.
 *
 * <pre>{@code
 * Dispatcher dispatcher = YarpcConfig.load("keyvalue", Path.of("yarpc.yaml"))
 *     .unaryInboundMiddleware(logging)
 *     .build();
 * dispatcher.register(procedures);
 * dispatcher.start();
 * }</pre>
 *
 * <p><b>The document</b> has the top-level keys {@code inbounds}, {@code outbounds}, {@code transports},
 * {@code logging} and {@code metrics}, all optional. The service name is not in it: it is given to {@code
 * load}, as to yarpc-go's {@code Configurator.LoadConfig(serviceName, data)}.
 *
 * <pre>
 * inbounds:
 *   http: {address: ":8080"}
 *   grpc: {address: ":8081", tls: {certFile: server.pem, keyFile: server.key}}
 * outbounds:
 *   users:                                # the outbound key, and the service called
 *     grpc: {address: "users.internal:8081"}
 *   keyvalue:
 *     service: keyvalue-staging           # another service name than the key
 *     unary:
 *       http:
 *         url: http://keyvalue/yarpc       # scheme and path; the peers below give the address
 *         round-robin:
 *           peers: [10.0.0.1:8080, 10.0.0.2:8080]
 *     oneway:
 *       http: {url: "http://10.0.0.3:8080/"}
 * transports:
 *   http: {connectTimeout: 5s}
 * </pre>
 *
 * <ul>
 *   <li>{@code inbounds.<name>}: an inbound of the transport {@code <name>}, or of its {@code type} (for
 *       two inbounds of one transport); {@code disabled: true} skips it.
 *   <li>{@code outbounds.<key>}: either {@code <transport>: {...}}, which serves every RPC type the
 *       transport can (HTTP: unary and oneway; gRPC: unary and stream; TChannel: unary), or any of
 *       {@code unary}, {@code oneway}, {@code stream}, each with one {@code <transport>: {...}}; {@code
 *       service} overrides the service name called. A transport's outbound takes {@code peer: host:port},
 *       a peer-list block ({@code round-robin: {peers: [...]}}, or an updater in place of {@code peers}:
 *       {@code round-robin: {dns: {...}}} with {@code yarpc-discovery}) or {@code with: PRESET}, besides
 *       its own keys.
 *   <li>{@code transports.<name>}: the transport shared by every inbound and outbound of that name.
 *   <li>{@code logging}: {@code lifecycle: false} logs the dispatcher's start and stop at DEBUG (see
 *       {@link Dispatcher.Builder#logLifecycle}); {@code logging.levels}, yarpc-go's call-log levels
 *       ({@code success}, {@code clientError}, {@code serverError}, and per direction {@code inbound} and
 *       {@code outbound}), installs call logs.
 *   <li>{@code metrics}: installs metrics with yarpc-go's names and tags; {@code tagsBlocklist} lists the
 *       tags to drop.
 * </ul>
 *
 * <p>{@code logging.levels} and {@code metrics} are read by yarpc-observability ({@code YarpcCallLogs},
 * {@code YarpcMetrics}; see their Javadoc for the keys); without it on the class path they are a
 * problem that says to add it. Metrics record into the Micrometer {@code MeterRegistry} given with
 * {@link Loader#provide} (default Micrometer's global registry, which records nothing until a registry
 * is added to it). Their middleware comes first in the chains, before any the program adds to the
 * returned builder; installing {@code YarpcMetrics} or {@code YarpcCallLogs} in code as well on that
 * builder fails with an {@link IllegalStateException}, as calls would be counted or logged twice.
 *
 * <p>Strings may use {@code ${VAR}} and {@code ${VAR:default}} (environment variables by default, see {@link
 * Loader#environment}); durations are Go's ({@code 500ms}, {@code 1m30s}). Each transport's keys are its
 * builder's, with yarpc-go's spellings accepted where yarpc-java has the feature; a yarpc-go key for a
 * feature yarpc-java does not have is a problem that says so, never silently ignored.
 *
 * <p><b>Errors.</b> The whole document is read before anything is reported: a {@link ConfigException}
 * lists every problem with its key path. Nothing is started and no socket is opened by loading; the
 * transports and outbounds are built and start with the dispatcher.
 *
 * <p><b>Transports, peer lists, updaters and sections</b> come from {@link java.util.ServiceLoader}:
 * every {@link TransportSpec}, {@link PeerListSpec}, {@link PeerListUpdaterSpec} and {@link SectionSpec}
 * on the class path (the HTTP, gRPC and TChannel transports; core's peer lists {@code round-robin},
 * {@code fewest-pending-requests}, {@code random}, {@code two-random-choices} and {@code hashring32};
 * {@code yarpc-discovery}'s {@code dns} and {@code peers-file} updaters; yarpc-observability's
 * sections register theirs). {@link #loader()} adds more by hand, or replaces one of the same name.
 */
public final class YarpcConfig {
  private YarpcConfig() {}

  /**
   * A dispatcher builder for the service {@code serviceName} from the YAML or JSON file {@code file}
   * (UTF-8), with the specs found on the class path and the process's environment.
   *
   * @throws ConfigException listing every problem of the document
   * @throws UncheckedIOException when the file cannot be read
   */
  public static Dispatcher.Builder load(String serviceName, Path file) {
    return loader().load(serviceName, file);
  }

  /**
   * A dispatcher builder from a YAML or JSON document read from {@code reader} (not closed); see {@link
   * #load(String, Path)}.
   */
  public static Dispatcher.Builder load(String serviceName, Reader reader) {
    return loader().load(serviceName, reader);
  }

  /**
   * A dispatcher builder from a document already parsed: maps with string keys, lists, strings, numbers,
   * booleans and nulls, as {@link #parse(Reader)} returns or any other format's parser gives; see {@link
   * #load(String, Path)}.
   */
  public static Dispatcher.Builder load(String serviceName, Map<String, ?> document) {
    return loader().load(serviceName, document);
  }

  /**
   * Parses a YAML 1.2 or JSON document into maps (in document order), lists and scalars, without
   * interpolating or checking it: for a program that edits a document before it {@linkplain #load(String,
   * Map) loads} it. An empty document is an empty map.
   *
   * @throws ConfigException when it is not YAML, has a duplicate key, or its root is not a mapping
   */
  public static Map<String, Object> parse(Reader reader) {
    return Documents.parse(requireNonNull(reader, "reader"), "YAML");
  }

  /** Parses the file {@code file} (UTF-8); see {@link #parse(Reader)}. */
  public static Map<String, Object> parse(Path file) {
    try (Reader r = Files.newBufferedReader(requireNonNull(file, "file"), StandardCharsets.UTF_8)) {
      return Documents.parse(r, file.toString());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
    }
  }

  /** A loader with the defaults: the specs found on the class path, the process's environment. */
  public static Loader loader() {
    return new Loader();
  }

  /**
   * Loads documents with settings: the variables for {@code ${...}}, specs and presets beyond those found
   * on the class path, as yarpc-go's {@code Configurator}. Configure it, then load any number of
   * documents; not thread-safe while being configured.
   */
  public static final class Loader {
    private Function<String, String> environment = System::getenv;
    private ClassLoader classLoader = YarpcConfig.class.getClassLoader();
    private final Map<String, TransportSpec> transports = new LinkedHashMap<>();
    private final Map<String, PeerListSpec> peerLists = new LinkedHashMap<>();
    private final Map<String, SectionSpec> sections = new LinkedHashMap<>();
    private final Map<String, PeerListUpdaterSpec> updaters = new LinkedHashMap<>();
    private final Map<String, PeerChooserPreset> presets = new LinkedHashMap<>();
    private final Map<Class<?>, Object> provided = new LinkedHashMap<>();

    private Loader() {}

    /**
     * Where {@code ${NAME}} looks its value up: {@code lookup.apply(NAME)}, null meaning unset; default
     * {@link System#getenv(String)}. For tests, and for values from elsewhere than the environment.
     */
    public Loader environment(Function<String, String> lookup) {
      this.environment = requireNonNull(lookup, "lookup");
      return this;
    }

    /**
     * The class loader {@link java.util.ServiceLoader} searches for specs; default the one that loaded
     * this class.
     */
    public Loader classLoader(ClassLoader classLoader) {
      this.classLoader = requireNonNull(classLoader, "classLoader");
      return this;
    }

    /** Adds a transport spec, replacing one of the same name found on the class path. */
    public Loader transportSpec(TransportSpec spec) {
      transports.put(requireNonNull(spec.name(), "spec.name()"), spec);
      return this;
    }

    /** Adds a peer-list spec, replacing one of the same name found on the class path. */
    public Loader peerListSpec(PeerListSpec spec) {
      peerLists.put(requireNonNull(spec.name(), "spec.name()"), spec);
      return this;
    }

    /** Adds a peer list updater spec, replacing one of the same name found on the class path. */
    public Loader peerListUpdaterSpec(PeerListUpdaterSpec spec) {
      updaters.put(requireNonNull(spec.name(), "spec.name()"), spec);
      return this;
    }

    /**
     * Adds a section spec, replacing one of the same key found on the class path (yarpc-observability's
     * for {@code metrics} and {@code logging.levels}, say).
     */
    public Loader sectionSpec(SectionSpec spec) {
      sections.put(requireNonNull(spec.key(), "spec.key()"), spec);
      return this;
    }

    /**
     * Gives the specs an object a file cannot hold, found by type: a spec that asks for {@code type}
     * gets {@code value}, or, when nothing was provided for {@code type} itself, the first value
     * provided that is an instance of it. yarpc-observability's {@code metrics} section records into
     * the {@code io.micrometer.core.instrument.MeterRegistry} provided (default Micrometer's global
     * registry), its {@code logging.levels} section writes to the {@code org.slf4j.Logger} provided
     * (default the logger {@code io.yarpc.calls}). Replaces a value provided before for {@code type}.
     */
    public <T> Loader provide(Class<T> type, T value) {
      requireNonNull(type, "type");
      provided.put(type, type.cast(requireNonNull(value, "value")));
      return this;
    }

    /** Registers the chooser an outbound gets with {@code with: name}. */
    public Loader peerChooserPreset(String name, PeerChooserPreset preset) {
      requireNonNull(name, "name");
      if (name.isEmpty()) {
        throw new IllegalArgumentException("preset name must not be empty");
      }
      presets.put(name, requireNonNull(preset, "preset"));
      return this;
    }

    /** See {@link YarpcConfig#load(String, Path)}. */
    public Dispatcher.Builder load(String serviceName, Path file) {
      requireNonNull(file, "file");
      Map<String, Object> document = parse(file);
      return loader().load(serviceName, document, file.toString());
    }

    /** See {@link YarpcConfig#load(String, Reader)}. */
    public Dispatcher.Builder load(String serviceName, Reader reader) {
      return loader().load(serviceName, parse(reader), "");
    }

    /** See {@link YarpcConfig#load(String, Map)}. */
    public Dispatcher.Builder load(String serviceName, Map<String, ?> document) {
      return loader().load(serviceName, requireNonNull(document, "document"), "");
    }

    private ConfigLoader loader() {
      return new ConfigLoader(
          environment, classLoader, transports, peerLists, sections, updaters, presets, provided);
    }
  }
}
