package io.yarpc;

import static java.util.Objects.requireNonNull;

import io.yarpc.transport.Deadline;
import io.yarpc.transport.Headers;
import io.yarpc.transport.RequestMeta;
import java.time.Duration;

/**
 * Per-call settings for typed clients of any encoding: timeout, application headers and routing hints.
 * Immutable; {@link #DEFAULT} has none of them (an outbound call then needs a current {@link Call} to
 * inherit a deadline from).
 *
 * <pre>{@code
 * CallOptions opts = CallOptions.builder().timeout(Duration.ofMillis(500)).header("x-token", "t").build();
 * }</pre>
 */
public final class CallOptions {
  /** No options. */
  public static final CallOptions DEFAULT = builder().build();

  private final Duration timeout;
  private final Headers headers;
  private final String shardKey;
  private final String routingKey;
  private final String routingDelegate;

  private CallOptions(Builder b) {
    this.timeout = b.timeout;
    this.headers = b.headers.build();
    this.shardKey = b.shardKey;
    this.routingKey = b.routingKey;
    this.routingDelegate = b.routingDelegate;
  }

  /** A builder with nothing set. */
  public static Builder builder() {
    return new Builder();
  }

  /** Options with just a timeout. */
  public static CallOptions timeout(Duration timeout) {
    return builder().timeout(timeout).build();
  }

  /** The timeout, or {@code null}. */
  public Duration timeout() {
    return timeout;
  }

  /** The application headers. */
  public Headers headers() {
    return headers;
  }

  /**
   * Request metadata for a call: {@code procedure} and {@code encoding}, plus these options (the
   * timeout becomes a deadline from now). Caller and service are filled in by the client config.
   */
  public RequestMeta toMeta(String procedure, String encoding) {
    return RequestMeta.builder()
        .procedure(procedure)
        .encoding(encoding)
        .headers(headers)
        .shardKey(shardKey)
        .routingKey(routingKey)
        .routingDelegate(routingDelegate)
        .deadline(timeout == null ? null : Deadline.after(timeout))
        .build();
  }

  /** Builds {@link CallOptions}; not thread-safe. */
  public static final class Builder {
    private Duration timeout;
    private final Headers.Builder headers = Headers.builder();
    private String shardKey = "";
    private String routingKey = "";
    private String routingDelegate = "";

    private Builder() {}

    /** The call must finish within {@code timeout} (the earlier of this and an inherited deadline). */
    public Builder timeout(Duration timeout) {
      this.timeout = requireNonNull(timeout, "timeout");
      return this;
    }

    /** Adds an application header. */
    public Builder header(String key, String value) {
      headers.add(key, value);
      return this;
    }

    /** Adds application headers. */
    public Builder headers(Headers headers) {
      this.headers.addAll(headers);
      return this;
    }

    /** Sets the shard key. */
    public Builder shardKey(String shardKey) {
      this.shardKey = requireNonNull(shardKey, "shardKey");
      return this;
    }

    /** Sets the routing key. */
    public Builder routingKey(String routingKey) {
      this.routingKey = requireNonNull(routingKey, "routingKey");
      return this;
    }

    /** Sets the routing delegate. */
    public Builder routingDelegate(String routingDelegate) {
      this.routingDelegate = requireNonNull(routingDelegate, "routingDelegate");
      return this;
    }

    /** The options. */
    public CallOptions build() {
      return new CallOptions(this);
    }
  }
}
