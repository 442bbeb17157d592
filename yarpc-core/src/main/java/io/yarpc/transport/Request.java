package io.yarpc.transport;

import static java.util.Objects.requireNonNull;

/**
 * A unary or oneway call as every transport and encoding sees it: {@link RequestMeta} plus a {@link Body}.
 * The body's ownership follows the rules in {@link Body}: on the server the invocation owns it, on the
 * client the outbound that receives the request owns it.
 */
public final class Request {
  private final RequestMeta meta;
  private final Body body;

  private Request(RequestMeta meta, Body body) {
    this.meta = requireNonNull(meta, "meta");
    this.body = requireNonNull(body, "body");
  }

  /** A request with this metadata and body. */
  public static Request of(RequestMeta meta, Body body) {
    return new Request(meta, body);
  }

  /** The metadata. */
  public RequestMeta meta() {
    return meta;
  }

  /** The payload. */
  public Body body() {
    return body;
  }

  /** A request with the same body and different metadata (the body's ownership moves with it). */
  public Request withMeta(RequestMeta meta) {
    return new Request(meta, body);
  }

  /** Shorthand for {@code meta().caller()}. */
  public String caller() {
    return meta.caller();
  }

  /** Shorthand for {@code meta().service()}. */
  public String service() {
    return meta.service();
  }

  /** Shorthand for {@code meta().procedure()}. */
  public String procedure() {
    return meta.procedure();
  }

  /** Shorthand for {@code meta().encoding()}. */
  public String encoding() {
    return meta.encoding();
  }

  /** Shorthand for {@code meta().headers()}. */
  public Headers headers() {
    return meta.headers();
  }

  /** Shorthand for {@code meta().deadline()}. */
  public Deadline deadline() {
    return meta.deadline();
  }

  @Override
  public String toString() {
    return "Request{" + meta + ", length=" + body.length() + "}";
  }
}
