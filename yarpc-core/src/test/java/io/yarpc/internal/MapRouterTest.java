package io.yarpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.HandlerSpec;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class MapRouterTest {
  private final MapRouter router = new MapRouter("svc");

  private static HandlerSpec spec() {
    return HandlerSpec.unary(r -> CompletableFuture.completedFuture(Response.of(Body.empty())));
  }

  private static RequestMeta meta(String service, String procedure, String encoding) {
    return RequestMeta.builder()
        .caller("c")
        .service(service)
        .procedure(procedure)
        .encoding(encoding)
        .build();
  }

  @Test
  void missingFieldsAreListedInYarpcOrder() {
    assertThatThrownBy(() -> router.choose(RequestMeta.builder().build()))
        .isInstanceOfSatisfying(
            YarpcException.class,
            e -> {
              assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
              assertThat(e.getMessage())
                  .isEqualTo("missing service name, procedure, caller name, encoding");
            });
    assertThatThrownBy(
            () -> router.choose(RequestMeta.builder().service("svc").procedure("p").build()))
        .hasMessage("missing caller name, encoding");
  }

  @Test
  void unknownServiceListsAvailableServicesSorted() {
    router.register(Procedure.builder("p").service("zeta").handler(spec()).build(), spec());
    router.register(Procedure.builder("p").handler(spec()).build(), spec());
    assertThatThrownBy(() -> router.choose(meta("x", "p", "raw")))
        .isInstanceOfSatisfying(
            YarpcException.class,
            e -> {
              assertThat(e.code()).isEqualTo(Code.UNIMPLEMENTED);
              assertThat(e.getMessage())
                  .isEqualTo(
                      "unrecognized service name \"x\", available services: \"svc\", \"zeta\"");
            });
  }

  @Test
  void unknownProcedure() {
    router.register(Procedure.builder("p").handler(spec()).build(), spec());
    assertThatThrownBy(() -> router.choose(meta("svc", "q", "raw")))
        .isInstanceOfSatisfying(
            YarpcException.class,
            e -> {
              assertThat(e.code()).isEqualTo(Code.UNIMPLEMENTED);
              assertThat(e.getMessage())
                  .isEqualTo("unrecognized procedure \"q\" for service \"svc\"");
            });
  }

  @Test
  void exactEncodingThenWildcard() {
    HandlerSpec json = spec();
    HandlerSpec proto = spec();
    HandlerSpec any = spec();
    router.register(Procedure.builder("p").encoding("json").handler(json).build(), json);
    router.register(Procedure.builder("p").encoding("proto").handler(proto).build(), proto);
    router.register(Procedure.builder("w").handler(any).build(), any);
    assertThat(router.choose(meta("svc", "p", "json"))).isSameAs(json);
    assertThat(router.choose(meta("svc", "p", "proto"))).isSameAs(proto);
    assertThat(router.choose(meta("svc", "w", "thrift"))).isSameAs(any);
    // two encodings registered: no fallback
    assertThatThrownBy(() -> router.choose(meta("svc", "p", "thrift")))
        .hasMessage("unrecognized procedure \"p\" for service \"svc\"");
  }

  @Test
  void singleEncodingFallbackRoutesToTheOnlyHandler() {
    HandlerSpec json = spec();
    router.register(Procedure.builder("echo").encoding("json").handler(json).build(), json);
    assertThat(router.choose(meta("svc", "echo", "thrift"))).isSameAs(json);
  }

  @Test
  void clashingRegistrationsAreRejected() {
    router.register(Procedure.builder("p").encoding("json").handler(spec()).build(), spec());
    assertThatThrownBy(
            () -> router.register(Procedure.builder("p").handler(spec()).build(), spec()))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(
            () ->
                router.register(
                    Procedure.builder("p").encoding("json").handler(spec()).build(), spec()))
        .isInstanceOf(IllegalArgumentException.class);
    router.register(Procedure.builder("w").handler(spec()).build(), spec());
    assertThatThrownBy(
            () -> router.register(Procedure.builder("w").handler(spec()).build(), spec()))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void proceduresAreSortedAndCarryTheDefaultService() {
    router.register(Procedure.builder("b").handler(spec()).build(), spec());
    router.register(Procedure.builder("a").encoding("json").handler(spec()).build(), spec());
    router.register(Procedure.builder("a").service("other").handler(spec()).build(), spec());
    assertThat(router.procedures())
        .extracting(p -> p.service() + "/" + p.name() + "/" + p.encoding())
        .containsExactly("other/a/", "svc/a/json", "svc/b/");
  }

  @Test
  void proceduresKeepTheirSchema() {
    Object schema = new Object();
    router.register(Procedure.builder("s").schema(schema).handler(spec()).build(), spec());
    router.register(Procedure.builder("t").handler(spec()).build(), spec());
    assertThat(router.procedures()).extracting(Procedure::schema).containsExactly(schema, null);
  }
}
