package io.yarpc.examples.readme;

import io.yarpc.peer.PeerChooser;
import io.yarpc.retry.RetryMiddleware;
import io.yarpc.retry.RetryBudget;
import io.yarpc.Outbounds;
import io.yarpc.CallOptions;
import io.yarpc.peer.FewestPendingPeerList;
import io.yarpc.peer.HashRingPeerList;
import io.yarpc.peer.OutlierDetection;
import io.yarpc.peer.RoundRobinPeerList;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.yarpc.observability.admin.AdminServer;
import io.yarpc.observability.logging.YarpcCallLogs;
import io.yarpc.observability.metrics.YarpcMetrics;
import io.yarpc.observability.tracing.YarpcTracing;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import io.opentelemetry.api.OpenTelemetry;
import io.yarpc.middleware.Middleware;
import io.yarpc.examples.keyvalue.KeyValueService;
import io.yarpc.encoding.protobuf.ProtobufProcedures;
import io.yarpc.config.YarpcConfig;
import io.yarpc.discovery.DnsPeerListUpdater;
import io.yarpc.discovery.FilePeerListUpdater;
import io.yarpc.peer.BoundPeerChooser;
import io.yarpc.peer.RoundRobinPeerList;
import io.yarpc.peer.UpdaterStatus;
import io.yarpc.Dispatcher;
import io.yarpc.ClientConfig;
import io.yarpc.testing.TransportConformanceSuite;
import io.yarpc.testing.TransportUnderTest;
import io.yarpc.tls.ClientAuth;
import io.yarpc.tls.TlsConfig;
import io.yarpc.tls.TlsMode;
import io.yarpc.transport.Body;
import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.InboundCalls;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.Router;
import io.yarpc.transport.RpcType;
import io.yarpc.transport.InboundLimits;
import io.yarpc.transport.KeepAlive;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcTransport;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpOutbound;
import io.yarpc.transport.http.HttpTransport;
import io.yarpc.transport.tchannel.TChannelInbound;
import io.yarpc.transport.tchannel.TChannelTransport;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The Java snippets of the README, compiled. Each README {@code java} block is the text between a
 * {@code // [START name]} and {@code // [END name]} pair here, indentation removed; {@link
 * ReadmeSnippetsTest} fails when the two differ. Edit the code here, then copy the region into the README
 * (the test's message shows the expected text).
 *
 * <p>These are fragments (of a transport's inbound, of a transport's test, of a server's set-up), compiled,
 * not run. The
 * README's other snippets are whole files, one class each in this package ({@code RawExample}, ...), whose
 * region starts after the {@code package} line; {@link ReadmeExamplesTest} runs them.
 */
@SuppressWarnings({"unused", "UnusedVariable"})
final class ReadmeSnippets {
  private ReadmeSnippets() {}

  /** What an inbound does per call, once it has decoded the metadata and the body. */
  abstract static class InboundSketch {
    abstract String transportName();

    void serve(Router router, RequestMeta meta, DeadlinePolicy deadlinePolicy, Body body) {
      // [START inbound-job]
      InboundCalls.Routed routed = InboundCalls.route(router, meta, "mywire", EnumSet.of(RpcType.UNARY),
          deadlinePolicy);                              // throws YarpcException: invalid-argument, unimplemented
      CompletableFuture<Response> result = InboundCalls.handle(routed.spec().unary(),
          Request.of(routed.meta(), body), body::release); // never null, never throws; releases only if the
                                                           // handler never took the body
      // [END inbound-job]
    }
  }

  /** The limits of every inbound, from the "Limits and hardening" section. */
  static void limits(
      HttpTransport httpTransport, GrpcTransport grpcTransport, TChannelTransport tchannelTransport) {
    // [START limits]
    InboundLimits limits = InboundLimits.builder()      // every option not set keeps the default below
        .maxConnections(2_000)
        .maxConcurrentCallsPerConnection(100)
        .readTimeout(Duration.ofSeconds(10))
        .build();
    HttpInbound http = httpTransport.inboundBuilder().address("0.0.0.0", 8080).limits(limits).build();
    GrpcInbound grpc = grpcTransport.inboundBuilder(new InetSocketAddress(8081)).limits(limits).build();
    TChannelInbound tchannel = tchannelTransport.inboundBuilder().port(8082).limits(limits).build();
    // [END limits]
  }

  /** Keepalive on every transport, and a gRPC server that permits it, from "Limits and hardening". */
  static void keepAlive() {
    // [START keepalive]
    KeepAlive keepAlive = KeepAlive.builder()        // off unless set; KeepAlive.every(time) for the rest's defaults
        .time(Duration.ofSeconds(30))                // nothing received for this long: ping (default 10 s)
        .timeout(Duration.ofSeconds(10))             // no answer by then: closed, its calls fail (default 20 s)
        .withoutCalls(true)                          // ping idle connections too (default: only with calls)
        .build();
    HttpTransport http = HttpTransport.builder().keepAlive(keepAlive).build();
    GrpcTransport grpc = GrpcTransport.builder().keepAlive(keepAlive).build();
    TChannelTransport tchannel =
        TChannelTransport.builder().serviceName("gateway").keepAlive(keepAlive).build();

    InboundLimits permitPings = InboundLimits.builder()   // gRPC servers police pings: let clients ping
        .permitKeepAliveTime(Duration.ofSeconds(30))      // no more often than this (default 5 min)
        .permitKeepAliveWithoutCalls(true)                // and without calls (default false)
        .build();
    // [END keepalive]
  }

  /** Outbounds over peer lists, from the "Peer lists" section. */
  static void peerLists(String userId) {
    // [START peer-lists]
    HttpTransport http = HttpTransport.create();
    FewestPendingPeerList users = FewestPendingPeerList.builder(http)
        .peers(List.of("10.0.0.1:8080", "10.0.0.2:8080", "10.0.0.3:8080"))
        .build();                                        // a slow server gets fewer calls
    HttpOutbound toUsers = http.outbound(users);         // the outbound starts and stops its list

    HashRingPeerList sessions = HashRingPeerList.builder(http)
        .peers(List.of("10.0.1.1:8080", "10.0.1.2:8080"))
        .build();                                        // one user's calls reach one server
    HttpOutbound toSessions = http.outbound(sessions);
    CallOptions options = CallOptions.builder().timeout(Duration.ofSeconds(1)).shardKey(userId).build();

    sessions.update(List.of("10.0.1.3:8080"), List.of());   // takes ~1/3 of the keys; no other key moves
    // [END peer-lists]
  }

  /** Outlier ejection, from the "Peer lists" section. */
  static void outlierEjection(HttpTransport http) {
    // [START outlier-ejection]
    RoundRobinPeerList replicas = RoundRobinPeerList.builder(http)
        .peers(List.of("10.0.2.1:8080", "10.0.2.2:8080", "10.0.2.3:8080"))
        .outlierDetection(OutlierDetection.defaults())       // 5 failures in a row: out for 30s, then 1m...
        .build();

    FewestPendingPeerList strict = FewestPendingPeerList.builder(http)
        .peers(List.of("10.0.3.1:8080", "10.0.3.2:8080", "10.0.3.3:8080", "10.0.3.4:8080"))
        .outlierDetection(OutlierDetection.builder()
            .consecutiveFailures(3)
            .failurePercent(50).minRequests(20)              // or half of 20 calls within an interval (10s)
            .maxEjectionPercent(50)                          // up to 2 of the 4 may be out at once
            .build())
        .build();
    // [END outlier-ejection]
  }

  static void tls() {
    // [START tls]
    TlsConfig serverTls = TlsConfig.builder()
        .keyCertChain(Path.of("certs/server.pem"), Path.of("certs/server.key"))
        .trustedCertificates(Path.of("certs/ca.pem"))   // verifies client certificates
        .clientAuth(ClientAuth.OPTIONAL)                 // ask for one; middleware decides (NONE, REQUIRE)
        .build();
    HttpInbound https = HttpTransport.create().inboundBuilder().address("0.0.0.0", 8443)
        .tls(serverTls).build();                         // ENFORCED: TLS only
    GrpcInbound grpc = GrpcTransport.create().inboundBuilder(new InetSocketAddress(8081))
        .tls(serverTls, TlsMode.PERMISSIVE).build();     // TLS and plaintext on one port
    TChannelInbound tchannel = TChannelTransport.of("keyvalue").inboundBuilder().port(8082)
        .tls(serverTls).build();

    TlsConfig clientTls = TlsConfig.builder()
        .trustedCertificates(Path.of("certs/ca.pem"))   // default: the JDK's trust store
        .keyCertChain(Path.of("certs/client.pem"), Path.of("certs/client.key"))   // for mutual TLS
        .build();
    HttpTransport http = HttpTransport.builder().tls(clientTls).build();   // for https:// peers
    HttpOutbound keyvalue = http.singleOutbound("https://keyvalue.internal:8443");
    GrpcTransport grpcClients = GrpcTransport.builder().tls(clientTls).build();   // every channel TLS
    TChannelTransport tchannelClients =
        TChannelTransport.builder().serviceName("gateway").tls(clientTls).build();
    // [END tls]
  }

  /** Retries of an outbound's unary calls, from the "Retries" section. */
  static void retries(HttpTransport http, PeerChooser peers, Middleware<Request, Response> metrics) {
    // [START retries]
    RetryMiddleware retries = RetryMiddleware.builder()
        .maxAttempts(3)                                      // the first attempt and two retries
        .idempotentProcedures("get", "list")                 // handlers that may safely run twice
        .perAttemptTimeout(Duration.ofMillis(200))           // never past the call's deadline
        .budget(RetryBudget.builder().percentCanRetry(0.1).minRetriesPerSecond(10).build())
        .build();
    Dispatcher dispatcher = Dispatcher.builder("frontend")
        .outbound("users", Outbounds.unary(http.outbound(peers)))
        .unaryOutboundMiddleware(metrics, retries)           // last: metrics see one call, not each attempt
        .build();
    // [END retries]
  }

  /** A dispatcher from a configuration file, from the "Configuration" section. */
  static void config(Middleware<Request, Response> logging) {
    // [START config]
    Dispatcher dispatcher = YarpcConfig.load("keyvalue", Path.of("yarpc.yaml"))
        .unaryInboundMiddleware(logging)                                  // code still adds middleware
        .build();
    dispatcher.register(ProtobufProcedures.of(new KeyValueService()));   // and procedures
    dispatcher.start();
    ClientConfig users = dispatcher.clientConfig("users");               // an outbound of the file
    // [END config]
  }

  /** Metrics and call logs from a file, from the "Configuration" section. */
  static Dispatcher configObservability(PrometheusMeterRegistry prometheusRegistry) {
    // [START config-observability]
    Dispatcher dispatcher = YarpcConfig.loader()
        .provide(MeterRegistry.class, prometheusRegistry)   // default: Micrometer's Metrics.globalRegistry
        .provide(Logger.class, LoggerFactory.getLogger("rpc"))   // default: the logger io.yarpc.calls
        .load("keyvalue", Path.of("yarpc.yaml"))
        .build();
    // [END config-observability]
    return dispatcher;
  }

  /** Peers from DNS and from a file, from the "Discovery" section. */
  static void discovery() {
    // [START discovery]
    HttpTransport http = HttpTransport.create();
    RoundRobinPeerList users = RoundRobinPeerList.builder(http).build();
    DnsPeerListUpdater dns = DnsPeerListUpdater.builder("_http._tcp.users.default.svc.cluster.local")
        .record(DnsPeerListUpdater.RecordType.SRV)     // each record: a target and its port
        .build(users);                                  // feeds this list
    HttpOutbound toUsers = http.outbound(BoundPeerChooser.of(users, dns));   // starts and stops both

    RoundRobinPeerList billing = RoundRobinPeerList.builder(http).build();
    FilePeerListUpdater file = FilePeerListUpdater.builder(Path.of("/etc/yarpc/billing.yaml"))
        .build(billing);                                // watched, and read every 5 s anyway
    HttpOutbound toBilling = http.outbound(BoundPeerChooser.of(billing, file));

    UpdaterStatus status = dns.status();   // peers(), lastRefresh(), lastError(), consecutiveFailures()
    // [END discovery]
  }

  static void observability(
      Inbound inbound, OpenTelemetry openTelemetry, PrometheusMeterRegistry prometheusRegistry) {
    // [START observability]
    Dispatcher.Builder builder = Dispatcher.builder("keyvalue").inbound(inbound);
    YarpcTracing.create(openTelemetry).install(builder);                 // first: tracing is outermost
    YarpcMetrics.builder(prometheusRegistry).build().install(builder);    // any Micrometer MeterRegistry
    YarpcCallLogs.builder().build().install(builder);                    // logger io.yarpc.calls
    Dispatcher dispatcher = builder.build();
    AdminServer admin = AdminServer.builder(dispatcher).port(9090).meterRegistry(prometheusRegistry)
        .build().start();
    // [END observability]
  }

  static void otelSdk(SpanExporter exporter, Dispatcher.Builder builder) {
    // [START otel-sdk]
    // deps: io.yarpc:yarpc-observability, io.opentelemetry:opentelemetry-sdk, an exporter
    OpenTelemetrySdk otel = OpenTelemetrySdk.builder()
        .setTracerProvider(SdkTracerProvider.builder()
            .setResource(Resource.getDefault().toBuilder().put("service.name", "gateway").build())
            .setSampler(Sampler.parentBased(Sampler.traceIdRatioBased(0.1)))
            .addSpanProcessor(BatchSpanProcessor.builder(exporter).build())   // e.g. OtlpGrpcSpanExporter
            .build())
        .build();                                   // or GlobalOpenTelemetry.get() with the Java agent
    YarpcTracing.create(otel).install(builder);
    // [END otel-sdk]
  }

  // [START conformance]
  class HttpConformanceTest extends TransportConformanceSuite {
    @Override
    protected TransportUnderTest newTransport() {
      HttpTransport serverTransport = HttpTransport.create();   // two transports, as two processes would have
      HttpTransport clientTransport = HttpTransport.create();
      HttpInbound inbound = serverTransport.inbound();
      return new TransportUnderTest() {
        @Override public List<Inbound> serverInbounds() { return List.of(inbound); }
        @Override public Outbounds clientOutbounds() {           // called once the server listens
          HttpOutbound out = clientTransport.singleOutbound(inbound.hostPort());
          return Outbounds.builder().unary(out).oneway(out).build();
        }
        @Override public boolean supportsStreaming() { return false; }
        @Override public void close() { clientTransport.stop(); serverTransport.stop(); }
      };
    }
  }
  // [END conformance]
}
