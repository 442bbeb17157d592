package io.yarpc.observability.tracing;

import static io.yarpc.observability.tracing.TracingTestSupport.span;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.baggage.Baggage;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcTransport;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpTransport;
import io.yarpc.transport.tchannel.TChannelInbound;
import io.yarpc.transport.tchannel.TChannelTransport;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The gateway example's shape stretched over all three transports, every service with tracing installed:
 *
 * <pre>
 *   client --HTTP--> gateway "profile" --gRPC--> users "lookup" --TChannel--> store "get"
 * </pre>
 *
 * One trace comes out: six spans, each server span the child of its caller's client span, each client
 * span the child of the server span whose handler made it; baggage set by the client reaches the last
 * handler; no hop sees trace headers among its application headers.
 */
class MultiHopTraceTest {
  private final TracingTestSupport otel = new TracingTestSupport();
  private final Map<String, RequestMeta> seen = new ConcurrentHashMap<>();
  private final Map<String, String> seenTraceIds = new ConcurrentHashMap<>();
  private volatile String storeBaggage;

  @AfterEach
  void stop() {
    otel.close();
  }

  @Test
  void oneTraceAcrossHttpGrpcAndTChannel() throws Exception {
    // store: TChannel inbound
    TChannelInbound storeInbound = TChannelTransport.of("store").inbound();
    Dispatcher store = otel.start(Dispatcher.builder("store").inbound(storeInbound));
    store.register(
        Raw.procedure(
            "get",
            body -> {
              record("store");
              storeBaggage = Baggage.current().getEntryValue("tenant");
              return ("stored " + new String(body, UTF_8)).getBytes(UTF_8);
            }));

    // users: gRPC inbound, TChannel outbound to store
    GrpcInbound usersInbound =
        GrpcTransport.create().inbound(new InetSocketAddress("127.0.0.1", 0));
    Dispatcher users =
        otel.start(
            Dispatcher.builder("users")
                .inbound(usersInbound)
                .outbound(
                    "store",
                    Outbounds.unary(
                        TChannelTransport.of("users").singleOutbound(storeInbound.hostPort()))));
    RawClient toStore = RawClient.of(users.clientConfig("store"));
    users.register(
        Raw.procedure(
            "lookup",
            body -> {
              record("users");
              return toStore.call("get", body, CallOptions.DEFAULT).join();
            }));

    // gateway: HTTP inbound, gRPC outbound to users
    HttpInbound gatewayInbound = HttpTransport.create().inbound();
    Dispatcher gateway =
        otel.start(
            Dispatcher.builder("gateway")
                .inbound(gatewayInbound)
                .outbound(
                    "users",
                    Outbounds.unary(
                        GrpcTransport.create()
                            .singleOutbound("127.0.0.1:" + usersInbound.port()))));
    RawClient toUsers = RawClient.of(gateway.clientConfig("users"));
    gateway.register(
        Raw.procedure(
            "profile",
            body -> {
              record("gateway");
              return toUsers.call("lookup", body, CallOptions.DEFAULT).join();
            }));

    // client: HTTP outbound to gateway
    Dispatcher client =
        otel.start(
            Dispatcher.builder("client")
                .outbound(
                    "gateway",
                    Outbounds.unary(
                        HttpTransport.create().singleOutbound(gatewayInbound.hostPort()))));
    RawClient toGateway = RawClient.of(client.clientConfig("gateway"));

    byte[] answer;
    try (Scope ignored = Baggage.builder().put("tenant", "t1").build().makeCurrent()) {
      answer =
          toGateway
              .call("profile", "ada".getBytes(UTF_8), CallOptions.timeout(Duration.ofSeconds(10)))
              .join();
    }
    assertThat(new String(answer, UTF_8)).isEqualTo("stored ada");

    List<SpanData> spans = otel.awaitSpans(6);
    SpanData clientToGateway = span(spans, SpanKind.CLIENT, "gateway/profile");
    SpanData gatewayServer = span(spans, SpanKind.SERVER, "gateway/profile");
    SpanData gatewayToUsers = span(spans, SpanKind.CLIENT, "users/lookup");
    SpanData usersServer = span(spans, SpanKind.SERVER, "users/lookup");
    SpanData usersToStore = span(spans, SpanKind.CLIENT, "store/get");
    SpanData storeServer = span(spans, SpanKind.SERVER, "store/get");

    String traceId = clientToGateway.getTraceId();
    assertThat(spans).allSatisfy(s -> assertThat(s.getTraceId()).isEqualTo(traceId));
    assertThat(clientToGateway.getParentSpanContext().isValid())
        .as("the client's is the root")
        .isFalse();
    assertChild(gatewayServer, clientToGateway, true);
    assertChild(gatewayToUsers, gatewayServer, false);
    assertChild(usersServer, gatewayToUsers, true);
    assertChild(usersToStore, usersServer, false);
    assertChild(storeServer, usersToStore, true);
    assertThat(seenTraceIds)
        .as("the server span is current in each handler")
        .containsEntry("gateway", gatewayServer.getSpanId())
        .containsEntry("users", usersServer.getSpanId())
        .containsEntry("store", storeServer.getSpanId());

    // semantic-convention attributes, per transport
    assertRpc(clientToGateway, "yarpc", "gateway/profile", "http");
    assertRpc(gatewayServer, "yarpc", "gateway/profile", "http");
    assertRpc(gatewayToUsers, "grpc", "users/lookup", "grpc");
    assertRpc(usersServer, "grpc", "users/lookup", "grpc");
    assertRpc(usersToStore, "yarpc", "store/get", "tchannel");
    assertRpc(storeServer, "yarpc", "store/get", "tchannel");
    assertThat(gatewayServer.getAttributes().get(AttributeKey.stringKey("yarpc.caller")))
        .isEqualTo("client");
    assertThat(storeServer.getAttributes().get(AttributeKey.stringKey("yarpc.caller")))
        .isEqualTo("users");
    for (SpanData server : List.of(gatewayServer, usersServer, storeServer)) {
      assertThat(server.getAttributes().get(AttributeKey.stringKey("network.peer.address")))
          .isEqualTo("127.0.0.1");
      assertThat(server.getAttributes().get(AttributeKey.longKey("network.peer.port")))
          .isPositive();
    }

    // baggage crossed all three transports; trace headers never became application headers
    assertThat(storeBaggage).isEqualTo("t1");
    for (String hop : List.of("gateway", "users", "store")) {
      RequestMeta meta = seen.get(hop);
      assertThat(meta.headers().keys())
          .as(hop)
          .doesNotContain(
              "traceparent", "tracestate", "baggage", "uber-trace-id", "uberctx-tenant");
      assertThat(meta.propagationHeaders().keys())
          .as("%s: W3C and Jaeger by default", hop)
          .contains("traceparent", "baggage", "uber-trace-id", "uberctx-tenant");
      assertThat(meta.propagationHeaders().get("traceparent")).contains(traceId);
      assertThat(meta.propagationHeaders().get("uber-trace-id")).startsWith(traceId + ":");
    }
  }

  private void record(String hop) {
    seen.put(hop, io.yarpc.Call.current().meta());
    seenTraceIds.put(hop, Span.current().getSpanContext().getSpanId());
  }

  private static void assertChild(SpanData child, SpanData parent, boolean remote) {
    assertThat(child.getParentSpanId()).as("parent of %s", child).isEqualTo(parent.getSpanId());
    assertThat(child.getParentSpanContext().isRemote())
        .as("remote parent of %s", child)
        .isEqualTo(remote);
  }

  private static void assertRpc(SpanData s, String system, String method, String transport) {
    assertThat(s.getAttributes().get(AttributeKey.stringKey("rpc.system.name"))).isEqualTo(system);
    assertThat(s.getAttributes().get(AttributeKey.stringKey("rpc.method"))).isEqualTo(method);
    assertThat(s.getAttributes().get(AttributeKey.stringKey("rpc.status_code"))).isEqualTo("OK");
    assertThat(s.getAttributes().get(AttributeKey.stringKey("yarpc.transport")))
        .isEqualTo(transport);
    assertThat(s.getAttributes().get(AttributeKey.stringKey("yarpc.rpc_type"))).isEqualTo("unary");
    assertThat(s.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
    assertThat(s.hasEnded()).isTrue();
  }
}
