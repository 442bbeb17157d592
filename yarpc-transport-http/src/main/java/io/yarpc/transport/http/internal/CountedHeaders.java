package io.yarpc.transport.http.internal;

import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpHeadersFactory;

/**
 * The header (or trailer) blocks the HTTP/1.1 decoder fills, refusing the field past {@code
 * InboundLimits.maxHeaderCount} while the block is being decoded: the decoder adds each field as it
 * parses its line, so the field over the limit throws {@link TooManyHeadersException} there, and the
 * decoder turns the request into a failed one (answered 431) and discards the rest of the connection's
 * input. Netty's own validation of names and values is kept.
 */
final class CountedHeaders implements HttpHeadersFactory {
  /** The request carries more header fields than the limit. */
  static final class TooManyHeadersException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    TooManyHeadersException(int max) {
      super("more than " + max + " header fields");
    }

    @Override
    public synchronized Throwable fillInStackTrace() {
      return this; // an answer to a peer, not a bug: no stack to capture
    }
  }

  private final DefaultHttpHeadersFactory validation;
  private final int max;

  private CountedHeaders(DefaultHttpHeadersFactory validation, int max) {
    this.validation = validation;
    this.max = max;
  }

  /** Request headers with at most {@code max} fields. */
  static CountedHeaders headers(int max) {
    return new CountedHeaders(DefaultHttpHeadersFactory.headersFactory(), max);
  }

  /** Chunked-body trailers with at most {@code max} fields. */
  static CountedHeaders trailers(int max) {
    return new CountedHeaders(DefaultHttpHeadersFactory.trailersFactory(), max);
  }

  @Override
  public HttpHeaders newHeaders() {
    return new Counting(validation, max);
  }

  @Override
  public HttpHeaders newEmptyHeaders() {
    return validation.newEmptyHeaders();
  }

  private static final class Counting extends DefaultHttpHeaders {
    private final int max;
    private int count;

    Counting(DefaultHttpHeadersFactory validation, int max) {
      super(validation.getNameValidator(), validation.getValueValidator());
      this.max = max;
    }

    @Override
    public HttpHeaders add(CharSequence name, Object value) {
      if (++count > max) {
        throw new TooManyHeadersException(max);
      }
      return super.add(name, value);
    }

    @Override
    public HttpHeaders add(String name, Object value) {
      return add((CharSequence) name, value);
    }
  }
}
