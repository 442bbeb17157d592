package io.yarpc.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.Dispatcher;
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.KeepAlive;
import io.yarpc.transport.Transport;
import io.yarpc.transport.TransportComponent;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcTransport;
import io.yarpc.transport.http.HttpTransport;
import io.yarpc.transport.tchannel.TChannelTransport;
import java.io.StringReader;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The {@code keepalive} section of each transport ({@code ConfigContext.keepAlive}): its keys reach the
 * transport's builder, yarpc-go's {@code grpc-keepalive} block reads unchanged there, {@code enabled:
 * false} and a missing section leave keepalive off, and bad values are reported at their key. And the
 * gRPC inbound's {@code limits.permitKeepAliveWithoutCalls}.
 */
class KeepAliveConfigTest {
  private static final String OUTBOUNDS =
      String.join(
          "\n",
          "outbounds:",
          "  over-http: {service: s, http: {url: \"http://127.0.0.1:8080\"}}",
          "  over-grpc: {service: s, grpc: {address: \"127.0.0.1:8081\"}}",
          "  over-tchannel: {service: s, tchannel: {peer: \"127.0.0.1:8082\"}}",
          "");

  private static <T extends Transport> T transport(Dispatcher d, String outbound, Class<T> type) {
    TransportComponent unary = (TransportComponent) d.outbounds().get(outbound).unary();
    return type.cast(unary.transports().get(0));
  }

  private static void inspect(String yaml, java.util.function.Consumer<Dispatcher> check) {
    Dispatcher d = YarpcConfig.load("keyvalue", new StringReader(yaml)).build();
    try {
      check.accept(d);
    } finally {
      d.stop();
    }
  }

  @Test
  void eachTransportTakesItsKeepaliveSection() {
    String yaml =
        OUTBOUNDS
            + String.join(
                "\n",
                "transports:",
                "  http:",
                "    keepalive: {time: 200ms, timeout: 500ms}",
                "  grpc:",
                "    keepalive: {time: 30s, timeout: 5s, withoutCalls: true}",
                "  tchannel:",
                "    keepalive: {}",
                "");
    inspect(
        yaml,
        d -> {
          assertThat(transport(d, "over-http", HttpTransport.class).keepAlive())
              .isEqualTo(
                  KeepAlive.builder()
                      .time(Duration.ofMillis(200))
                      .timeout(Duration.ofMillis(500))
                      .build());
          assertThat(transport(d, "over-grpc", GrpcTransport.class).keepAlive())
              .isEqualTo(
                  KeepAlive.builder()
                      .time(Duration.ofSeconds(30))
                      .timeout(Duration.ofSeconds(5))
                      .withoutCalls(true)
                      .build());
          assertThat(transport(d, "over-tchannel", TChannelTransport.class).keepAlive())
              .as("an empty section: the defaults")
              .isEqualTo(KeepAlive.builder().build());
        });
  }

  @Test
  void withoutTheSectionOrWithEnabledFalseKeepaliveIsOff() {
    inspect(
        OUTBOUNDS + "transports:\n  grpc:\n    keepalive: {enabled: false, time: 10s}\n",
        d -> {
          assertThat(transport(d, "over-http", HttpTransport.class).keepAlive()).isNull();
          assertThat(transport(d, "over-grpc", GrpcTransport.class).keepAlive()).isNull();
          assertThat(transport(d, "over-tchannel", TChannelTransport.class).keepAlive()).isNull();
        });
  }

  @Test
  void yarpcGosGrpcKeepaliveBlockReadsUnchangedOnTheTransport() {
    Map<String, Object> block =
        Map.of("enabled", true, "time", "10s", "timeout", "30s", "permit-without-stream", true);
    Dispatcher d =
        YarpcConfig.load(
                "keyvalue",
                Map.of(
                    "outbounds",
                    Map.of("users", Map.of("grpc", Map.of("address", "127.0.0.1:8081"))),
                    "transports",
                    Map.of("grpc", Map.of("keepalive", block))))
            .build();
    try {
      assertThat(transport(d, "users", GrpcTransport.class).keepAlive())
          .isEqualTo(
              KeepAlive.builder()
                  .time(Duration.ofSeconds(10))
                  .timeout(Duration.ofSeconds(30))
                  .withoutCalls(true)
                  .build());
    } finally {
      d.stop();
    }
  }

  @Test
  void badValuesAreReportedAtTheirKeys() {
    String yaml =
        OUTBOUNDS
            + String.join(
                "\n",
                "transports:",
                "  http:",
                "    keepalive: {time: 0s, timeout: soon}",
                "  grpc:",
                "    keepalive: {time: 10s, withoutCalls: true, permit-without-stream: true}",
                "  tchannel:",
                "    keepalive: {interval: 10s}",
                "");
    assertThat(Fixtures.problems(YarpcConfig.loader(), YarpcConfig.parse(new StringReader(yaml))))
        .containsExactlyInAnyOrder(
            "transports.http.keepalive.time: time must be positive: PT0S",
            "transports.http.keepalive.timeout: not a duration: \"soon\" (not a number followed by"
                + " a unit; e.g. 500ms, 1m30s)",
            "transports.grpc.keepalive.permit-without-stream: the same as withoutCalls: give one"
                + " of them",
            "transports.tchannel.keepalive.interval: unknown key (known keys here: enabled,"
                + " permit-without-stream, time, timeout, withoutCalls)");
    assertThat(
            Fixtures.problems(
                YarpcConfig.loader(),
                YarpcConfig.parse(
                    new StringReader(OUTBOUNDS + "transports:\n  http:\n    keepalive: 10s\n"))))
        .containsExactly("transports.http.keepalive: expected a mapping, got a string");
  }

  @Test
  void grpcInboundLimitsPermitKeepAliveWithoutCalls() {
    inspect(
        String.join(
            "\n",
            "inbounds:",
            "  grpc:",
            "    address: 127.0.0.1:0",
            "    limits: {permitKeepAliveTime: 10s, permitKeepAliveWithoutCalls: true}",
            ""),
        d -> {
          InboundLimits limits = ((GrpcInbound) d.inbounds().get(0)).limits();
          assertThat(limits.permitKeepAliveTime()).isEqualTo(Duration.ofSeconds(10));
          assertThat(limits.permitKeepAliveWithoutCalls()).isTrue();
        });
  }
}
