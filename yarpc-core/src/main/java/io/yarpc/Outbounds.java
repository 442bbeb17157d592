package io.yarpc;

import io.yarpc.transport.OnewayOutbound;
import io.yarpc.transport.StreamOutbound;
import io.yarpc.transport.UnaryOutbound;

/**
 * The outbounds a dispatcher uses to reach one remote service, one per RPC type it needs. The same object
 * may serve several types (most transport outbounds implement all they support).
 *
 * <p>Build with {@link #builder()}; at least one outbound is required.
 */
public final class Outbounds {
  private final String serviceName;
  private final UnaryOutbound unary;
  private final OnewayOutbound oneway;
  private final StreamOutbound stream;

  private Outbounds(Builder b) {
    this.serviceName = b.serviceName;
    this.unary = b.unary;
    this.oneway = b.oneway;
    this.stream = b.stream;
  }

  /** A builder with nothing set. */
  public static Builder builder() {
    return new Builder();
  }

  /** Outbounds with only a unary outbound. */
  public static Outbounds unary(UnaryOutbound unary) {
    return builder().unary(unary).build();
  }

  /** The destination service name, or empty to use the outbound key. */
  public String serviceName() {
    return serviceName;
  }

  /** The unary outbound, or {@code null}. */
  public UnaryOutbound unary() {
    return unary;
  }

  /** The oneway outbound, or {@code null}. */
  public OnewayOutbound oneway() {
    return oneway;
  }

  /** The stream outbound, or {@code null}. */
  public StreamOutbound stream() {
    return stream;
  }

  /** Builds {@link Outbounds}; not thread-safe. */
  public static final class Builder {
    private String serviceName = "";
    private UnaryOutbound unary;
    private OnewayOutbound oneway;
    private StreamOutbound stream;

    private Builder() {}

    /** The destination service when it differs from the outbound key. */
    public Builder serviceName(String serviceName) {
      this.serviceName = serviceName == null ? "" : serviceName;
      return this;
    }

    /** Sets the unary outbound. */
    public Builder unary(UnaryOutbound unary) {
      this.unary = unary;
      return this;
    }

    /** Sets the oneway outbound. */
    public Builder oneway(OnewayOutbound oneway) {
      this.oneway = oneway;
      return this;
    }

    /** Sets the stream outbound. */
    public Builder stream(StreamOutbound stream) {
      this.stream = stream;
      return this;
    }

    /** The outbounds. @throws IllegalArgumentException when none is set */
    public Outbounds build() {
      if (unary == null && oneway == null && stream == null) {
        throw new IllegalArgumentException(
            "outbounds need at least one of unary, oneway or stream");
      }
      return new Outbounds(this);
    }
  }
}
