package io.yarpc.transport;

import static java.util.Objects.requireNonNull;

import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
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
 *
 * <p>Stored as one array of entries in insertion order, searched linearly while there are few (a call's
 * headers usually are: one small array per call instead of a map's table and entries); with more than
 * {@value #INDEXED_FROM} a hash index over the canonical keys keeps lookups and building linear in the
 * number of headers.
 */
public final class Headers {
  /** From this many entries on, a hash index finds keys (below it, a linear search is cheaper). */
  static final int INDEXED_FROM = 16;

  private static final String[] NONE = new String[0];
  private static final Headers EMPTY = new Headers(NONE, 0, null);

  /** Per entry, in insertion order: canonical key, key as first given, value. */
  private final String[] entries;

  private final int size;

  /** canonical key -> entry number, when {@code size >= INDEXED_FROM}; else null. */
  private final Map<String, Integer> index;

  private Headers(String[] entries, int size, Map<String, Integer> index) {
    this.entries = entries;
    this.size = size;
    this.index = index;
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
    Builder b = new Builder(keysAndValues.length / 2);
    for (int i = 0; i < keysAndValues.length; i += 2) {
      b.add(keysAndValues[i], keysAndValues[i + 1]);
    }
    return b.build();
  }

  /** Headers holding every entry of {@code map}, in its iteration order. */
  public static Headers fromMap(Map<String, String> map) {
    Builder b = new Builder(map.size());
    map.forEach(b::add);
    return b.build();
  }

  /** A builder for new headers. */
  public static Builder builder() {
    return new Builder(2);
  }

  /** A builder that starts with these headers. */
  public Builder toBuilder() {
    return new Builder(this);
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
    requireNonNull(key, "key");
    if (size == 0) {
      return null;
    }
    int i = find(entries, size, index, key);
    if (i < 0) {
      String canonical = canonicalize(key);
      if (canonical != key) {
        i = find(entries, size, index, canonical);
      }
    }
    return i < 0 ? null : entries[3 * i + 2];
  }

  /** Whether {@code key} (any casing) is present. */
  public boolean contains(String key) {
    return get(key) != null;
  }

  /** The number of distinct (case-insensitive) keys. */
  public int size() {
    return size;
  }

  /** Whether there are no headers. */
  public boolean isEmpty() {
    return size == 0;
  }

  /** The canonical (lower-case) keys, in insertion order. */
  public Set<String> keys() {
    Set<String> keys = new LinkedHashSet<>(size * 2);
    for (int i = 0; i < size; i++) {
      keys.add(entries[3 * i]);
    }
    return Collections.unmodifiableSet(keys);
  }

  /** An unmodifiable canonical-key view: lower-case key to value. */
  public Map<String, String> asMap() {
    Map<String, String> m = new LinkedHashMap<>(size * 2);
    forEach(m::put);
    return Collections.unmodifiableMap(m);
  }

  /** Calls {@code action} with each canonical (lower-case) key and its value. */
  public void forEach(BiConsumer<String, String> action) {
    for (int i = 0; i < size; i++) {
      action.accept(entries[3 * i], entries[3 * i + 2]);
    }
  }

  /** Calls {@code action} with each key as first supplied (original casing) and its value. */
  public void forEachOriginal(BiConsumer<String, String> action) {
    for (int i = 0; i < size; i++) {
      action.accept(entries[3 * i + 1], entries[3 * i + 2]);
    }
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

  /** The number of the entry whose canonical key is {@code canonical}, or -1. */
  private static int find(
      String[] entries, int size, Map<String, Integer> index, String canonical) {
    if (index != null) {
      Integer i = index.get(canonical);
      return i == null ? -1 : i;
    }
    for (int i = 0; i < size; i++) {
      if (canonical.equals(entries[3 * i])) {
        return i;
      }
    }
    return -1;
  }

  /** Collects headers; not thread-safe. */
  public static final class Builder {
    private String[] entries;
    private int size;
    private Map<String, Integer> index;

    /** Whether {@link #entries} (and the index) are shared with the last headers built. */
    private boolean shared;

    private Headers lastBuilt;

    private Builder(int expected) {
      this.entries = expected == 0 ? NONE : new String[3 * expected];
    }

    private Builder(Headers from) {
      this.entries = from.entries;
      this.size = from.size;
      this.index = from.index;
      this.shared = true;
      this.lastBuilt = from;
    }

    /** Sets {@code key} (any casing) to {@code value}; a later value for the same key wins. */
    public Builder add(String key, String value) {
      requireNonNull(key, "key");
      requireNonNull(value, "value");
      String canonical = canonicalize(key);
      int i = find(entries, size, index, canonical);
      ensureMutable(1);
      if (i >= 0) {
        entries[3 * i + 2] = value;
        return this;
      }
      int at = 3 * size;
      entries[at] = canonical;
      entries[at + 1] = key;
      entries[at + 2] = value;
      size++;
      if (index != null) {
        index.put(canonical, size - 1);
      } else if (size >= INDEXED_FROM) {
        reindex();
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
      int i = find(entries, size, index, canonicalize(key));
      if (i < 0) {
        return this;
      }
      ensureMutable(0);
      System.arraycopy(entries, 3 * (i + 1), entries, 3 * i, 3 * (size - i - 1));
      size--;
      Arrays.fill(entries, 3 * size, 3 * size + 3, null);
      if (index != null) {
        if (size < INDEXED_FROM) {
          index = null;
        } else {
          reindex();
        }
      }
      return this;
    }

    /** The value set so far for {@code key} in any casing, or {@code null}. */
    public String get(String key) {
      int i = find(entries, size, index, canonicalize(key));
      return i < 0 ? null : entries[3 * i + 2];
    }

    /** Immutable headers; the builder may keep being used afterwards. */
    public Headers build() {
      if (size == 0) {
        return EMPTY;
      }
      if (shared) {
        return lastBuilt;
      }
      shared = true; // copy on next write
      lastBuilt = new Headers(entries, size, index);
      return lastBuilt;
    }

    /** Makes the entries this builder's own, with room for {@code more} entries. */
    private void ensureMutable(int more) {
      int needed = 3 * (size + more);
      if (shared) {
        entries = Arrays.copyOf(entries, Math.max(needed, entries.length));
        if (index != null) {
          index = new HashMap<>(index);
        }
        shared = false;
      } else if (needed > entries.length) {
        entries = Arrays.copyOf(entries, Math.max(needed, 2 * entries.length));
      }
    }

    private void reindex() {
      index = new HashMap<>(size * 2);
      for (int i = 0; i < size; i++) {
        index.put(entries[3 * i], i);
      }
    }
  }
}
