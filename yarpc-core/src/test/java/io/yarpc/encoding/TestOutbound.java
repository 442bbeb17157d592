package io.yarpc.encoding;

import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.Body;
import io.yarpc.transport.OnewayOutbound;
import io.yarpc.transport.Request;
import io.yarpc.transport.Response;
import io.yarpc.transport.UnaryOutbound;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * Test-only unary + oneway outbound. {@link #loopback()} routes each request into its dispatcher's own
 * router ({@code dispatcher.router().choose(meta).unary().handle(request)}), as an inbound would; {@link
 * #stub} answers with a function. It records every response body it hands to the client (also those
 * attached to errors) so tests can check they were released, and every request body it hands to the
 * server. With {@link #streamBodies} set, bodies crossing it lose byte access (they become {@link
 * CountingBody#streamOnly stream-only} bodies), as from a transport that only streams.
 */
public final class TestOutbound extends AbstractLifecycle implements UnaryOutbound, OnewayOutbound {
  /** A generous timeout for test calls. */
  public static final CallOptions OPTIONS = CallOptions.timeout(Duration.ofSeconds(10));

  public final List<Body> clientResponseBodies = new CopyOnWriteArrayList<>();
  public final List<Body> serverRequestBodies = new CopyOnWriteArrayList<>();
  public volatile boolean streamBodies;

  private final Function<Request, CompletableFuture<Response>> unary;
  private volatile Dispatcher dispatcher;

  private TestOutbound(Function<Request, CompletableFuture<Response>> unary) {
    this.unary = unary;
  }

  /** An outbound into the dispatcher built by {@link #dispatcher}. */
  public static TestOutbound loopback() {
    return new TestOutbound(null);
  }

  /** An outbound whose unary calls {@code answer} answers (it owns the request body it gets). */
  public static TestOutbound stub(Function<Request, CompletableFuture<Response>> answer) {
    return new TestOutbound(answer);
  }

  /**
   * A dispatcher called {@code name} whose outbound key {@code name} (so caller and service are both
   * {@code name}) goes through this outbound; started.
   */
  public Dispatcher dispatcher(String name) {
    Dispatcher d =
        Dispatcher.builder(name)
            .outbound(name, Outbounds.builder().unary(this).oneway(this).build())
            .build();
    this.dispatcher = d;
    d.start();
    return d;
  }

  @Override
  public CompletableFuture<Response> call(Request request) {
    CompletableFuture<Response> answer;
    Request in = request;
    try {
      in = inbound(request);
      answer =
          unary != null
              ? unary.apply(in)
              : dispatcher.router().choose(in.meta()).unary().handle(in);
    } catch (RuntimeException e) {
      request.body().release();
      in.body().release();
      return CompletableFuture.failedFuture(e);
    }
    CompletableFuture<Response> out = new CompletableFuture<>();
    out.whenComplete(
        (v, e) -> {
          if (out.isCancelled()) {
            answer.cancel(false);
          }
        });
    answer.whenComplete(
        (response, error) -> {
          if (error != null) {
            io.yarpc.errors.YarpcException e = io.yarpc.errors.YarpcException.from(error);
            if (e.response() != null) {
              clientResponseBodies.add(e.response().body());
            }
            out.completeExceptionally(e);
            return;
          }
          Response r = response;
          if (streamBodies) {
            Body original = r.body();
            byte[] bytes = original.toByteArray();
            original.release();
            r = r.toBuilder().body(CountingBody.streamOnly(bytes)).build();
          }
          clientResponseBodies.add(r.body());
          if (!out.complete(r)) {
            r.body().release();
          }
        });
    return out;
  }

  @Override
  public CompletableFuture<Void> callOneway(Request request) {
    Request in = request;
    try {
      in = inbound(request);
      dispatcher.router().choose(in.meta()).oneway().handle(in);
      return CompletableFuture.completedFuture(null);
    } catch (RuntimeException e) {
      request.body().release();
      in.body().release();
      return CompletableFuture.failedFuture(e);
    }
  }

  /** The request as the server sees it (the outbound's own body is released once "sent"). */
  private Request inbound(Request request) {
    if (!streamBodies) {
      serverRequestBodies.add(request.body());
      return request;
    }
    byte[] bytes = request.body().toByteArray();
    request.body().release();
    Body body = CountingBody.streamOnly(bytes);
    serverRequestBodies.add(body);
    return Request.of(request.meta(), body);
  }

  @Override
  public String transportName() {
    return "loopback";
  }

  @Override
  protected void doStart() {}

  @Override
  protected void doStop() {}
}
