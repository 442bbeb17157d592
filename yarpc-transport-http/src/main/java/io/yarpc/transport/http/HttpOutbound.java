package io.yarpc.transport.http;

import static java.util.Objects.requireNonNull;

import io.netty.handler.codec.http.FullHttpRequest;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Checks;
import io.yarpc.internal.Futures;
import io.yarpc.netty.internal.IoErrors;
import io.yarpc.peer.HasPeerChooser;
import io.yarpc.peer.PeerCalls;
import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerLease;
import io.yarpc.peer.SinglePeerChooser;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.OnewayOutbound;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.Transport;
import io.yarpc.transport.UnaryOutbound;
import io.yarpc.transport.http.internal.ClientCall;
import io.yarpc.transport.http.internal.ClientResponse;
import io.yarpc.transport.http.internal.HttpPeer;
import io.yarpc.transport.http.internal.OutboundCodec;
import io.yarpc.transport.http.internal.WireHeaders;
import java.net.URI;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Sends unary and oneway YARPC calls over HTTP/1.1 (default) or HTTP/2 to the peers its {@link
 * PeerChooser} picks, in plaintext (h2c for HTTP/2) or, to {@code https://} peers, over TLS (see {@link
 * HttpTransport}), with yarpc-go's wire format: {@code POST} with {@code Rpc-*} headers, responses read back into a
 * {@link Response} or a {@link YarpcException} (docs/spec/wire-http.md §3.3: {@code Rpc-Error-Code}, or
 * the status-code table when it is absent, so a bare 504 is {@code deadline-exceeded}).
 *
 * <p><b>Ownership.</b> The outbound owns a request's body from the call on: it writes it into a pooled
 * buffer and releases it at once. The caller owns the returned response's body — byte access over the
 * buffers Netty received, released when the caller releases the body — and the body of a response an
 * error carries. Cancelling the returned future aborts the call: the request is not sent if it was not
 * yet, otherwise the connection (HTTP/1.1) or stream (HTTP/2) is closed, and anything that arrives later
 * is released. Each chosen {@link PeerLease} is finished once.
 *
 * <p><b>Failures.</b> The call's deadline passing: {@code deadline-exceeded}; a peer that cannot be
 * connected to or a connection that breaks: {@code unavailable}; a response body larger than
 * {@link Builder#maxResponseBodySize}: {@code resource-exhausted}; a response from another service:
 * {@code internal}; a TLS handshake that fails: {@code unavailable}, naming the reason.
 *
 * <p>The outbound starts and stops its chooser, and starts its transport if needed.
 */
public final class HttpOutbound extends AbstractLifecycle
    implements UnaryOutbound, OnewayOutbound, HasPeerChooser {
  private final HttpTransport transport;
  private final PeerChooser chooser;
  private final boolean http2;
  private final String path;
  private final List<Map.Entry<String, String>> headers;
  private final int maxResponseBodySize;

  private HttpOutbound(Builder b) {
    this.transport = b.transport;
    this.chooser = b.chooser != null ? b.chooser : SinglePeerChooser.of(b.transport, b.singlePeer);
    this.http2 = b.http2;
    this.path = b.path;
    this.headers = List.copyOf(b.headers);
    this.maxResponseBodySize = b.maxResponseBodySize;
  }

  /** The chooser that picks each call's peer. */
  @Override
  public PeerChooser chooser() {
    return chooser;
  }

  /** {@code http} for HTTP/1.1, {@code http2} for HTTP/2 (as yarpc-go names them), over TLS or not. */
  @Override
  public String transportName() {
    return http2 ? "http2" : "http";
  }

  @Override
  public List<Transport> transports() {
    return List.of(transport);
  }

  @Override
  protected void doStart() {
    transport.start();
    chooser.start();
  }

  @Override
  protected void doStop() {
    chooser.stop();
  }

  @Override
  public CompletableFuture<Response> call(Request request) {
    requireNonNull(request, "request");
    RequestMeta meta = request.meta();
    CompletableFuture<Response> result = new CompletableFuture<>();
    send(request, result, response -> OutboundCodec.response(meta, response));
    return result;
  }

  @Override
  public CompletableFuture<Void> callOneway(Request request) {
    requireNonNull(request, "request");
    RequestMeta meta = request.meta();
    CompletableFuture<Void> result = new CompletableFuture<>();
    send(
        request,
        result,
        response -> {
          OutboundCodec.response(meta, response).body().release();
          return null;
        });
    return result;
  }

  private interface Reader<T> {
    T read(ClientResponse response);
  }

  private <T> void send(Request request, CompletableFuture<T> result, Reader<T> reader) {
    RequestMeta meta = request.meta();
    if (!isRunning()) {
      request.body().release();
      result.completeExceptionally(
          Checks.notRunning("HTTP outbound for service \"" + meta.service() + "\""));
      return;
    }
    try {
      WireHeaders.checkApplicationHeaders(meta.headers());
    } catch (YarpcException e) {
      request.body().release();
      result.completeExceptionally(e);
      return;
    }
    // The caller's thread serialises the body into a pooled buffer (released after writing or on
    // failure).
    FullHttpRequest[] holder = new FullHttpRequest[1];
    try {
      holder[0] = OutboundCodec.request(request.body(), path, transport.writeAllocator());
    } catch (Exception e) {
      result.completeExceptionally(
          e instanceof YarpcException
              ? e
              : YarpcException.withCause(
                  Code.INVALID_ARGUMENT,
                  String.format(
                      "failed to write the request body for procedure \"%s\" of service \"%s\": %s",
                      meta.procedure(), meta.service(), IoErrors.describe(e)),
                  e));
      return;
    }
    FullHttpRequest httpRequest = holder[0];
    AtomicReference<ClientCall> callRef = new AtomicReference<>();
    // The deadline is core's (ClientConfig's call path): when it passes, or the caller gives up,
    // the returned future is cancelled, and the exchange is aborted here (the choice by PeerCalls).
    result.whenComplete(
        (v, e) -> {
          ClientCall call = callRef.get();
          if (e != null && call != null) {
            call.cancel();
          }
        });
    PeerCalls.choose(
        chooser,
        meta,
        result,
        httpRequest::release,
        lease -> {
          HttpPeer peer;
          try {
            peer = transport.runningPeer(lease.peer());
          } catch (RuntimeException e) {
            httpRequest.release();
            lease.finish(e);
            result.completeExceptionally(
                YarpcException.withCause(Code.INTERNAL, e.getMessage(), e));
            return;
          }
          OutboundCodec.writeHeaders(httpRequest, meta, peer.authority(), headers);
          ClientCall call = peer.send(httpRequest, http2, maxResponseBodySize);
          callRef.set(call);
          if (result.isDone()) {
            call.cancel();
          }
          call.result()
              .whenComplete(
                  (response, callError) -> {
                    if (callError != null) {
                      lease.finish(callError);
                      result.completeExceptionally(YarpcException.from(Futures.unwrap(callError)));
                      return;
                    }
                    T value;
                    try {
                      value = reader.read(response);
                    } catch (RuntimeException e) {
                      YarpcException ye = YarpcException.from(e);
                      lease.finish(ye); // an error response: the peer's outcome is the error
                      if (!result.completeExceptionally(ye)) {
                        YarpcException.releaseResponse(ye);
                      }
                      return;
                    }
                    lease.finish(null);
                    if (!result.complete(value) && value instanceof Response) {
                      ((Response) value).body().release();
                    }
                  });
        });
  }

  @Override
  public String toString() {
    return "HttpOutbound{" + transportName() + ", " + chooser + "}";
  }

  /**
   * Builds an {@link HttpOutbound}; get one from {@link HttpTransport#outboundBuilder(PeerChooser)} or
   * {@link HttpTransport#singleOutboundBuilder(String)}. Not thread-safe.
   */
  public static final class Builder {
    private final HttpTransport transport;
    private final PeerChooser chooser;
    private String singlePeer;
    private boolean http2;
    private String path = "/";
    private final List<Map.Entry<String, String>> headers = new ArrayList<>();
    private int maxResponseBodySize = 64 << 20;

    Builder(HttpTransport transport, PeerChooser chooser) {
      this.transport = transport;
      this.chooser = chooser;
    }

    static Builder single(HttpTransport transport, String address) {
      Builder b = new Builder(transport, null);
      if (address.contains("://")) {
        URI uri = URI.create(address);
        boolean https = "https".equalsIgnoreCase(uri.getScheme());
        if (!https && !"http".equalsIgnoreCase(uri.getScheme())) {
          throw new IllegalArgumentException(
              "only http:// and https:// URLs are supported, got " + address);
        }
        if (uri.getPort() < 0) {
          throw new IllegalArgumentException("URL needs a port: " + address);
        }
        String host = uri.getHost();
        b.singlePeer =
            (https ? "https://" : "")
                + (host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host)
                + ":"
                + uri.getPort();
        if (uri.getRawPath() != null && !uri.getRawPath().isEmpty()) {
          b.path = uri.getRawPath();
        }
      } else {
        if (address.lastIndexOf(':') <= 0) {
          throw new IllegalArgumentException("address must be host:port, got " + address);
        }
        b.singlePeer = address;
      }
      return b;
    }

    /**
     * Use HTTP/2, one multiplexed connection per peer: h2c (prior knowledge) to plaintext peers, ALPN
     * {@code h2} to {@code https://} peers; default false.
     */
    public Builder http2(boolean http2) {
      this.http2 = http2;
      return this;
    }

    /** The request path; default {@code /} (yarpc-go's inbound ignores it). */
    public Builder path(String path) {
      requireNonNull(path, "path");
      this.path = path.startsWith("/") ? path : "/" + path;
      return this;
    }

    /**
     * A header added to every request, as yarpc-go's {@code AddHeader}.
     *
     * @throws IllegalArgumentException for keys starting with {@code Rpc-} (reserved for YARPC)
     */
    public Builder header(String key, String value) {
      requireNonNull(key, "key");
      requireNonNull(value, "value");
      if (key.toLowerCase(Locale.ROOT).startsWith("rpc-")) {
        throw new IllegalArgumentException(
            "header keys starting with \"Rpc-\" are reserved: " + key);
      }
      headers.add(
          new AbstractMap.SimpleImmutableEntry<>(
              WireHeaders.canonicalMimeKey(key), WireHeaders.sanitizeValue(value)));
      return this;
    }

    /** Largest response body accepted, in bytes; default 64 MiB. Larger: {@code resource-exhausted}. */
    public Builder maxResponseBodySize(int bytes) {
      if (bytes < 0) {
        throw new IllegalArgumentException("bytes must not be negative: " + bytes);
      }
      this.maxResponseBodySize = bytes;
      return this;
    }

    /** The outbound, not started. */
    public HttpOutbound build() {
      return new HttpOutbound(this);
    }
  }
}
