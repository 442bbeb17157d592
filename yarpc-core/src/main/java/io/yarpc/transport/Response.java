package io.yarpc.transport;

import static java.util.Objects.requireNonNull;

import io.yarpc.errors.ApplicationErrorMeta;

/**
 * The result of a unary call: response headers, a {@link Body}, and whether the body encodes an
 * application error (a domain failure on a successful transport response, see {@link
 * ApplicationErrorMeta}). The holder of a response owns its body (see {@link Body}).
 *
 * <p><b>Headers and initial headers.</b> {@link #headers()} holds every application header of the
 * response. Some of them may be {@linkplain #initialHeaders() initial headers}: those sent ahead of the
 * body where the wire has such a place — gRPC's initial metadata, where a grpc-java service's {@code
 * ServerCall.sendHeaders} puts them — while the rest ({@link #trailers()}) follow the body (gRPC's
 * trailers, where yarpc-go puts response headers). HTTP and TChannel have one place for headers and send
 * {@link #headers()}; a response received over them has no initial headers.
 */
public final class Response {
  private final Headers trailers;
  private final Headers initialHeaders;
  private final Headers headers;
  private final Body body;
  private final boolean applicationError;
  private final ApplicationErrorMeta applicationErrorMeta;
  private final String compression;
  private final boolean initialHeadersKept;

  private Response(Builder b) {
    this.trailers = b.headers;
    this.initialHeaders = b.initialHeaders;
    this.headers =
        initialHeaders.isEmpty()
            ? trailers
            : trailers.isEmpty()
                ? initialHeaders
                : initialHeaders.toBuilder().addAll(trailers).build();
    this.body = b.body;
    this.applicationError = b.applicationError;
    this.applicationErrorMeta = b.applicationErrorMeta;
    this.compression = b.compression;
    this.initialHeadersKept = b.initialHeadersKept;
  }

  /** A successful response with this body and no headers. */
  public static Response of(Body body) {
    return builder().body(body).build();
  }

  /** A builder: empty body, no headers, no application error. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder holding this response's values (the body's ownership moves to what it builds). */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.headers = trailers;
    b.initialHeaders = initialHeaders;
    b.body = body;
    b.applicationError = applicationError;
    b.applicationErrorMeta = applicationErrorMeta;
    b.compression = compression;
    b.initialHeadersKept = initialHeadersKept;
    return b;
  }

  /**
   * Every application header of the response: the {@linkplain #initialHeaders() initial headers}, then the
   * {@linkplain #trailers() others} (which win on a key set in both).
   */
  public Headers headers() {
    return headers;
  }

  /** The headers sent ahead of the body where the wire has such a place (gRPC); usually empty. */
  public Headers initialHeaders() {
    return initialHeaders;
  }

  /**
   * Whether whoever built this response kept initial headers apart from the others — a gRPC outbound does,
   * even when none came — so that an empty {@link #initialHeaders()} means "none were sent ahead of the
   * body" rather than "the wire has no such place" (HTTP, TChannel).
   */
  public boolean keepsInitialHeaders() {
    return initialHeadersKept;
  }

  /** The headers that are not {@linkplain #initialHeaders() initial}: gRPC's trailers. */
  public Headers trailers() {
    return trailers;
  }

  /**
   * The compressor the handler asked the response to be sent with (gRPC: a registered compressor name,
   * {@code gzip}), or null for the transport's default; transports that do not compress ignore it.
   */
  public String compression() {
    return compression;
  }

  /** The payload. */
  public Body body() {
    return body;
  }

  /** Whether the body encodes an application error. */
  public boolean isApplicationError() {
    return applicationError;
  }

  /** What the handler said about the application error; {@link ApplicationErrorMeta#EMPTY} if nothing. */
  public ApplicationErrorMeta applicationErrorMeta() {
    return applicationErrorMeta;
  }

  @Override
  public String toString() {
    return "Response{headers="
        + headers
        + ", length="
        + body.length()
        + (applicationError ? ", applicationError=" + applicationErrorMeta : "")
        + "}";
  }

  /** Builds a {@link Response}; not thread-safe. */
  public static final class Builder {
    private Headers headers = Headers.empty();
    private Headers initialHeaders = Headers.empty();
    private String compression;
    private boolean initialHeadersKept;
    private Body body;
    private boolean applicationError;
    private ApplicationErrorMeta applicationErrorMeta = ApplicationErrorMeta.EMPTY;

    private Builder() {}

    /**
     * Sets the response headers that are not initial headers (gRPC sends them as trailers). Note that
     * {@link Response#headers()} returns the initial headers too: to change a response's headers, build from
     * {@link Response#trailers()}, or the initial ones end up in both sets.
     */
    public Builder headers(Headers headers) {
      this.headers = requireNonNull(headers, "headers");
      return this;
    }

    /**
     * Sets the headers to send ahead of the body where the wire has such a place (default: none), and marks
     * the response as {@linkplain Response#keepsInitialHeaders() keeping them apart}.
     */
    public Builder initialHeaders(Headers initialHeaders) {
      this.initialHeaders = requireNonNull(initialHeaders, "initialHeaders");
      this.initialHeadersKept = true;
      return this;
    }

    /** Asks for the response to be compressed with {@code compressor} (see {@link #compression()}). */
    public Builder compression(String compressor) {
      this.compression = compressor;
      return this;
    }

    /** Sets the body; ownership moves to the built response. */
    public Builder body(Body body) {
      this.body = requireNonNull(body, "body");
      return this;
    }

    /** Flags the body as an application error, with no meta. */
    public Builder applicationError(boolean applicationError) {
      this.applicationError = applicationError;
      return this;
    }

    /** Flags the body as an application error described by {@code meta}. */
    public Builder applicationError(ApplicationErrorMeta meta) {
      this.applicationError = true;
      this.applicationErrorMeta = requireNonNull(meta, "meta");
      return this;
    }

    /** The response. */
    public Response build() {
      if (body == null) {
        body = Body.empty();
      }
      return new Response(this);
    }
  }
}
