package io.yarpc.transport;

import static java.util.Objects.requireNonNull;

/**
 * Everything about a call except its body: who calls whom, which procedure, in which encoding, over which
 * transport, with which application headers and routing hints, and by when it must finish. A stream call
 * is described by a {@code RequestMeta} alone; a unary or oneway call by a {@link Request}.
 *
 * <p>Immutable; build with {@link #builder()}, derive with {@link #toBuilder()}. Unset strings are empty,
 * never null; the deadline is null when unset.
 */
public final class RequestMeta {
  private final String caller;
  private final String service;
  private final String procedure;
  private final String encoding;
  private final String transport;
  private final Headers headers;
  private final Headers propagationHeaders;
  private final String shardKey;
  private final String routingKey;
  private final String routingDelegate;
  private final String callerProcedure;
  private final Deadline deadline;
  private final ConnectionInfo connection;

  private RequestMeta(Builder b) {
    this.caller = b.caller;
    this.service = b.service;
    this.procedure = b.procedure;
    this.encoding = b.encoding;
    this.transport = b.transport;
    this.headers = b.headers;
    this.propagationHeaders = b.propagationHeaders;
    this.shardKey = b.shardKey;
    this.routingKey = b.routingKey;
    this.routingDelegate = b.routingDelegate;
    this.callerProcedure = b.callerProcedure;
    this.deadline = b.deadline;
    this.connection = b.connection;
  }

  /** {@code m} with another deadline; no builder: inbounds apply a deadline policy to every call. */
  private RequestMeta(RequestMeta m, Deadline deadline) {
    this.caller = m.caller;
    this.service = m.service;
    this.procedure = m.procedure;
    this.encoding = m.encoding;
    this.transport = m.transport;
    this.headers = m.headers;
    this.propagationHeaders = m.propagationHeaders;
    this.shardKey = m.shardKey;
    this.routingKey = m.routingKey;
    this.routingDelegate = m.routingDelegate;
    this.callerProcedure = m.callerProcedure;
    this.deadline = deadline;
    this.connection = m.connection;
  }

  /** This meta with {@code deadline} ({@code null}: none) instead of its own. */
  RequestMeta withDeadline(Deadline deadline) {
    return new RequestMeta(this, deadline);
  }

  /** A builder with every field unset. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding this meta's values. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** Name of the calling service. */
  public String caller() {
    return caller;
  }

  /** Name of the destination service. */
  public String service() {
    return service;
  }

  /** Procedure name, e.g. {@code echo} or {@code pkg.Service::Method}. */
  public String procedure() {
    return procedure;
  }

  /** Encoding of the body: {@code raw}, {@code json}, {@code proto}, {@code thrift} or a custom one. */
  public String encoding() {
    return encoding;
  }

  /** Name of the transport carrying the call ({@code http}, {@code grpc}, {@code tchannel}...). */
  public String transport() {
    return transport;
  }

  /** Application headers. */
  public Headers headers() {
    return headers;
  }

  /**
   * Context-propagation headers: trace context and baggage ({@code traceparent}, {@code uber-trace-id},
   * {@code uberctx-*}...), kept apart from the {@linkplain #headers() application headers}. Each transport
   * carries them in its native place, where yarpc-go puts its tracer's headers ({@link
   * PropagationHeaders}), and an inbound fills them from there. Tracing middleware writes them on
   * outbound calls and reads them on inbound ones; without it they are empty and nothing copies them from
   * an inbound call to the outbound calls it makes.
   */
  public Headers propagationHeaders() {
    return propagationHeaders;
  }

  /** Opaque key telling the destination which shard owns the request. */
  public String shardKey() {
    return shardKey;
  }

  /** Traffic group for the destination; may override the service for routing. */
  public String routingKey() {
    return routingKey;
  }

  /** Traffic group of a proxy routing on behalf of the destination. */
  public String routingDelegate() {
    return routingDelegate;
  }

  /** The procedure of the caller that makes this request. */
  public String callerProcedure() {
    return callerProcedure;
  }

  /** When the call must finish, or {@code null} when no deadline was set. */
  public Deadline deadline() {
    return deadline;
  }

  /**
   * The connection an inbound call arrived on (addresses, TLS session, the client's verified
   * certificate), or {@code null} on the client side and for transports without connections.
   */
  public ConnectionInfo connection() {
    return connection;
  }

  @Override
  public String toString() {
    // Headers (and propagation headers, whose baggage is headers too) are left out on purpose: they
    // may carry personal data.
    return "RequestMeta{caller="
        + caller
        + ", service="
        + service
        + ", procedure="
        + procedure
        + ", encoding="
        + encoding
        + ", transport="
        + transport
        + ", shardKey="
        + shardKey
        + ", routingKey="
        + routingKey
        + ", routingDelegate="
        + routingDelegate
        + ", callerProcedure="
        + callerProcedure
        + ", deadline="
        + deadline
        + "}";
  }

  /** Builds a {@link RequestMeta}; not thread-safe. */
  public static final class Builder {
    private String caller = "";
    private String service = "";
    private String procedure = "";
    private String encoding = "";
    private String transport = "";
    private Headers headers = Headers.empty();
    private Headers propagationHeaders = Headers.empty();
    private String shardKey = "";
    private String routingKey = "";
    private String routingDelegate = "";
    private String callerProcedure = "";
    private Deadline deadline;
    private ConnectionInfo connection;

    private Builder() {}

    private Builder(RequestMeta m) {
      caller = m.caller;
      service = m.service;
      procedure = m.procedure;
      encoding = m.encoding;
      transport = m.transport;
      headers = m.headers;
      propagationHeaders = m.propagationHeaders;
      shardKey = m.shardKey;
      routingKey = m.routingKey;
      routingDelegate = m.routingDelegate;
      callerProcedure = m.callerProcedure;
      deadline = m.deadline;
      connection = m.connection;
    }

    private static String orEmpty(String s) {
      return s == null ? "" : s;
    }

    /** Sets the calling service's name. */
    public Builder caller(String caller) {
      this.caller = orEmpty(caller);
      return this;
    }

    /** Sets the destination service's name. */
    public Builder service(String service) {
      this.service = orEmpty(service);
      return this;
    }

    /** Sets the procedure name. */
    public Builder procedure(String procedure) {
      this.procedure = orEmpty(procedure);
      return this;
    }

    /** Sets the body's encoding. */
    public Builder encoding(String encoding) {
      this.encoding = orEmpty(encoding);
      return this;
    }

    /** Sets the transport's name. */
    public Builder transport(String transport) {
      this.transport = orEmpty(transport);
      return this;
    }

    /** Sets the application headers. */
    public Builder headers(Headers headers) {
      this.headers = requireNonNull(headers, "headers");
      return this;
    }

    /** Sets the context-propagation headers (see {@link RequestMeta#propagationHeaders()}). */
    public Builder propagationHeaders(Headers propagationHeaders) {
      this.propagationHeaders = requireNonNull(propagationHeaders, "propagationHeaders");
      return this;
    }

    /** Sets the shard key. */
    public Builder shardKey(String shardKey) {
      this.shardKey = orEmpty(shardKey);
      return this;
    }

    /** Sets the routing key. */
    public Builder routingKey(String routingKey) {
      this.routingKey = orEmpty(routingKey);
      return this;
    }

    /** Sets the routing delegate. */
    public Builder routingDelegate(String routingDelegate) {
      this.routingDelegate = orEmpty(routingDelegate);
      return this;
    }

    /** Sets the caller's own procedure. */
    public Builder callerProcedure(String callerProcedure) {
      this.callerProcedure = orEmpty(callerProcedure);
      return this;
    }

    /** Sets the deadline ({@code null}: none). */
    public Builder deadline(Deadline deadline) {
      this.deadline = deadline;
      return this;
    }

    /** Sets the inbound connection the call arrived on ({@code null}: unknown). Set by inbounds. */
    public Builder connection(ConnectionInfo connection) {
      this.connection = connection;
      return this;
    }

    /** The immutable meta. */
    public RequestMeta build() {
      return new RequestMeta(this);
    }
  }
}
