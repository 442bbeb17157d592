package io.yarpc.examples;

import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.errors.Code;
import io.yarpc.examples.gateway.GatewayExample;
import io.yarpc.examples.middleware.MiddlewareExample;
import io.yarpc.examples.protobuf.ProtobufExample;
import io.yarpc.examples.rawjson.RawJsonExample;
import io.yarpc.examples.tracing.TracingExample;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The example programs of the README run and show what they say they show. */
@Timeout(120)
class ExamplesTest {
  @Test
  void rawAndJson() {
    assertThat(RawJsonExample.run()).isEqualTo("Hello, Ada!");
  }

  @Test
  void protobuf() throws Exception {
    assertThat(ProtobufExample.run()).isEqualTo("t-2");
  }

  @Test
  void middleware() {
    assertThat(MiddlewareExample.run())
        .anySatisfy(l -> assertThat(l).startsWith("[server] vault-client -> vault::open: ok"))
        .anySatisfy(l -> assertThat(l).startsWith("[client] vault-client -> vault::open: ok"))
        .anySatisfy(
            l -> assertThat(l).startsWith("[server] stranger -> vault::open: unauthenticated"))
        .contains("with a token:    the vault is open")
        .anySatisfy(l -> assertThat(l).startsWith("without a token: unauthenticated"));
  }

  @Test
  void gatewayDeadlinePropagates() throws Exception {
    GatewayExample.Observed o = GatewayExample.run();
    // Deadlines only shrink along the path: no hop gets more time than the one before it.
    assertThat(o.fast().gatewayRemainingMillis)
        .isPositive()
        .isLessThanOrEqualTo(o.clientTimeoutMillis());
    assertThat(o.fast().usersRemainingMillis)
        .isPositive()
        .isLessThanOrEqualTo(o.fast().gatewayRemainingMillis);
    assertThat(o.slowError()).isNotNull();
    assertThat(o.slowError().code()).isEqualTo(Code.DEADLINE_EXCEEDED);
    assertThat(o.usersSawOnSlowCall()).startsWith("its call ended: ");
  }

  @Test
  void tracingFollowsTheCallOverEveryTransport() throws Exception {
    TracingExample.Observed o = TracingExample.run();
    assertThat(o.spans()).hasSize(6);
    String traceId = o.spans().get(0).getTraceId();
    assertThat(o.spans()).allSatisfy(s -> assertThat(s.getTraceId()).isEqualTo(traceId));
    assertThat(o.spans())
        .filteredOn(s -> !s.getParentSpanContext().isValid())
        .as("one root: the client's span")
        .hasSize(1);
    assertThat(o.spans())
        .extracting(s -> s.getKind() + " " + s.getName())
        .containsExactlyInAnyOrder(
            "CLIENT gateway/profile",
            "SERVER gateway/profile",
            "CLIENT users/lookup",
            "SERVER users/lookup",
            "CLIENT store/get",
            "SERVER store/get");
    assertThat(o.storeSawTenant()).isEqualTo("acme");
  }
}
