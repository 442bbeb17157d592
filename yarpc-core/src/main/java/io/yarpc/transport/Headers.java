package io.yarpc.transport;

import static java.util.Objects.requireNonNull;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * Application headers: an immutable map with case-insensitive keys. The canonical key is the lower-case
 * form ({@link #get} and {@link #asMap()} use it); the casing a key was first given with is kept for
 * transports that need it ({@link #forEachOriginal}). When a key is set twice, the last value wins and the
 * first casing is kept.
 *
 * <p>Build with {@link #builder()} or {@link #of}; derive with {@link #toBuilder()}.
 */
public final class Headers {
  private static final Headers EMPTY = new Headers(Collections.emptyMap());

  /** canonical key -> {original key, value} */
  private final Map<String, String[]> entries;

  private Headers(Map<String, String[]> entries) {
    this.entries = entries;
  }

  /** No headers. */
  public static Headers empty() {
    return EMPTY;
  }

  /** Headers from alternating keys and values: {@code Headers.of("a", "1", "b", "2")}. */
  public static Headers of(String... keysAndValues) {
    if (keysAndValues.length % 2 != 0) {
      throw new IllegalArgumentException("keys and values must come in pairs");
    }
    Builder b = builder();
    for (int i = 0; i < keysAndValues.length; i += 2) {
      b.add(keysAndValues[i], keysAndValues[i + 1]);
    }
    return b.build();
  }

  /** Headers holding every entry of {@code map}, in its iteration order. */
  public static Headers fromMap(Map<String, String> map) {
    Builder b = builder();
    map.forEach(b::add);
    return b.build();
  }

  /** A builder for new headers. */
  public static Builder builder() {
    return new Builder(new LinkedHashMap<>());
  }

  /** A builder that starts with these headers. */
  public Builder toBuilder() {
    LinkedHashMap<String, String[]> copy = new LinkedHashMap<>();
    entries.forEach((k, v) -> copy.put(k, v.clone()));
    return new Builder(copy);
  }

  /** The lower-case form of a key. */
  public static String canonicalize(String key) {
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (c >= 'A' && c <= 'Z' || c > 0x7f) {
        return key.toLowerCase(Locale.ROOT);
      }
    }
    return key;
  }

  /** The value for {@code key} in any casing, or {@code null}. */
  public String get(String key) {
    String[] e = entries.get(key);
    if (e == null) {
      e = entries.get(canonicalize(key));
    }
    return e == null ? null : e[1];
  }

  /** Whether {@code key} (any casing) is present. */
  public boolean contains(String key) {
    return get(key) != null;
  }

  /** The number of distinct (case-insensitive) keys. */
  public int size() {
    return entries.size();
  }

  /** Whether there are no headers. */
  public boolean isEmpty() {
    return entries.isEmpty();
  }

  /** The canonical (lower-case) keys. */
  public Set<String> keys() {
    return Collections.unmodifiableSet(entries.keySet());
  }

  /** An unmodifiable canonical-key view: lower-case key to value. */
  public Map<String, String> asMap() {
    Map<String, String> m = new LinkedHashMap<>(entries.size() * 2);
    entries.forEach((k, v) -> m.put(k, v[1]));
    return Collections.unmodifiableMap(m);
  }

  /** Calls {@code action} with each canonical (lower-case) key and its value. */
  public void forEach(BiConsumer<String, String> action) {
    entries.forEach((k, v) -> action.accept(k, v[1]));
  }

  /** Calls {@code action} with each key as first supplied (original casing) and its value. */
  public void forEachOriginal(BiConsumer<String, String> action) {
    entries.forEach((k, v) -> action.accept(v[0], v[1]));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Headers && asMap().equals(((Headers) o).asMap());
  }

  @Override
  public int hashCode() {
    return asMap().hashCode();
  }

  @Override
  public String toString() {
    return "Headers" + keys();
  }

  /** Collects headers; not thread-safe. */
  public static final class Builder {
    private LinkedHashMap<String, String[]> entries;

    private Builder(LinkedHashMap<String, String[]> entries) {
      this.entries = entries;
    }

    /** Sets {@code key} (any casing) to {@code value}; a later value for the same key wins. */
    public Builder add(String key, String value) {
      requireNonNull(key, "key");
      requireNonNull(value, "value");
      ensureMutable();
      String canonical = canonicalize(key);
      String[] existing = entries.get(canonical);
      if (existing != null) {
        existing[1] = value;
      } else {
        entries.put(canonical, new String[] {key, value});
      }
      return this;
    }

    /** Adds every header of {@code headers}, keeping their original casing. */
    public Builder addAll(Headers headers) {
      headers.forEachOriginal(this::add);
      return this;
    }

    /** Removes {@code key} in any casing. */
    public Builder remove(String key) {
      ensureMutable();
      entries.remove(canonicalize(key));
      return this;
    }

    /** The value set so far for {@code key} in any casing, or {@code null}. */
    public String get(String key) {
      if (entries == null) {
        return lastBuilt.get(key);
      }
      String[] e = entries.get(canonicalize(key));
      return e == null ? null : e[1];
    }

    /** Immutable headers; the builder may keep being used afterwards. */
    public Headers build() {
      if (entries == null) {
        return lastBuilt;
      }
      if (entries.isEmpty()) {
        return EMPTY;
      }
      Headers built = new Headers(Collections.unmodifiableMap(entries));
      entries = null; // copy on next write
      lastBuilt = built;
      return built;
    }

    private Headers lastBuilt;

    private void ensureMutable() {
      if (entries == null) {
        entries = new LinkedHashMap<>();
        lastBuilt.entries.forEach((k, v) -> entries.put(k, v.clone()));
      }
    }
  }
}
