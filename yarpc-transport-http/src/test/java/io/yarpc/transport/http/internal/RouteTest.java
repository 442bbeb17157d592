package io.yarpc.transport.http.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.HandlerSpec;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.Router;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * {@link CallServer#route}: routing first, then the TTL error found while decoding, then the missing
 * deadline, then the call type, each error as yarpc-go words it.
 */
class RouteTest {
  private static final HandlerSpec UNARY =
      HandlerSpec.unary(
          r -> CompletableFuture.completedFuture(Response.of(io.yarpc.transport.Body.empty())));
  private static final HandlerSpec ONEWAY =
      HandlerSpec.oneway(r -> CompletableFuture.completedFuture(null));
  private static final HandlerSpec STREAMING =
      HandlerSpec.streaming(s -> CompletableFuture.completedFuture(null));
  private static final YarpcException TTL_ERROR =
      YarpcException.of(Code.INVALID_ARGUMENT, "invalid TTL \"x\"");

  /** A router that answers every request with what {@code choose} gives. */
  private static Router router(Function<RequestMeta, HandlerSpec> choose) {
    return new Router() {
      @Override
      public List<Procedure> procedures() {
        return List.of();
      }

      @Override
      public HandlerSpec choose(RequestMeta meta) {
        return choose.apply(meta);
      }
    };
  }

  private static RequestMeta meta(boolean deadline) {
    RequestMeta.Builder b =
        RequestMeta.builder().caller("c").service("s").procedure("p").encoding("raw");
    return (deadline ? b.deadline(Deadline.after(Duration.ofSeconds(10))) : b).build();
  }

  private static YarpcException failure(Router router, RequestMeta meta, YarpcException ttlError) {
    return catchThrowableOfType(
        YarpcException.class,
        () -> CallServer.route(router, meta, ttlError, DeadlinePolicy.strict()));
  }

  @Test
  void unaryAndOnewayWithADeadlineAreRouted() {
    assertThat(
            CallServer.route(router(m -> UNARY), meta(true), null, DeadlinePolicy.strict()).spec())
        .isSameAs(UNARY);
    assertThat(
            CallServer.route(router(m -> ONEWAY), meta(true), null, DeadlinePolicy.strict()).spec())
        .isSameAs(ONEWAY);
  }

  @Test
  void noRouterIsUnavailable() {
    YarpcException e = failure(null, meta(true), TTL_ERROR);
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage()).isEqualTo("inbound has no router");
  }

  @Test
  void aRoutingErrorWinsOverTheTtlError() {
    YarpcException notFound = YarpcException.of(Code.UNIMPLEMENTED, "unrecognized procedure");
    assertThat(
            failure(
                router(
                    m -> {
                      throw notFound;
                    }),
                meta(false),
                TTL_ERROR))
        .isSameAs(notFound);
    YarpcException unknown =
        failure(
            router(
                m -> {
                  throw new IllegalStateException("router broke");
                }),
            meta(false),
            TTL_ERROR);
    assertThat(unknown.code()).isEqualTo(Code.UNKNOWN);
    // the router's own text stays in the server's log
    assertThat(unknown.getMessage())
        .isEqualTo("failed to route procedure \"p\" of service \"s\" (the server logged why)");
  }

  @Test
  void theTtlErrorIsReportedAfterRouting() {
    assertThat(failure(router(m -> UNARY), meta(false), TTL_ERROR)).isSameAs(TTL_ERROR);
    assertThat(failure(router(m -> STREAMING), meta(false), TTL_ERROR)).isSameAs(TTL_ERROR);
  }

  @Test
  void aMissingDeadlineIsLeftToTheDispatcherOrFilledByThePolicy() {
    // strict (the default): routed with no deadline; the dispatcher's handler answers missing TTL
    assertThat(
            CallServer.route(router(m -> UNARY), meta(false), null, DeadlinePolicy.strict())
                .meta()
                .deadline())
        .isNull();
    // a default timeout serves plain HTTP clients that send no Context-TTL-MS
    RequestMeta given =
        CallServer.route(
                router(m -> UNARY),
                meta(false),
                null,
                DeadlinePolicy.withDefaultTimeout(Duration.ofSeconds(3)))
            .meta();
    assertThat(given.deadline()).isNotNull();
    assertThat(given.deadline().remainingNanos()).isPositive().isLessThanOrEqualTo(3_000_000_000L);
  }

  @Test
  void streamingHandlersAreNotServedOverHttp() {
    for (boolean deadline : new boolean[] {true, false}) {
      YarpcException e = failure(router(m -> STREAMING), meta(deadline), null);
      assertThat(e.code()).isEqualTo(Code.UNIMPLEMENTED);
      assertThat(e.getMessage()).isEqualTo("transport http does not handle Streaming handlers");
    }
  }
}
