package io.yarpc.internal;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.HandlerSpec;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Router;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * The dispatcher's router: procedures by (service, name, encoding), with yarpc-go's lookup order: exact
 * encoding, then a wildcard (no encoding), then — when the procedure has exactly one registered encoding —
 * that one anyway, so its handler reports the canonical encoding-mismatch error.
 */
public final class MapRouter implements Router {
  private record Entry(Procedure procedure, HandlerSpec spec) {}

  private final String defaultService;

  /**
   * service -> procedure -> encoding ("" for the wildcard) -> entry: nested, so that a lookup allocates no
   * key.
   */
  private final Map<String, Map<String, Map<String, Entry>>> table = new ConcurrentHashMap<>();

  /** A router whose procedures without a service belong to {@code defaultService}. */
  public MapRouter(String defaultService) {
    this.defaultService = defaultService;
  }

  /**
   * Registers {@code procedure}, served by {@code spec} (the procedure's handler, already wrapped).
   *
   * @throws IllegalArgumentException when it clashes with a registered procedure
   */
  public synchronized void register(Procedure procedure, HandlerSpec spec) {
    String service = procedure.service().isEmpty() ? defaultService : procedure.service();
    Map<String, Entry> byEncoding =
        table
            .computeIfAbsent(service, k -> new ConcurrentHashMap<>())
            .computeIfAbsent(procedure.name(), k -> new ConcurrentHashMap<>());
    String encoding = procedure.encoding();
    if (byEncoding.containsKey(encoding)) {
      throw new IllegalArgumentException(
          String.format(
              "procedure \"%s\" of service \"%s\"%s is already registered",
              procedure.name(),
              service,
              encoding.isEmpty() ? "" : " with encoding \"" + encoding + "\""));
    }
    boolean hasWildcard = byEncoding.containsKey("");
    if (encoding.isEmpty() ? !byEncoding.isEmpty() : hasWildcard) {
      throw new IllegalArgumentException(
          String.format(
              "procedure \"%s\" of service \"%s\" cannot be registered both for every encoding and for "
                  + "specific encodings",
              procedure.name(), service));
    }
    byEncoding.put(encoding, new Entry(procedure.toBuilder().service(service).build(), spec));
  }

  @Override
  public String defaultService() {
    return defaultService;
  }

  @Override
  public List<Procedure> procedures() {
    List<Procedure> all = new ArrayList<>();
    table
        .values()
        .forEach(p -> p.values().forEach(m -> m.values().forEach(e -> all.add(e.procedure()))));
    all.sort(
        Comparator.comparing(Procedure::service)
            .thenComparing(Procedure::name)
            .thenComparing(Procedure::encoding));
    return all;
  }

  @Override
  public HandlerSpec choose(RequestMeta meta) {
    validate(meta); // so the service is set
    String service = meta.service();
    Map<String, Map<String, Entry>> byProcedure = table.get(service);
    Map<String, Entry> byEncoding = byProcedure == null ? null : byProcedure.get(meta.procedure());
    if (byEncoding == null || byEncoding.isEmpty()) {
      if (!knownServices().contains(service)) {
        throw YarpcException.of(
            Code.UNIMPLEMENTED,
            "unrecognized service name \"%s\", available services: %s",
            service,
            knownServices().stream().map(s -> "\"" + s + "\"").collect(Collectors.joining(", ")));
      }
      throw unrecognizedProcedure(meta.procedure(), service);
    }
    Entry entry = byEncoding.get(meta.encoding());
    if (entry == null) {
      entry = byEncoding.get("");
    }
    if (entry == null && byEncoding.size() == 1) {
      entry = byEncoding.values().iterator().next();
    }
    if (entry == null) {
      throw unrecognizedProcedure(meta.procedure(), service);
    }
    return entry.spec();
  }

  private static YarpcException unrecognizedProcedure(String procedure, String service) {
    return YarpcException.of(
        Code.UNIMPLEMENTED, "unrecognized procedure \"%s\" for service \"%s\"", procedure, service);
  }

  private TreeSet<String> knownServices() {
    TreeSet<String> services = new TreeSet<>();
    services.add(defaultService);
    table.forEach(
        (service, byProcedure) -> {
          if (byProcedure.values().stream().anyMatch(m -> !m.isEmpty())) {
            services.add(service);
          }
        });
    return services;
  }

  /**
   * Checks that the metadata names a service, procedure, caller and encoding.
   *
   * @throws YarpcException {@code invalid-argument} {@code missing service name, procedure, caller name,
   *     encoding} listing what is missing, in that order
   */
  public static void validate(RequestMeta meta) {
    if (!meta.service().isEmpty()
        && !meta.procedure().isEmpty()
        && !meta.caller().isEmpty()
        && !meta.encoding().isEmpty()) {
      return; // the common case allocates nothing
    }
    List<String> missing = new ArrayList<>(4);
    if (meta.service().isEmpty()) {
      missing.add("service name");
    }
    if (meta.procedure().isEmpty()) {
      missing.add("procedure");
    }
    if (meta.caller().isEmpty()) {
      missing.add("caller name");
    }
    if (meta.encoding().isEmpty()) {
      missing.add("encoding");
    }
    throw YarpcException.of(Code.INVALID_ARGUMENT, "missing " + String.join(", ", missing));
  }
}
