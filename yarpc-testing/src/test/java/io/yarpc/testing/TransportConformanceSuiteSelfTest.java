package io.yarpc.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import io.yarpc.Outbounds;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.Body;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.Request;
import io.yarpc.transport.Response;
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

  @Test
  void theCorrectTransportPassesTheSameTests() {
    for (String method :
        List.of(
            "lazyRequestBody",
            "slowReceiverBackpressure",
            "headersRoundTripWithRaw",
            "errorNameRoundTrip")) {
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

  private static String singleFailure(Class<?> suite, String method, String... parameterTypes) {
    Events events = run(suite, method, parameterTypes);
    List<Event> failed = events.failed().list();
    assertThat(failed).as("failed tests of %s.%s", suite.getSimpleName(), method).isNotEmpty();
    assertThat(events.succeeded().count()).as("tests that passed anyway").isZero();
    return failed.stream()
        .map(
            e ->
                e.getPayload(TestExecutionResult.class)
                    .flatMap(TestExecutionResult::getThrowable)
                    .map(t -> t + (t.getCause() == null ? "" : " / " + t.getCause()))
                    .orElse("?"))
        .collect(Collectors.joining("\n"));
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

  /** The in-memory transport with its unary outbound wrapped in {@code wrap}. */
  abstract static class Broken extends TransportConformanceSuite {
    abstract UnaryOutbound wrap(InMemoryOutbound outbound);

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
          return List.of(transport.inbound());
        }

        @Override
        public Outbounds clientOutbounds() {
          InMemoryOutbound out = transport.outbound();
          return Outbounds.builder().unary(wrap(out)).oneway(out).stream(out).build();
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
}
