package io.yarpc.config.spi;

import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import java.util.function.LongConsumer;

/**
 * One mapping of a configuration document, as a spec sees it: its {@linkplain #path() key path} and typed
 * getters for its keys.
 *
 * <p><b>Getters never throw.</b> A value of the wrong type, a missing required key, a bad duration or
 * address is recorded as a problem at the key's path ({@code inbounds.http.limits.idleTimeout: not a
 * duration: "5"}) and the getter returns {@code null}; the loader throws one exception listing every
 * problem once the whole document was read. A key that is absent, or present with a null value ({@code
 * key:} with nothing after it), reads as absent.
 *
 * <p><b>Known keys.</b> Reading a key with any getter (even one that finds it absent) marks it as known;
 * after a spec's build returns, every key of its sections that nothing read is reported as {@code unknown
 * key}. {@link #has(String)} and {@link #keys()} do not mark.
 *
 * <p><b>Setters.</b> The overloads that take a consumer call it only when the key is present and valid,
 * and report what it throws ({@link IllegalArgumentException}, say, from a builder that refuses 0) at the
 * key's path.
 *
 * <p><b>Strings</b> are interpolated when read: {@code ${NAME}} becomes the variable's value (from the
 * environment unless the loader was given another lookup), {@code ${NAME:default}} its value or {@code
 * default} when it is unset; {@code $$} is a literal {@code $}. A variable that is unset and has no
 * default is a problem. Numbers and booleans may be written as strings ({@code "8080"}, {@code
 * ${PORT:8080}}); a number read as a string is its decimal text.
 *
 * <p>Durations are Go's: a sequence of decimal numbers with units {@code ns}, {@code us} ({@code µs}),
 * {@code ms}, {@code s}, {@code m}, {@code h}, e.g. {@code 500ms}, {@code 1m30s}, {@code 1.5h}, or
 * {@code 0}; negative durations are refused.
 *
 * <p>Not thread-safe; valid only during the build call that received it.
 */
public interface ConfigSection {
  /** The dotted path of this section from the document's root, e.g. {@code outbounds.users.http}. */
  String path();

  /** The path of {@code key} in this section, e.g. {@code outbounds.users.http.url}. */
  String path(String key);

  /** The keys present (with a value or null), in document order; does not mark them known. */
  Set<String> keys();

  /** Whether {@code key} is present with a non-null value; does not mark it known. */
  boolean has(String key);

  /** The string at {@code key} (interpolated; a number or boolean as its text), or null. */
  String string(String key);

  /** The string at {@code key}, or null and a problem {@code missing required key} when absent or empty. */
  String requireString(String key);

  /** The integer at {@code key} (an {@code int}), or null. */
  Integer integer(String key);

  /** The integer at {@code key} (a {@code long}), or null. */
  Long longValue(String key);

  /** The boolean at {@code key} ({@code true} or {@code false}), or null. */
  Boolean bool(String key);

  /** The Go-style duration at {@code key} (see the class comment), or null. */
  Duration duration(String key);

  /**
   * The constant of {@code type} named at {@code key}, matched ignoring case and treating {@code -} as
   * {@code _} ({@code permissive}, {@code crc32c}, {@code optional}), or null; a problem lists the valid
   * names.
   */
  <E extends Enum<E>> E enumValue(String key, Class<E> type);

  /** The list of strings at {@code key} (each interpolated), or null. */
  List<String> strings(String key);

  /** The mapping of strings to strings at {@code key} (values interpolated), in order, or null. */
  Map<String, String> stringMap(String key);

  /**
   * The address at {@code key} to listen on: {@code host:port}, {@code [ipv6]:port}, or {@code :port}
   * (every interface: host {@code 0.0.0.0}), port 0 to 65535 (0: any free port). Unresolved: {@link
   * InetSocketAddress#getHostString()} and {@link InetSocketAddress#getPort()} give the parts. Null and a
   * problem {@code not host:port} otherwise.
   */
  InetSocketAddress address(String key);

  /**
   * The absolute URL at {@code key} with a scheme and a host, or null and a problem {@code not a URL:
   * "..."}.
   */
  URI url(String key);

  /**
   * The mapping at {@code key}, or null when absent; an empty section when the key is present with a null
   * value (so {@code grpc:} with nothing after it configures a default).
   */
  ConfigSection section(String key);

  /** As {@link #string(String)}, passed to {@code setter} when present. */
  void string(String key, Consumer<String> setter);

  /** As {@link #integer(String)}, passed to {@code setter} when present. */
  void integer(String key, IntConsumer setter);

  /** As {@link #longValue(String)}, passed to {@code setter} when present. */
  void longValue(String key, LongConsumer setter);

  /** As {@link #bool(String)}, passed to {@code setter} when present. */
  void bool(String key, Consumer<Boolean> setter);

  /** As {@link #duration(String)}, passed to {@code setter} when present. */
  void duration(String key, Consumer<Duration> setter);

  /** As {@link #enumValue(String, Class)}, passed to {@code setter} when present. */
  <E extends Enum<E>> void enumValue(String key, Class<E> type, Consumer<E> setter);

  /**
   * Runs {@code action}, reporting what it throws as a problem at {@code key}'s path (the section's own
   * path when {@code key} is null); for builder calls that take several values.
   */
  void apply(String key, Runnable action);

  /**
   * Which of two spellings of one key the section uses: {@code alias} when it is present, else {@code
   * key} (yarpc-go's name and the Java builder's, say). Marks both known; both present is a problem.
   */
  String alias(String key, String alias);

  /**
   * Reports {@code key}, when present, as a feature this implementation does not have: a problem {@code
   * not supported: <reason>}, so that a file written for another implementation is never half-applied
   * in silence.
   */
  void unsupported(String key, String reason);

  /**
   * Records a problem at {@code key}'s path (the section's own path when {@code key} is null) and marks
   * the key known.
   */
  void problem(String key, String message);

  /** Whether a problem was recorded in this section or below it. */
  boolean hasProblems();
}
