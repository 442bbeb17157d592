package io.yarpc.observability.admin;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.micrometer.core.instrument.Counter;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.peer.OutlierDetection;
import io.yarpc.peer.RoundRobinPeerList;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcTransport;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpTransport;
import io.yarpc.transport.tchannel.TChannelInbound;
import io.yarpc.transport.tchannel.TChannelTransport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The admin server's endpoints against real dispatchers on loopback: a server serving over HTTP, gRPC
 * and TChannel, and a client calling it over all three (plus peers that cannot be reached).
 */
@Timeout(120)
class AdminServerTest {
  private static final String SERVICE = "admin-test";
  private static final CallOptions TIMEOUT = CallOptions.timeout(Duration.ofSeconds(20));

  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();
  private final List<AutoCloseable> cleanup = new ArrayList<>();
  private final CountDownLatch release = new CountDownLatch(1);
  private final CountDownLatch entered = new CountDownLatch(3);

  private HttpTransport httpTransport;
  private GrpcTransport grpcTransport;
  private TChannelTransport tchannelTransport;
  private HttpInbound httpInbound;
  private GrpcInbound grpcInbound;
  private TChannelInbound tchannelInbound;
  private Dispatcher server;
  private PrometheusMeterRegistry registry;
  private AdminServer serverAdmin;

  @BeforeEach
  void startServer() {
    httpTransport = HttpTransport.create();
    grpcTransport = GrpcTransport.create();
    tchannelTransport = TChannelTransport.of(SERVICE);
    httpInbound = httpTransport.inbound();
    grpcInbound = grpcTransport.inbound(new InetSocketAddress("127.0.0.1", 0));
    tchannelInbound = tchannelTransport.inbound();
    server =
        Dispatcher.builder(SERVICE)
            .inbound(httpInbound, grpcInbound, tchannelInbound)
            .shutdownGracePeriod(Duration.ofSeconds(5))
            .logLifecycle(false)
            .build();
    server.register(Raw.procedure("echo", body -> body));
    server.register(
        Raw.procedure(
            "slow",
            body -> {
              entered.countDown();
              release.await(30, TimeUnit.SECONDS);
              return body;
            }));
    registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    serverAdmin = AdminServer.builder(server).meterRegistry(registry).build().start();
    cleanup.add(serverAdmin);
  }

  @AfterEach
  void stopEverything() throws Exception {
    release.countDown();
    for (int i = cleanup.size() - 1; i >= 0; i--) {
      cleanup.get(i).close();
    }
    server.stop();
    httpTransport.stop();
    grpcTransport.stop();
    tchannelTransport.stop();
  }

  @Test
  void healthFollowsTheDispatcherLifecycleIncludingTheDrain() throws Exception {
    assertThat(get(serverAdmin, "/health").statusCode()).isEqualTo(503);
    assertThat(get(serverAdmin, "/health").body()).isEqualTo("NOT_SERVING\n");
    server.start();
    HttpResponse<String> serving = get(serverAdmin, "/health");
    assertThat(serving.statusCode()).isEqualTo(200);
    assertThat(serving.body()).isEqualTo("SERVING\n");
    assertThat(serving.headers().firstValue("content-type")).hasValue("text/plain; charset=utf-8");

    // a call in flight keeps the stop draining: health says NOT_SERVING during the drain
    Dispatcher client = client(List.of());
    CompletableFuture<byte[]> slow =
        RawClient.of(client.clientConfig("via-http")).call("slow", new byte[] {1}, TIMEOUT);
    eventually(() -> server.introspect().callsInFlight() == 1);
    Thread stopper = new Thread(server::stop, "stopper");
    stopper.start();
    eventually(() -> server.introspect().state() == io.yarpc.DispatcherStatus.State.STOPPING);
    assertThat(get(serverAdmin, "/health").statusCode()).isEqualTo(503);
    assertThat(fetchJson(serverAdmin).get("state").getAsString()).isEqualTo("STOPPING");
    release.countDown();
    assertThat(slow.get(20, TimeUnit.SECONDS)).containsExactly(1);
    stopper.join(20_000);
    assertThat(get(serverAdmin, "/health").body()).isEqualTo("NOT_SERVING\n");
    assertThat(fetchJson(serverAdmin).get("state").getAsString()).isEqualTo("STOPPED");
  }

  @Test
  void showsProceduresInboundsAndCallsInFlightOverAllThreeTransports() throws Exception {
    server.start();
    Dispatcher client = client(List.of());
    AdminServer clientAdmin = AdminServer.builder(client).build().start();
    cleanup.add(clientAdmin);

    JsonObject idle = fetchJson(serverAdmin);
    assertThat(idle.get("name").getAsString()).isEqualTo(SERVICE);
    assertThat(idle.get("state").getAsString()).isEqualTo("RUNNING");
    assertThat(procedure(idle, "echo").get("rpcType").getAsString()).isEqualTo("UNARY");
    assertThat(procedure(idle, "echo").get("encoding").getAsString()).isEmpty();
    assertThat(procedure(idle, "slow").get("callsInFlight").getAsInt()).isZero();
    JsonArray inbounds = idle.getAsJsonArray("inbounds");
    assertThat(inbounds).hasSize(3);
    assertThat(inbound(inbounds, 0, "http")).isEqualTo(httpInbound.hostPort());
    assertThat(inbound(inbounds, 1, "grpc"))
        .isEqualTo("127.0.0.1:" + grpcInbound.address().getPort());
    assertThat(inbound(inbounds, 2, "tchannel")).isEqualTo(tchannelInbound.hostPort());

    // one slow call over each transport: the server counts 3 in flight, the client 1 pending per
    // peer
    List<CompletableFuture<byte[]>> calls = new ArrayList<>();
    for (String key : List.of("via-http", "via-grpc", "via-tchannel")) {
      calls.add(RawClient.of(client.clientConfig(key)).call("slow", new byte[] {7}, TIMEOUT));
    }
    assertThat(entered.await(20, TimeUnit.SECONDS)).as("slow handler entered 3 times").isTrue();
    JsonObject busy = fetchJson(serverAdmin);
    assertThat(busy.get("callsInFlight").getAsInt()).isEqualTo(3);
    assertThat(procedure(busy, "slow").get("callsInFlight").getAsInt()).isEqualTo(3);
    assertThat(procedure(busy, "echo").get("callsInFlight").getAsInt()).isZero();
    String page = get(serverAdmin, "/debug/yarpc").body();
    assertThat(page)
        .contains("<td class=\"mono\">slow</td>")
        .contains("<td class=\"num busy\">3</td>")
        .contains("<b id=\"calls-in-flight\">3</b>");

    JsonObject clientBusy = fetchJson(clientAdmin);
    for (String key : List.of("via-http", "via-grpc", "via-tchannel")) {
      JsonObject peer = peers(outbound(clientBusy, key)).get(0).getAsJsonObject();
      assertThat(peer.get("status").getAsString()).as(key).isEqualTo("AVAILABLE");
      assertThat(peer.get("pendingRequests").getAsInt()).as(key).isEqualTo(1);
      assertThat(peer.get("unavailableReason").isJsonNull()).as(key).isTrue();
    }

    release.countDown();
    for (CompletableFuture<byte[]> call : calls) {
      assertThat(call.get(20, TimeUnit.SECONDS)).containsExactly(7);
    }
    eventually(() -> server.introspect().callsInFlight() == 0);
    JsonObject done = fetchJson(serverAdmin);
    assertThat(procedure(done, "slow").get("callsInFlight").getAsInt()).isZero();
    eventually(
        () ->
            client.introspect().outbounds().stream()
                .allMatch(
                    o -> o.chooser().peers().stream().allMatch(p -> p.pendingRequests() == 0)));
  }

  @Test
  void showsEveryOutboundsPeersAndWhyAnUnreachableOneIsUnavailable() throws Exception {
    server.start();
    String dead = deadAddress();
    Dispatcher client = client(List.of(dead));
    AdminServer clientAdmin = AdminServer.builder(client).build().start();
    cleanup.add(clientAdmin);
    assertThat(
            RawClient.of(client.clientConfig("via-tchannel"))
                .call("echo", new byte[] {5}, TIMEOUT)
                .get(20, TimeUnit.SECONDS))
        .containsExactly(5);

    // every transport probes or dials a retained peer: the dead ones turn unavailable with a reason
    eventually(
        () ->
            client.introspect().outbounds().stream()
                .flatMap(o -> o.chooser().peers().stream())
                .filter(p -> p.identifier().equals(dead))
                .allMatch(p -> p.unavailableReason() != null));
    JsonObject status = fetchJson(clientAdmin);
    JsonObject viaHttp = outbound(status, "via-http");
    assertThat(viaHttp.get("service").getAsString()).isEqualTo(SERVICE);
    assertThat(viaHttp.get("transportName").getAsString()).isEqualTo("http");
    assertThat(viaHttp.getAsJsonArray("rpcTypes").toString()).isEqualTo("[\"UNARY\",\"ONEWAY\"]");
    assertThat(viaHttp.getAsJsonObject("chooser").get("kind").getAsString()).isEqualTo("single");
    assertThat(outbound(status, "via-grpc").get("transportName").getAsString()).isEqualTo("grpc");

    JsonObject viaTchannel = outbound(status, "via-tchannel");
    assertThat(viaTchannel.getAsJsonObject("chooser").get("kind").getAsString())
        .isEqualTo("round-robin");
    JsonArray ring = peers(viaTchannel);
    assertThat(ring).hasSize(2);
    assertThat(ring.get(0).getAsJsonObject().get("identifier").getAsString())
        .isEqualTo(tchannelInbound.hostPort());
    assertThat(ring.get(0).getAsJsonObject().get("status").getAsString()).isEqualTo("AVAILABLE");
    JsonObject deadTchannel = ring.get(1).getAsJsonObject();
    assertThat(deadTchannel.get("identifier").getAsString()).isEqualTo(dead);
    assertThat(deadTchannel.get("status").getAsString()).isNotEqualTo("AVAILABLE");
    assertThat(deadTchannel.get("unavailableReason").getAsString()).containsIgnoringCase("refused");

    for (String key : List.of("dead-http", "dead-grpc")) {
      JsonObject peer = peers(outbound(status, key)).get(0).getAsJsonObject();
      assertThat(peer.get("identifier").getAsString()).as(key).isEqualTo(dead);
      assertThat(peer.get("status").getAsString()).as(key).isNotEqualTo("AVAILABLE");
      assertThat(peer.get("unavailableReason").getAsString())
          .as(key)
          .containsIgnoringCase("refused");
    }

    String page = get(clientAdmin, "/debug/yarpc").body();
    assertThat(page)
        .contains("<table id=\"peers\">")
        .contains("<td class=\"mono\">" + dead + "</td>")
        .contains("<td class=\"mono\">" + tchannelInbound.hostPort() + "</td>")
        .contains("<tr class=\"peer available\">")
        .containsPattern("<tr class=\"peer (unavailable|connecting)\">")
        .containsIgnoringCase("refused")
        .contains("round-robin");
  }

  @Test
  void showsAnEjectedPeerAndWhyItIsOut() throws Exception {
    server.start();
    HttpInbound brokenInbound = HttpTransport.create().inbound();
    Dispatcher broken =
        Dispatcher.builder(SERVICE).inbound(brokenInbound).logLifecycle(false).build();
    broken.register(
        Raw.procedure(
            "echo",
            body -> {
              throw YarpcException.of(Code.INTERNAL, "broken replica");
            }));
    broken.start();
    cleanup.add(broken::stop);

    HttpTransport ht = HttpTransport.create();
    RoundRobinPeerList replicas =
        RoundRobinPeerList.builder(ht)
            .peers(List.of(httpInbound.hostPort(), brokenInbound.hostPort()))
            .outlierDetection(
                OutlierDetection.builder()
                    .consecutiveFailures(2)
                    .baseEjectionTime(Duration.ofMinutes(5))
                    .build())
            .build();
    Dispatcher client =
        Dispatcher.builder("admin-client")
            .logLifecycle(false)
            .outbound(
                "replicas",
                Outbounds.builder().serviceName(SERVICE).unary(ht.outbound(replicas)).build())
            .build();
    client.start();
    cleanup.add(
        () -> {
          client.stop();
          ht.stop();
        });
    AdminServer clientAdmin = AdminServer.builder(client).build().start();
    cleanup.add(clientAdmin);
    eventually(() -> replicas.availablePeers().size() == 2);
    RawClient raw = RawClient.of(client.clientConfig("replicas"));
    for (int i = 0; i < 20 && replicas.availablePeers().size() == 2; i++) {
      raw.call("echo", new byte[] {1}, TIMEOUT).handle((r, e) -> null).get(20, TimeUnit.SECONDS);
    }
    assertThat(replicas.availablePeers()).containsExactly(httpInbound.hostPort());

    String reason =
        "ejected for 5m0s after 2 consecutive failures (last: internal: broken replica);"
            + " on probation in ";
    JsonArray peers = peers(outbound(fetchJson(clientAdmin), "replicas"));
    JsonObject healthy = peers.get(0).getAsJsonObject();
    assertThat(healthy.get("status").getAsString()).isEqualTo("AVAILABLE");
    JsonObject ejected = peers.get(1).getAsJsonObject();
    assertThat(ejected.get("identifier").getAsString()).isEqualTo(brokenInbound.hostPort());
    assertThat(ejected.get("status").getAsString()).isEqualTo("UNAVAILABLE");
    assertThat(ejected.get("unavailableReason").getAsString()).startsWith(reason);

    String page = get(clientAdmin, "/debug/yarpc").body();
    assertThat(page)
        .contains("<td class=\"mono\">" + brokenInbound.hostPort() + "</td>")
        .contains("<tr class=\"peer unavailable\">")
        .contains(reason);
  }

  @Test
  void metricsAreThePrometheusTextOfTheGivenRegistry() throws Exception {
    Counter.builder("admin_test_calls").tag("procedure", "echo").register(registry).increment(3);
    HttpResponse<String> text = get(serverAdmin, "/metrics");
    assertThat(text.statusCode()).isEqualTo(200);
    assertThat(text.headers().firstValue("content-type"))
        .hasValue("text/plain; version=0.0.4; charset=utf-8");
    assertThat(text.body()).contains("admin_test_calls_total{procedure=\"echo\"} 3.0");

    // what Prometheus sends: OpenMetrics preferred
    HttpResponse<String> openMetrics =
        http.send(
            HttpRequest.newBuilder(URI.create(serverAdmin.url("/metrics")))
                .header(
                    "Accept",
                    "application/openmetrics-text;version=1.0.0;q=0.75,"
                        + "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(openMetrics.statusCode()).isEqualTo(200);
    assertThat(openMetrics.headers().firstValue("content-type"))
        .hasValue("application/openmetrics-text; version=1.0.0; charset=utf-8");
    assertThat(openMetrics.body()).contains("admin_test_calls_total").endsWith("# EOF\n");
  }

  // ---------------------------------------------------------------------------------------------------

  /**
   * A client dispatcher with outbounds to the server over each transport (the TChannel one a round-robin
   * list of the server and {@code deadPeers}) and, when {@code deadPeers} is not empty, an HTTP and a
   * gRPC outbound to the first of them.
   */
  private Dispatcher client(List<String> deadPeers) {
    HttpTransport ht = HttpTransport.create();
    GrpcTransport gt = GrpcTransport.create();
    TChannelTransport tt = TChannelTransport.of("admin-client");
    io.yarpc.transport.http.HttpOutbound toServer = ht.singleOutbound(httpInbound.hostPort());
    List<String> ring = new ArrayList<>();
    ring.add(tchannelInbound.hostPort());
    ring.addAll(deadPeers);
    Dispatcher.Builder b =
        Dispatcher.builder("admin-client")
            .logLifecycle(false)
            .outbound(
                "via-http",
                Outbounds.builder()
                    .serviceName(SERVICE)
                    .unary(toServer)
                    .oneway(toServer) // one object serving two types: one status entry
                    .build())
            .outbound(
                "via-grpc",
                Outbounds.builder()
                    .serviceName(SERVICE)
                    .unary(gt.singleOutbound("127.0.0.1:" + grpcInbound.address().getPort()))
                    .build())
            .outbound(
                "via-tchannel",
                Outbounds.builder()
                    .serviceName(SERVICE)
                    .unary(tt.outbound(RoundRobinPeerList.builder(tt).peers(ring).build()))
                    .build());
    if (!deadPeers.isEmpty()) {
      b.outbound("dead-http", Outbounds.unary(ht.singleOutbound(deadPeers.get(0))));
      b.outbound("dead-grpc", Outbounds.unary(gt.singleOutbound(deadPeers.get(0))));
    }
    Dispatcher d = b.build();
    d.start();
    cleanup.add(
        () -> {
          d.stop();
          ht.stop();
          gt.stop();
          tt.stop();
        });
    return d;
  }

  private HttpResponse<String> get(AdminServer admin, String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(admin.url(path))).timeout(Duration.ofSeconds(20)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private JsonObject fetchJson(AdminServer admin) throws Exception {
    HttpResponse<String> r = get(admin, "/debug/yarpc.json");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("content-type")).hasValue("application/json; charset=utf-8");
    return JsonParser.parseString(r.body()).getAsJsonObject();
  }

  private static JsonObject procedure(JsonObject status, String name) {
    for (JsonElement e : status.getAsJsonArray("procedures")) {
      if (e.getAsJsonObject().get("name").getAsString().equals(name)) {
        return e.getAsJsonObject();
      }
    }
    throw new AssertionError("no procedure " + name + " in " + status);
  }

  private static JsonObject outbound(JsonObject status, String key) {
    for (JsonElement e : status.getAsJsonArray("outbounds")) {
      if (e.getAsJsonObject().get("key").getAsString().equals(key)) {
        return e.getAsJsonObject();
      }
    }
    throw new AssertionError("no outbound " + key + " in " + status);
  }

  private static JsonArray peers(JsonObject outbound) {
    return outbound.getAsJsonObject("chooser").getAsJsonArray("peers");
  }

  private static String inbound(JsonArray inbounds, int index, String transport) {
    JsonObject in = inbounds.get(index).getAsJsonObject();
    assertThat(in.get("transportName").getAsString()).isEqualTo(transport);
    assertThat(in.get("running").getAsBoolean()).isTrue();
    return in.get("address").getAsString();
  }

  /** A loopback address nothing listens on (a port bound and released). */
  private static String deadAddress() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return "127.0.0.1:" + s.getLocalPort();
    }
  }

  private static void eventually(java.util.function.BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("condition not met within 20 s");
      }
      Thread.sleep(20);
    }
  }
}
