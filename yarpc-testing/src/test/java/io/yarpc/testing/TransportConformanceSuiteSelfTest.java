package io.yarpc.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import io.yarpc.Outbounds;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.Body;
import io.yarpc.transport.Handler;
import io.yarpc.transport.HandlerSpec;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.Router;
import io.yarpc.transport.RpcType;
import io.yarpc.transport.Transport;
import io.yarpc.transport.UnaryOutbound;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.testkit.engine.EngineTestKit;
import org.junit.platform.testkit.engine.Event;
import org.junit.platform.testkit.engine.Events;

/**
 * The kit is only worth something if it fails broken transports: runs selected suite tests against
 * in-memory transports with one defect each and checks that exactly those tests fail, for the right
 * reason. (None of the defects leaks Netty buffers, which would fail unrelated tests later.)
 */
class TransportConformanceSuiteSelfTest {

  @Test
  void anOutboundThatNeverReleasesRequestBodiesFails() {
    String failure = singleFailure(KeepsRequestBodies.class, "lazyRequestBody");
    assertThat(failure).contains("were not released").contains("lazy request body");
  }

  @Test
  void aTransportWithoutFlowControlFails() {
    String failure = singleFailure(NoFlowControl.class, "slowReceiverBackpressure");
    assertThat(failure)
        .contains("sends the handler completed while the client had received only 4");
  }

  @Test
  void aTransportThatDropsResponseHeadersFails() {
    String failure = singleFailure(DropsResponseHeaders.class, "headersRoundTripWithRaw");
    assertThat(failure).contains("echo-mixed-case");
  }

  @Test
  void aTransportThatLosesErrorCodesFails() {
    String failure = singleFailure(LosesErrorCodes.class, "errorNameRoundTrip");
    assertThat(failure).contains("unknown").contains("aborted");
  }

  @Test
  void aTransportThatReleasesResponsesTooEarlyFails() {
    String failure = singleFailure(ReleasesResponsesEarly.class, "bodyRoundTrip", "int");
    assertThat(failure).contains("body was already released");
  }

  /** The checks of what an error carries besides code and message; each broken transport fails one. */
  private static final List<String> ERROR_CARGO_CHECKS =
      List.of(
          "errorDetailsRoundTrip", "errorResponseRoundTrip", "errorResponseBodyReleasedByServer");

  @Test
  void aTransportThatDropsErrorDetailsFails() {
    String failure = onlyFailure(DropsErrorDetails.class, "errorDetailsRoundTrip");
    assertThat(failure)
        .contains("the error's details bytes")
        .contains("none arrived (null), though")
        .contains("bytes were sent");
  }

  @Test
  void aTransportThatDropsTheErrorsResponseFails() {
    String failure = onlyFailure(DropsErrorResponse.class, "errorResponseRoundTrip");
    assertThat(failure)
        .contains("the error arrived without the response the handler attached to it");
  }

  @Test
  void anInboundThatNeverReleasesTheErrorsResponseFails() {
    String failure =
        onlyFailure(KeepsErrorResponseBodies.class, "errorResponseBodyReleasedByServer");
    assertThat(failure)
        .contains(
            "the server's inbound never released the body of the response attached to the"
                + " handler's error");
  }

  @Test
  void anOutboundThatIgnoresCancellationFailsOnTheServersSide() {
    String failure = singleFailure(IgnoresCancellation.class, "clientCancellationReachesServer");
    assertThat(failure)
        .contains(
            "the client cancelled its call, but the server's handler never saw the cancellation");
    // the deadline still reaches the handler: the server's own deadline, from the TTL sent
    Events events = run(IgnoresCancellation.class, "deadlineExceededWhileHandlerRuns");
    assertThat(failures(events)).isEmpty();
  }

  @Test
  void aDeclaredLimitationSkipsItsCheckWithTheTransportsReason() {
    Events events = run(DeclaresNoErrorCargo.class, "errorDetailsRoundTrip");
    assertThat(events.skipped().count() + events.aborted().count()).isOne();
    assertThat(reasons(events.aborted()))
        .contains("DeclaresNoErrorCargo's TransportUnderTest declares errorDetailsLimitation()")
        .contains("no place for details on this wire");
    events = run(DeclaresNoErrorCargo.class, "errorResponseRoundTrip");
    assertThat(reasons(events.aborted())).contains("no place for a response on this wire");
    events = run(DeclaresNoErrorCargo.class, "errorResponseBodyReleasedByServer");
    assertThat(events.succeeded().count())
        .as("the release check runs whatever the transport carries")
        .isOne();
  }

  @Test
  void theCorrectTransportPassesTheSameTests() {
    List<String> methods =
        new java.util.ArrayList<>(
            List.of(
                "lazyRequestBody",
                "slowReceiverBackpressure",
                "headersRoundTripWithRaw",
                "errorNameRoundTrip"));
    methods.addAll(ERROR_CARGO_CHECKS);
    for (String method : methods) {
      Events events = run(InMemoryTransportConformanceTest.class, method);
      assertThat(events.failed().count()).as("failures of %s", method).isZero();
      assertThat(events.succeeded().count()).as("successes of %s", method).isOne();
    }
    Events events = run(InMemoryTransportConformanceTest.class, "bodyRoundTrip", "int");
    assertThat(events.failed().count()).isZero();
    assertThat(events.succeeded().count()).isEqualTo(4);
  }

  // ---- running
  // ------------------------------------------------------------------------------------

  /**
   * Runs every one of {@link #ERROR_CARGO_CHECKS} against {@code suite}: {@code method} must fail and the
   * others pass; returns {@code method}'s failure.
   */
  private static String onlyFailure(Class<?> suite, String method) {
    for (String other : ERROR_CARGO_CHECKS) {
      if (!other.equals(method)) {
        Events events = run(suite, other);
        assertThat(failures(events))
            .as("failures of %s.%s, which should pass", suite.getSimpleName(), other)
            .isEmpty();
        assertThat(events.succeeded().count())
            .as("successes of %s.%s", suite.getSimpleName(), other)
            .isOne();
      }
    }
    return singleFailure(suite, method);
  }

  private static String failures(Events events) {
    return reasons(events.failed());
  }

  /** The throwables (and their causes) of the events, one a line. */
  private static String reasons(Events events) {
    return events.list().stream()
        .map(
            e ->
                e.getPayload(TestExecutionResult.class)
                    .flatMap(TestExecutionResult::getThrowable)
                    .map(t -> t + (t.getCause() == null ? "" : " / " + t.getCause()))
                    .orElse("?"))
        .collect(Collectors.joining("\n"));
  }

  private static String singleFailure(Class<?> suite, String method, String... parameterTypes) {
    Events events = run(suite, method, parameterTypes);
    List<Event> failed = events.failed().list();
    assertThat(failed).as("failed tests of %s.%s", suite.getSimpleName(), method).isNotEmpty();
    assertThat(events.succeeded().count()).as("tests that passed anyway").isZero();
    return failures(events);
  }

  /** The test events of running one method of {@code suite}. */
  private static Events run(Class<?> suite, String method, String... parameterTypes) {
    return EngineTestKit.engine("junit-jupiter")
        .selectors(
            parameterTypes.length == 0
                ? selectMethod(suite, method)
                : selectMethod(suite, method, String.join(",", parameterTypes)))
        .configurationParameter("junit.jupiter.extensions.autodetection.enabled", "true")
        .execute()
        .testEvents();
  }

  // ---- broken transports (run only through EngineTestKit; Surefire skips nested classes)
  // -----------

  /**
   * The in-memory transport with its unary outbound wrapped in {@code wrap} and its inbound in {@code
   * wrapInbound}.
   */
  abstract static class Broken extends TransportConformanceSuite {
    abstract UnaryOutbound wrap(InMemoryOutbound outbound);

    Inbound wrapInbound(InMemoryInbound inbound) {
      return inbound;
    }

    String errorDetailsLimitation() {
      return null;
    }

    String errorResponseLimitation() {
      return null;
    }

    InMemoryTransport.Builder configure(InMemoryTransport.Builder builder) {
      return builder;
    }

    int maxBuffered() {
      return 1;
    }

    @Override
    protected TransportUnderTest newTransport() {
      InMemoryTransport transport = configure(InMemoryTransport.builder()).build();
      return new TransportUnderTest() {
        @Override
        public List<Inbound> serverInbounds() {
          return List.of(wrapInbound(transport.inbound()));
        }

        @Override
        public Outbounds clientOutbounds() {
          InMemoryOutbound out = transport.outbound();
          return Outbounds.builder().unary(wrap(out)).oneway(out).stream(out).build();
        }

        @Override
        public String errorDetailsLimitation() {
          return Broken.this.errorDetailsLimitation();
        }

        @Override
        public String errorResponseLimitation() {
          return Broken.this.errorResponseLimitation();
        }

        @Override
        public int maxBufferedStreamMessages() {
          return maxBuffered();
        }

        @Override
        public void assertNoLeaks() {
          transport.assertNoLeaks();
        }
      };
    }
  }

  /** A unary outbound that hands {@code call} the in-memory outbound's calls. */
  static final class Wrapped extends AbstractLifecycle implements UnaryOutbound {
    private final InMemoryOutbound inner;
    private final Function<Request, CompletableFuture<Response>> call;

    Wrapped(InMemoryOutbound inner, Function<Request, CompletableFuture<Response>> call) {
      this.inner = inner;
      this.call = call;
    }

    @Override
    public CompletableFuture<Response> call(Request request) {
      return call.apply(request);
    }

    @Override
    protected void doStart() {
      inner.start();
    }

    @Override
    protected void doStop() {
      inner.stop();
    }

    @Override
    public List<Transport> transports() {
      return inner.transports();
    }

    @Override
    public String transportName() {
      return inner.transportName();
    }
  }

  /** Sends a copy of the request body and never releases the caller's. */
  static class KeepsRequestBodies extends Broken {
    @Override
    UnaryOutbound wrap(InMemoryOutbound out) {
      return new Wrapped(out, r -> out.call(Request.of(r.meta(), Body.of(r.body().toByteArray()))));
    }
  }

  /** Lets a sender complete any number of sends while the receiver does not receive. */
  static class NoFlowControl extends Broken {
    @Override
    UnaryOutbound wrap(InMemoryOutbound out) {
      return out;
    }

    @Override
    InMemoryTransport.Builder configure(InMemoryTransport.Builder builder) {
      return builder.streamWindow(100_000);
    }
  }

  /** Forgets response headers. */
  static class DropsResponseHeaders extends Broken {
    @Override
    UnaryOutbound wrap(InMemoryOutbound out) {
      return new Wrapped(
          out,
          r -> out.call(r).thenApply(response -> Response.builder().body(response.body()).build()));
    }
  }

  /** Turns every error into {@code unknown}. */
  static class LosesErrorCodes extends Broken {
    @Override
    UnaryOutbound wrap(InMemoryOutbound out) {
      return new Wrapped(
          out,
          r ->
              out.call(r)
                  .exceptionallyCompose(
                      error -> {
                        YarpcException e = YarpcException.from(error);
                        if (e.response() != null) {
                          e.response().body().release();
                        }
                        return CompletableFuture.failedFuture(
                            YarpcException.of(Code.UNKNOWN, "%s", e.getMessage()));
                      }));
    }
  }

  /** Releases the response body before handing the response to the caller. */
  static class ReleasesResponsesEarly extends Broken {
    @Override
    UnaryOutbound wrap(InMemoryOutbound out) {
      return new Wrapped(
          out,
          r ->
              out.call(r)
                  .thenApply(
                      response -> {
                        response.body().release();
                        return response;
                      }));
    }
  }

  /** A unary outbound whose errors lose their details bytes (the rest of the error is kept). */
  static class DropsErrorDetails extends Broken {
    @Override
    UnaryOutbound wrap(InMemoryOutbound out) {
      return new Wrapped(
          out,
          r ->
              out.call(r)
                  .exceptionallyCompose(
                      error -> {
                        YarpcException e = YarpcException.from(error);
                        YarpcException withoutDetails =
                            YarpcException.of(e.code(), "%s", e.getMessage())
                                .withName(e.name())
                                .withResponse(e.response());
                        return CompletableFuture.failedFuture(withoutDetails);
                      }));
    }
  }

  /** A unary outbound that releases the response attached to an error and delivers the error without it. */
  static class DropsErrorResponse extends Broken {
    @Override
    UnaryOutbound wrap(InMemoryOutbound out) {
      return new Wrapped(
          out,
          r ->
              out.call(r)
                  .exceptionallyCompose(
                      error -> {
                        YarpcException e = YarpcException.from(error);
                        if (e.response() != null) {
                          e.response().body().release();
                        }
                        return CompletableFuture.failedFuture(e.withResponse(null));
                      }));
    }
  }

  /**
   * An inbound that sends a copy of the response attached to a handler's error and never releases the
   * handler's body (it stands between the router's handlers and the in-memory inbound).
   */
  static class KeepsErrorResponseBodies extends Broken {
    @Override
    UnaryOutbound wrap(InMemoryOutbound out) {
      return out;
    }

    @Override
    Inbound wrapInbound(InMemoryInbound inbound) {
      return new WrappedInbound(
          inbound,
          router ->
              new Router() {
                @Override
                public String defaultService() {
                  return router.defaultService();
                }

                @Override
                public List<Procedure> procedures() {
                  return router.procedures();
                }

                @Override
                public HandlerSpec choose(RequestMeta meta) {
                  HandlerSpec spec = router.choose(meta);
                  if (spec.type() != RpcType.UNARY) {
                    return spec;
                  }
                  Handler<Request, Response> handler = spec.unary();
                  return HandlerSpec.unary(
                      request ->
                          handler
                              .handle(request)
                              .exceptionallyCompose(
                                  error -> {
                                    YarpcException e = YarpcException.from(error);
                                    Response attached = e.response();
                                    if (attached == null) {
                                      return CompletableFuture.failedFuture(e);
                                    }
                                    Body copy = Body.of(attached.body().toByteArray()); // kept
                                    return CompletableFuture.failedFuture(
                                        e.withResponse(attached.toBuilder().body(copy).build()));
                                  }));
                }
              });
    }
  }

  /** A unary outbound whose future, when cancelled, does not stop the in-memory call. */
  static class IgnoresCancellation extends Broken {
    @Override
    UnaryOutbound wrap(InMemoryOutbound out) {
      return new Wrapped(
          out,
          r -> {
            CompletableFuture<Response> detached = new CompletableFuture<>();
            out.call(r)
                .whenComplete(
                    (response, error) -> {
                      if (error != null) {
                        if (!detached.completeExceptionally(error)) {
                          YarpcException.releaseResponse(error);
                        }
                      } else if (!detached.complete(response)) {
                        response.body().release();
                      }
                    });
            return detached;
          });
    }
  }

  /** The correct in-memory transport, declaring that it carries neither details nor error responses. */
  static class DeclaresNoErrorCargo extends Broken {
    @Override
    UnaryOutbound wrap(InMemoryOutbound out) {
      return out;
    }

    @Override
    String errorDetailsLimitation() {
      return "no place for details on this wire";
    }

    @Override
    String errorResponseLimitation() {
      return "no place for a response on this wire";
    }
  }

  /** An inbound that gives the in-memory inbound a router wrapped by {@code wrapRouter}. */
  static final class WrappedInbound extends AbstractLifecycle implements Inbound {
    private final InMemoryInbound inner;
    private final Function<Router, Router> wrapRouter;

    WrappedInbound(InMemoryInbound inner, Function<Router, Router> wrapRouter) {
      this.inner = inner;
      this.wrapRouter = wrapRouter;
    }

    @Override
    public void setRouter(Router router) {
      inner.setRouter(wrapRouter.apply(router));
    }

    @Override
    protected void doStart() {
      inner.start();
    }

    @Override
    protected void doStop() {
      inner.stop();
    }

    @Override
    public List<Transport> transports() {
      return inner.transports();
    }

    @Override
    public String transportName() {
      return inner.transportName();
    }
  }
}
