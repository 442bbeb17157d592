package io.yarpc.config.internal;

import io.yarpc.config.spi.ConfigSection;
import io.yarpc.internal.GoDurations;
import io.yarpc.internal.GoStrings;
import io.yarpc.internal.HostPorts;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.StringJoiner;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.IntConsumer;
import java.util.function.LongConsumer;

/**
 * The {@link ConfigSection} over one mapping of a parsed document: typed getters that record problems
 * with key paths, interpolation of strings, and the bookkeeping of which keys were read.
 */
final class Sections implements ConfigSection {
  private final String path;
  private final Map<String, Object> values;
  private final Problems problems;
  private final Interpolation interpolation;
  private final Set<String> read = new LinkedHashSet<>();
  private final Set<String> refused = new LinkedHashSet<>(); // known but unsupported: not in hints
  private final List<Sections> children = new ArrayList<>();

  Sections(
      String path, Map<String, Object> values, Problems problems, Interpolation interpolation) {
    this.path = path;
    this.values = values;
    this.problems = problems;
    this.interpolation = interpolation;
  }

  // ---------------------------------------------------------------------------------------------------
  // Paths and bookkeeping

  static String join(String path, String key) {
    return path.isEmpty() ? key : path + "." + key;
  }

  static String typeName(Object value) {
    if (value == null) {
      return "null";
    }
    if (value instanceof Map) {
      return "a mapping";
    }
    if (value instanceof List) {
      return "a list";
    }
    if (value instanceof Boolean) {
      return "a boolean";
    }
    if (value instanceof Integer || value instanceof Long || value instanceof BigInteger) {
      return "an integer";
    }
    if (value instanceof Number) {
      return "a number";
    }
    return "a string";
  }

  @Override
  public String path() {
    return path;
  }

  @Override
  public String path(String key) {
    return key == null ? path : join(path, key);
  }

  @Override
  public Set<String> keys() {
    return Collections.unmodifiableSet(values.keySet());
  }

  @Override
  public boolean has(String key) {
    return values.get(key) != null;
  }

  /** Marks {@code key} as read without reading it. */
  void markRead(String key) {
    read.add(key);
  }

  /** The raw value at {@code key} (null when absent), marking it read. */
  Object raw(String key) {
    read.add(key);
    return values.get(key);
  }

  /**
   * Reports every key of this section and of the sections handed out below it that nothing read, with
   * the keys that were read (what the spec knows) as a hint.
   */
  void reportUnknownKeys() {
    for (String key : values.keySet()) {
      if (!read.contains(key) && !refused.contains(key)) {
        Set<String> known = new TreeSet<>(read);
        problems.add(
            join(path, key),
            known.isEmpty()
                ? "unknown key"
                : "unknown key (known keys here: " + String.join(", ", known) + ")");
      }
    }
    for (Sections child : children) {
      child.reportUnknownKeys();
    }
  }

  @Override
  public String alias(String key, String alias) {
    read.add(key);
    read.add(alias);
    if (has(key) && has(alias)) {
      problem(alias, "the same as " + key + ": give one of them");
      return key;
    }
    return has(alias) ? alias : key;
  }

  @Override
  public void unsupported(String key, String reason) {
    refused.add(key);
    if (values.containsKey(key)) {
      problems.add(path(key), "not supported: " + reason);
    }
  }

  @Override
  public void problem(String key, String message) {
    if (key != null && key.indexOf('[') < 0) { // a list item is not a key of this section
      read.add(key);
    }
    problems.add(path(key), message);
  }

  @Override
  public boolean hasProblems() {
    return problems.any(path);
  }

  // ---------------------------------------------------------------------------------------------------
  // Scalars

  /** The interpolated text of a scalar value, or null and a problem. */
  private String text(String key, Object value) {
    if (value instanceof String) {
      try {
        return interpolation.render((String) value);
      } catch (IllegalArgumentException e) {
        problem(key, e.getMessage());
        return null;
      }
    }
    if (value instanceof Number || value instanceof Boolean) {
      return String.valueOf(value);
    }
    problem(key, "expected a string, got " + typeName(value));
    return null;
  }

  @Override
  public String string(String key) {
    Object v = raw(key);
    return v == null ? null : text(key, v);
  }

  @Override
  public String requireString(String key) {
    Object v = raw(key);
    if (v == null) {
      problem(key, "missing required key");
      return null;
    }
    String s = text(key, v);
    if (s != null && s.isEmpty()) {
      problem(key, "must not be empty");
      return null;
    }
    return s;
  }

  @Override
  public Long longValue(String key) {
    Object v = raw(key);
    if (v == null) {
      return null;
    }
    if (v instanceof Integer || v instanceof Long) {
      return ((Number) v).longValue();
    }
    if (v instanceof String) {
      String s = text(key, v);
      if (s == null) {
        return null;
      }
      try {
        return Long.parseLong(s.trim().replace("_", ""));
      } catch (NumberFormatException e) {
        problem(key, "not an integer: " + GoStrings.quote(s));
        return null;
      }
    }
    problem(
        key,
        v instanceof BigInteger
            ? "integer out of range: " + v
            : "expected an integer, got "
                + typeName(v)
                + (v instanceof Number ? " (" + v + ")" : ""));
    return null;
  }

  @Override
  public Integer integer(String key) {
    Long l = longValue(key);
    if (l == null) {
      return null;
    }
    if (l < Integer.MIN_VALUE || l > Integer.MAX_VALUE) {
      problem(key, "integer out of range (at most " + Integer.MAX_VALUE + "): " + l);
      return null;
    }
    return l.intValue();
  }

  @Override
  public Boolean bool(String key) {
    Object v = raw(key);
    if (v == null || v instanceof Boolean) {
      return (Boolean) v;
    }
    if (v instanceof String) {
      String s = text(key, v);
      if (s == null) {
        return null;
      }
      if (s.trim().equalsIgnoreCase("true")) {
        return true;
      }
      if (s.trim().equalsIgnoreCase("false")) {
        return false;
      }
      problem(key, "not a boolean (true or false): " + GoStrings.quote(s));
      return null;
    }
    problem(key, "expected a boolean (true or false), got " + typeName(v));
    return null;
  }

  @Override
  public Duration duration(String key) {
    Object v = raw(key);
    if (v == null) {
      return null;
    }
    if (v instanceof Integer && (Integer) v == 0) {
      return Duration.ZERO;
    }
    if (v instanceof Number) {
      problem(
          key, "not a duration: " + v + " (missing unit: write e.g. " + v + "s or " + v + "ms)");
      return null;
    }
    String s = text(key, v);
    if (s == null) {
      return null;
    }
    Duration d;
    try {
      d = GoDurations.parse(s.trim());
    } catch (IllegalArgumentException e) {
      String reason = e.getMessage();
      int in = reason.indexOf(" in duration");
      String why = in > 0 ? reason.substring(0, in) : "not a number followed by a unit";
      problem(key, "not a duration: " + GoStrings.quote(s) + " (" + why + "; e.g. 500ms, 1m30s)");
      return null;
    }
    if (d.isNegative()) {
      problem(key, "must not be negative: " + GoStrings.quote(s));
      return null;
    }
    return d;
  }

  @Override
  public <E extends Enum<E>> E enumValue(String key, Class<E> type) {
    Object v = raw(key);
    if (v == null) {
      return null;
    }
    String s = text(key, v);
    if (s == null) {
      return null;
    }
    String wanted = s.trim().replace('-', '_').toUpperCase(Locale.ROOT);
    StringJoiner names = new StringJoiner(", ");
    for (E e : type.getEnumConstants()) {
      if (e.name().equals(wanted)) {
        return e;
      }
      names.add(e.name().toLowerCase(Locale.ROOT).replace('_', '-'));
    }
    problem(key, "not one of " + names + ": " + GoStrings.quote(s));
    return null;
  }

  @Override
  public List<String> strings(String key) {
    Object v = raw(key);
    if (v == null) {
      return null;
    }
    if (!(v instanceof List)) {
      problem(key, "expected a list, got " + typeName(v));
      return null;
    }
    List<?> items = (List<?>) v;
    List<String> out = new ArrayList<>(items.size());
    boolean ok = true;
    for (int i = 0; i < items.size(); i++) {
      Object item = items.get(i);
      String itemKey = key + "[" + i + "]";
      if (item == null) {
        problems.add(join(path, itemKey), "expected a string, got null");
        ok = false;
        continue;
      }
      String s = text(itemKey, item);
      read.remove(itemKey); // not a key of this section
      if (s == null) {
        ok = false;
      } else {
        out.add(s);
      }
    }
    return ok ? out : null;
  }

  @Override
  public Map<String, String> stringMap(String key) {
    Object v = raw(key);
    if (v == null) {
      return null;
    }
    if (!(v instanceof Map)) {
      problem(key, "expected a mapping, got " + typeName(v));
      return null;
    }
    Map<String, String> out = new LinkedHashMap<>();
    boolean ok = true;
    for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
      String entryKey = join(key, String.valueOf(e.getKey()));
      String s = e.getValue() == null ? "" : text(entryKey, e.getValue());
      read.remove(entryKey);
      if (s == null) {
        ok = false;
      } else {
        out.put(String.valueOf(e.getKey()), s);
      }
    }
    return ok ? out : null;
  }

  @Override
  public InetSocketAddress address(String key) {
    String s = string(key);
    if (s == null) {
      return null;
    }
    try {
      return HostPorts.parseListen(s);
    } catch (IllegalArgumentException e) {
      problem(key, e.getMessage());
      return null;
    }
  }

  @Override
  public URI url(String key) {
    String s = string(key);
    if (s == null) {
      return null;
    }
    try {
      URI uri = new URI(s.trim());
      if (uri.getScheme() != null && uri.getHost() != null && !uri.isOpaque()) {
        return uri;
      }
    } catch (URISyntaxException e) {
      // reported below
    }
    problem(key, "not a URL: " + GoStrings.quote(s));
    return null;
  }

  @Override
  public ConfigSection section(String key) {
    return child(key);
  }

  /** The child mapping at {@code key}, as {@link #section(String)}. */
  Sections child(String key) {
    Object v = raw(key);
    if (!values.containsKey(key)) {
      return null;
    }
    if (v == null) {
      return track(new Sections(join(path, key), new LinkedHashMap<>(), problems, interpolation));
    }
    if (!(v instanceof Map)) {
      problem(key, "expected a mapping, got " + typeName(v));
      return null;
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> map = (Map<String, Object>) v;
    return track(new Sections(join(path, key), map, problems, interpolation));
  }

  private Sections track(Sections child) {
    children.add(child);
    return child;
  }

  /** A mapping found elsewhere than at a key of this section (a list item), tracked like a child. */
  Sections nested(String childPath, Map<String, Object> map) {
    return track(new Sections(childPath, map, problems, interpolation));
  }

  // ---------------------------------------------------------------------------------------------------
  // Setters

  private <T> void set(String key, T value, Consumer<T> setter) {
    if (value != null) {
      apply(key, () -> setter.accept(value));
    }
  }

  @Override
  public void string(String key, Consumer<String> setter) {
    set(key, string(key), setter);
  }

  @Override
  public void integer(String key, IntConsumer setter) {
    Integer v = integer(key);
    if (v != null) {
      apply(key, () -> setter.accept(v));
    }
  }

  @Override
  public void longValue(String key, LongConsumer setter) {
    Long v = longValue(key);
    if (v != null) {
      apply(key, () -> setter.accept(v));
    }
  }

  @Override
  public void bool(String key, Consumer<Boolean> setter) {
    set(key, bool(key), setter);
  }

  @Override
  public void duration(String key, Consumer<Duration> setter) {
    set(key, duration(key), setter);
  }

  @Override
  public <E extends Enum<E>> void enumValue(String key, Class<E> type, Consumer<E> setter) {
    set(key, enumValue(key, type), setter);
  }

  @Override
  public void apply(String key, Runnable action) {
    try {
      action.run();
    } catch (RuntimeException e) {
      problem(key, describe(e));
    }
  }

  /** What a builder's exception says, for a problem. */
  static String describe(RuntimeException e) {
    String m = e.getMessage();
    if (m == null || m.isEmpty()) {
      return e.getClass().getName();
    }
    if (e instanceof IllegalArgumentException
        || e instanceof IllegalStateException
        || e instanceof UnsupportedOperationException) {
      return m;
    }
    return e.getClass().getSimpleName() + ": " + m;
  }

  /**
   * Calls {@code f} with this section, reporting what it throws at this section's path; then the keys
   * it did not get to are not reported as unknown.
   */
  <T> T build(Function<Sections, T> f) {
    try {
      return f.apply(this);
    } catch (RuntimeException e) {
      problems.add(path, describe(e));
      markAllRead();
      return null;
    }
  }

  /** Marks every key read: for a section that is skipped (disabled) or could not be built. */
  void markAllRead() {
    read.addAll(values.keySet());
  }
}
