package io.yarpc.transport;

import static java.util.Objects.requireNonNull;

import io.yarpc.errors.ApplicationErrorMeta;

/**
 * The result of a unary call: response headers, a {@link Body}, and whether the body encodes an
 * application error (a domain failure on a successful transport response, see {@link
 * ApplicationErrorMeta}). The holder of a response owns its body (see {@link Body}).
 */
public final class Response {
  private final Headers headers;
  private final Body body;
  private final boolean applicationError;
  private final ApplicationErrorMeta applicationErrorMeta;

  private Response(Builder b) {
    this.headers = b.headers;
    this.body = b.body;
    this.applicationError = b.applicationError;
    this.applicationErrorMeta = b.applicationErrorMeta;
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
    b.headers = headers;
    b.body = body;
    b.applicationError = applicationError;
    b.applicationErrorMeta = applicationErrorMeta;
    return b;
  }

  /** Response headers. */
  public Headers headers() {
    return headers;
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
    return "Response{headers=" + headers + ", length=" + body.length()
        + (applicationError ? ", applicationError=" + applicationErrorMeta : "") + "}";
  }

  /** Builds a {@link Response}; not thread-safe. */
  public static final class Builder {
    private Headers headers = Headers.empty();
    private Body body;
    private boolean applicationError;
    private ApplicationErrorMeta applicationErrorMeta = ApplicationErrorMeta.EMPTY;

    private Builder() {}

    /** Sets the response headers. */
    public Builder headers(Headers headers) {
      this.headers = requireNonNull(headers, "headers");
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
