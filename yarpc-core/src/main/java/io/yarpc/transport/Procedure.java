package io.yarpc.transport;

import static java.util.Objects.requireNonNull;

/**
 * A named handler registered with a dispatcher. Routing key: (service, name, encoding). An empty service
 * means the dispatcher's own name; an empty encoding registers a wildcard that takes requests in any
 * encoding (the raw encoding does this and checks the encoding itself).
 *
 * <p>Immutable; build with {@link #builder(String)}.
 */
public final class Procedure {
  private final String name;
  private final String service;
  private final String encoding;
  private final HandlerSpec handlerSpec;
  private final String signature;
  private final boolean nonBlocking;
  private final Object schema;
  private final int maxConcurrentCalls;

  private Procedure(Builder b) {
    this.name = b.name;
    this.service = b.service;
    this.encoding = b.encoding;
    this.handlerSpec = requireNonNull(b.handlerSpec, "handlerSpec");
    this.signature = b.signature;
    this.nonBlocking = b.nonBlocking;
    this.schema = b.schema;
    this.maxConcurrentCalls = b.maxConcurrentCalls;
  }

  /** A builder for the procedure called {@code name}. */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  /** A builder holding this procedure's values. */
  public Builder toBuilder() {
    Builder b = new Builder(name);
    b.service = service;
    b.encoding = encoding;
    b.handlerSpec = handlerSpec;
    b.signature = signature;
    b.nonBlocking = nonBlocking;
    b.schema = schema;
    b.maxConcurrentCalls = maxConcurrentCalls;
    return b;
  }

  /** Calls of this procedure handled at once at most (0: no limit of its own); see the builder. */
  public int maxConcurrentCalls() {
    return maxConcurrentCalls;
  }

  /** The procedure name, e.g. {@code echo} or {@code pkg.Service::Method}. */
  public String name() {
    return name;
  }

  /** The service it belongs to; empty means the dispatcher's name. */
  public String service() {
    return service;
  }

  /** The encoding it accepts; empty means any (wildcard). */
  public String encoding() {
    return encoding;
  }

  /** The handler. */
  public HandlerSpec handlerSpec() {
    return handlerSpec;
  }

  /** A human-readable signature for introspection, possibly empty. */
  public String signature() {
    return signature;
  }

  /**
   * Whether the handler never blocks, so the dispatcher may call it directly on the transport's thread
   * instead of its handler executor.
   */
  public boolean isNonBlocking() {
    return nonBlocking;
  }

  /**
   * A description of the procedure's messages for introspection, e.g. reflection, or {@code null} (the
   * default). Core never looks inside: the object's type is an agreement between an encoding and the
   * transports or tools that read it. The protobuf encoding sets the grpc {@code ServiceDescriptor}'s schema
   * descriptor (an {@code io.grpc.protobuf.ProtoFileDescriptorSupplier}), which the gRPC inbound's
   * reflection service reads.
   */
  public Object schema() {
    return schema;
  }

  @Override
  public String toString() {
    return "Procedure{"
        + service
        + "/"
        + name
        + (encoding.isEmpty() ? "" : " (" + encoding + ")")
        + ", "
        + handlerSpec.type()
        + "}";
  }

  /** Builds a {@link Procedure}; not thread-safe. */
  public static final class Builder {
    private final String name;
    private String service = "";
    private String encoding = "";
    private HandlerSpec handlerSpec;
    private String signature = "";
    private boolean nonBlocking;
    private Object schema;
    private int maxConcurrentCalls;

    private Builder(String name) {
      requireNonNull(name, "name");
      if (name.isEmpty()) {
        throw new IllegalArgumentException("a procedure needs a name");
      }
      this.name = name;
    }

    /** Sets the service (empty: the dispatcher's name). */
    public Builder service(String service) {
      this.service = service == null ? "" : service;
      return this;
    }

    /** Sets the encoding (empty: any). */
    public Builder encoding(String encoding) {
      this.encoding = encoding == null ? "" : encoding;
      return this;
    }

    /** Sets the handler. */
    public Builder handler(HandlerSpec handlerSpec) {
      this.handlerSpec = requireNonNull(handlerSpec, "handlerSpec");
      return this;
    }

    /** Sets a unary handler. */
    public Builder unary(Handler<Request, Response> handler) {
      return handler(HandlerSpec.unary(handler));
    }

    /** Sets a oneway handler. */
    public Builder oneway(Handler<Request, Void> handler) {
      return handler(HandlerSpec.oneway(handler));
    }

    /** Sets a streaming handler. */
    public Builder streaming(Handler<ServerStream, Void> handler) {
      return handler(HandlerSpec.streaming(handler));
    }

    /** Sets the introspection signature. */
    public Builder signature(String signature) {
      this.signature = signature == null ? "" : signature;
      return this;
    }

    /** Marks the handler as non-blocking: it runs on the transport's thread. */
    public Builder nonBlocking(boolean nonBlocking) {
      this.nonBlocking = nonBlocking;
      return this;
    }

    /**
     * Sets the introspection schema, see {@link Procedure#schema()}; {@code null} (the default) means none.
     * It should be immutable and safe to share between threads.
     */
    public Builder schema(Object schema) {
      this.schema = schema;
      return this;
    }

    /**
     * Calls of this procedure the dispatcher handles at once at most, so one slow or popular procedure
     * cannot take the whole handler pool; default 0, no limit of its own (the inbounds' per-connection
     * limits and the handler pool still apply). A call beyond it is refused at once with {@code
     * resource-exhausted}, before its handler runs.
     */
    public Builder maxConcurrentCalls(int max) {
      if (max < 0) {
        throw new IllegalArgumentException("maxConcurrentCalls must not be negative: " + max);
      }
      this.maxConcurrentCalls = max;
      return this;
    }

    /** The procedure. */
    public Procedure build() {
      return new Procedure(this);
    }
  }
}
