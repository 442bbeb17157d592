package io.yarpc.config;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.RoundRobinPeerList;
import io.yarpc.peer.SinglePeerChooser;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcOutbound;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpOutbound;
import io.yarpc.transport.tchannel.TChannelOutbound;
import java.io.IOException;
import java.io.StringReader;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The YAML examples of yarpc-go's configuration documentation (copies under {@code
 * src/test/resources/yarpc-go/}, each naming its source file and commit): those that use features
 * yarpc-java has load unchanged and build what they describe, and three pairs of them serve and call
 * over loopback sockets (their fixed ports replaced by free ones); the others fail with exactly the
 * problems listed here, each naming the yarpc-go key yarpc-java does not support.
 */
@Timeout(60)
class YarpcGoExamplesTest {

  private static final String NEEDS_OBSERVABILITY =
      "logging.levels: needs the module io.yarpc:yarpc-observability (its YarpcCallLogs reads this"
          + " section) on the class path: add it, or remove the key";

  static Stream<Arguments> examples() {
    return Stream.of(
        Arguments.of("doc-inbound-http.yaml", "", List.of()),
        Arguments.of("doc-inbound-two-http.yaml", "", List.of()),
        Arguments.of("doc-inbound-disabled.yaml", "", List.of()),
        Arguments.of("doc-outbound-unary-oneway.yaml", "outbounds", List.of()),
        Arguments.of("doc-outbound-implicit.yaml", "outbounds", List.of()),
        Arguments.of("doc-outbound-peer.yaml", "outbounds", List.of()),
        Arguments.of("doc-outbound-round-robin.yaml", "outbounds", List.of()),
        Arguments.of(
            "doc-outbound-with-preset.yaml",
            "outbounds",
            List.of(
                "outbounds.keyvalue.http.with: unknown peer chooser preset \"dev-proxy\" (none is"
                    + " registered: YarpcConfig.Loader.peerChooserPreset)")),
        Arguments.of(
            "doc-transports.yaml",
            "",
            List.of(
                "transports.http.keepAlive: not supported: yarpc-java's HTTP transport sets no TCP"
                    + " keep-alive period (remove the key; keepalive pings are the keepalive"
                    + " section)")),
        // read by yarpc-observability (its tests load these two and check the levels they set),
        // which is not on this module's class path
        Arguments.of("doc-logging.yaml", "", List.of(NEEDS_OBSERVABILITY)),
        Arguments.of("doc-logging-directional.yaml", "", List.of(NEEDS_OBSERVABILITY)),
        Arguments.of(
            "http-transport.yaml",
            "",
            List.of(
                "transports.http.keepAlive: not supported: yarpc-java's HTTP transport sets no TCP"
                    + " keep-alive period (remove the key; keepalive pings are the keepalive"
                    + " section)",
                "transports.http.maxIdleConns: not supported: yarpc-java limits idle connections per"
                    + " peer only: maxIdleConnsPerHost",
                "transports.http.disableKeepAlives: not supported: yarpc-java's HTTP outbounds always"
                    + " reuse connections",
                "transports.http.disableCompression: not supported: yarpc-java's HTTP outbounds never"
                    + " ask for compressed responses",
                "transports.http.responseHeaderTimeout: not supported: calls end at their deadline;"
                    + " yarpc-java has no separate response-header timeout")),
        Arguments.of(
            "http-inbound.yaml",
            "",
            List.of(
                "inbounds.http.grabHeaders: not supported: yarpc-java's HTTP inbound passes on only"
                    + " Rpc-Header-* headers (remove the key)",
                "inbounds.http.canonicalizeHeaderKeys: not supported: yarpc-java's headers are always"
                    + " case-insensitive, lower case",
                "inbounds.http.headerCaseMapping: not supported: yarpc-java's headers are always"
                    + " case-insensitive, lower case",
                "inbounds.http.readHeaderTimeout: not supported: use limits.handshakeTimeout (first"
                    + " request) and readTimeout (each request)")),
        Arguments.of("http-outbound.yaml", "", List.of()),
        Arguments.of("http-outbound-unary.yaml", "", List.of()),
        Arguments.of("http-outbound-peer-list.yaml", "", List.of()),
        Arguments.of("http-outbound-add-headers.yaml", "outbounds.myservice", List.of()),
        Arguments.of(
            "http-outbound-tls.yaml",
            "outbounds.myservice",
            List.of(
                "outbounds.myservice.http.tls.spiffe-ids: not supported: yarpc-java verifies a"
                    + " server's certificate against transports.http.tls.caFile and the host name"
                    + " (or serverName)")),
        Arguments.of(
            "grpc-transport.yaml",
            "",
            List.of(
                "transports.grpc.backoff: not supported: yarpc-java keeps grpc-java's reconnect"
                    + " backoff",
                "transports.grpc.clientMaxHeaderListSize: not supported: yarpc-java keeps"
                    + " grpc-java's limit on response headers",
                "transports.grpc.serverMaxHeaderListSize: not supported: set"
                    + " inbounds.<name>.limits.maxHeaderBytes on each gRPC inbound",
                "transports.grpc.clientConnectionPool: not supported: yarpc-java's gRPC outbounds"
                    + " use one connection per peer")),
        Arguments.of("grpc-inbound.yaml", "", List.of()),
        Arguments.of(
            "grpc-inbound-tls.yaml",
            "",
            List.of(
                "inbounds.grpc.tls.keyFile: cannot read file \"/path/to/key\"",
                "inbounds.grpc.tls.certFile: cannot read file \"/path/to/cert\"")),
        Arguments.of("grpc-outbound.yaml", "", List.of()),
        Arguments.of("grpc-outbound-round-robin.yaml", "", List.of()),
        Arguments.of(
            "grpc-outbound-tls-keepalive.yaml",
            "",
            List.of(
                "outbounds.theirsecureservice.grpc.tls: not supported: set TLS for gRPC outbounds"
                    + " on the transport, transports.grpc.tls (yarpc-java's gRPC transport has one"
                    + " client TLS setting for all its outbounds)",
                "outbounds.theirsecureservice.grpc.grpc-keepalive: not supported: set keepalive for"
                    + " gRPC outbounds on the transport: transports.grpc.keepalive takes this block"
                    + " as it is (yarpc-java's gRPC transport has one channel per peer for all its"
                    + " outbounds)")),
        Arguments.of(
            "tchannel-transport.yaml",
            "",
            List.of(
                "transports.tchannel.connBackoff: not supported: yarpc-java keeps its TChannel"
                    + " reconnect backoff",
                "transports.tchannel.propagateCancel: not supported: yarpc-java's TChannel outbounds"
                    + " always send a cancel for a cancelled call",
                "transports.tchannel.sendCancelOnContextCanceled: not supported: yarpc-java's"
                    + " TChannel outbounds always send a cancel for a cancelled call")),
        Arguments.of(
            "tchannel-inbound.yaml",
            "",
            List.of(
                "inbounds.tchannel.tls.certFile: missing required key (a TLS inbound needs certFile"
                    + " and keyFile)")),
        Arguments.of("tchannel-outbound.yaml", "", List.of()),
        Arguments.of(
            "tchannel-outbound-tls.yaml",
            "outbounds.myservice",
            List.of(
                "outbounds.myservice.tchannel.tls: not supported: set TLS for TChannel outbounds on"
                    + " the transport, transports.tchannel.tls (yarpc-java's TChannel transport has"
                    + " one client TLS setting for all its outbounds)")),
        Arguments.of(
            "roundrobin-spec.yaml",
            "",
            List.of("outbounds.otherservice.unary.http.url: not a URL: \"https://host:port/rpc\"")),
        Arguments.of(
            "roundrobin-options.yaml",
            "outbounds.myservice.grpc",
            List.of(
                "outbounds.myservice.grpc.round-robin.capacity: not supported: yarpc-java's"
                    + " round-robin list has no initial capacity (it grows as peers are added);"
                    + " remove the key")),
        // the other peer lists: their names are known (only the Go doc's placeholder URL fails)
        Arguments.of(
            "pendingheap-spec.yaml",
            "",
            List.of("outbounds.otherservice.unary.http.url: not a URL: \"https://host:port/rpc\"")),
        Arguments.of(
            "pendingheap-options.yaml",
            "outbounds.myservice.grpc",
            List.of(
                "outbounds.myservice.grpc.fewest-pending-requests.capacity: not supported:"
                    + " yarpc-java's fewest-pending-requests list has no initial capacity (it grows"
                    + " as peers are added); remove the key")),
        Arguments.of(
            "randpeer-spec.yaml",
            "",
            List.of("outbounds.otherservice.unary.http.url: not a URL: \"https://host:port/rpc\"")),
        Arguments.of(
            "tworandomchoices-spec.yaml",
            "",
            List.of(
                "outbounds.otherservice.unary.http.url: not a URL: \"https://host:port/rpc\"")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("examples")
  void loadsOrNamesWhatYarpcJavaLacks(String fixture, String under, List<String> problems) {
    assertThat(Fixtures.problems(YarpcConfig.loader(), Fixtures.yarpcGo(fixture, under)))
        .containsExactlyElementsOf(problems);
  }

  /** Builds (never starts) the dispatcher of a fixture, runs {@code check}, stops it. */
  private static void inspect(
      YarpcConfig.Loader loader,
      String serviceName,
      String fixture,
      String under,
      java.util.function.Consumer<Dispatcher> check) {
    Dispatcher d = loader.load(serviceName, Fixtures.yarpcGo(fixture, under)).build();
    try {
      check.accept(d);
    } finally {
      d.stop();
    }
  }

  @Test
  void inboundsBuildWhatTheyDescribe() {
    inspect(
        YarpcConfig.loader(),
        "keyvalue",
        "doc-inbound-http.yaml",
        "",
        d -> {
          assertThat(d.inbounds()).hasSize(1);
          assertThat(d.inbounds().get(0)).isInstanceOf(HttpInbound.class);
          assertThat(d.inbounds().get(0)).hasToString("HttpInbound{0.0.0.0:8080}");
        });
    inspect(
        YarpcConfig.loader(),
        "keyvalue",
        "doc-inbound-two-http.yaml",
        "",
        d ->
            assertThat(d.inbounds())
                .extracting(Object::toString)
                .containsExactly("HttpInbound{0.0.0.0:8081}", "HttpInbound{0.0.0.0:8080}"));
    inspect(
        YarpcConfig.loader(),
        "keyvalue",
        "doc-inbound-disabled.yaml",
        "",
        d ->
            assertThat(d.inbounds())
                .extracting(Object::toString)
                .containsExactly("HttpInbound{0.0.0.0:8080}"));
    inspect(
        YarpcConfig.loader(),
        "keyvalue",
        "grpc-inbound.yaml",
        "",
        d -> assertThat(d.inbounds()).singleElement().isInstanceOf(GrpcInbound.class));
  }

  @Test
  void outboundsBuildWhatTheyDescribe() {
    inspect(
        YarpcConfig.loader(),
        "frontend",
        "doc-outbound-unary-oneway.yaml",
        "outbounds",
        d -> {
          Outbounds o = d.outbounds().get("keyvalue");
          assertThat(o.unary()).isInstanceOf(TChannelOutbound.class);
          assertThat(o.unary()).hasToString("TChannelOutbound{SinglePeerChooser{127.0.0.1:4040}}");
          assertThat(o.oneway()).isInstanceOf(HttpOutbound.class);
          assertThat(o.stream()).isNull();
          assertThat(o.serviceName()).isEmpty();
        });
    inspect(
        YarpcConfig.loader(),
        "frontend",
        "doc-outbound-implicit.yaml",
        "outbounds",
        d -> {
          Outbounds o = d.outbounds().get("keyvalue");
          assertThat(o.unary()).isInstanceOf(HttpOutbound.class).isSameAs(o.oneway());
          assertThat(o.stream()).isNull();
        });
    inspect(
        YarpcConfig.loader(),
        "frontend",
        "doc-outbound-round-robin.yaml",
        "outbounds",
        d -> {
          PeerChooser chooser = ((HttpOutbound) d.outbounds().get("keyvalue").unary()).chooser();
          assertThat(((RoundRobinPeerList) chooser).peerIdentifiers())
              .containsExactly(
                  "https://127.0.0.1:8080", "https://127.0.0.1:8081", "https://127.0.0.1:8082");
        });
    inspect(
        YarpcConfig.loader(),
        "frontend",
        "grpc-outbound.yaml",
        "",
        d -> {
          Outbounds o = d.outbounds().get("myservice");
          assertThat(o.unary()).isInstanceOf(GrpcOutbound.class).isSameAs(o.stream());
          assertThat(o.oneway()).isNull();
          assertThat(((GrpcOutbound) o.unary()).chooser())
              .isInstanceOf(SinglePeerChooser.class)
              .extracting(c -> ((SinglePeerChooser) c).identifier())
              .isEqualTo("127.0.0.1:80");
        });
    inspect(
        YarpcConfig.loader(),
        "frontend",
        "grpc-outbound-round-robin.yaml",
        "",
        d ->
            assertThat(
                    ((RoundRobinPeerList)
                            ((GrpcOutbound) d.outbounds().get("myservice").unary()).chooser())
                        .peerIdentifiers())
                .containsExactly("127.0.0.1:8080", "127.0.0.1:8081"));
  }

  @Test
  void presetNamedWithWith() {
    List<String> asked = new java.util.ArrayList<>();
    YarpcConfig.Loader loader =
        YarpcConfig.loader()
            .peerChooserPreset(
                "dev-proxy",
                (transport, name) -> {
                  asked.add(name);
                  return SinglePeerChooser.of(transport, "https://127.0.0.1:9999");
                });
    inspect(
        loader,
        "frontend",
        "doc-outbound-with-preset.yaml",
        "outbounds",
        d ->
            assertThat(((HttpOutbound) d.outbounds().get("keyvalue").unary()).chooser())
                .hasToString("SinglePeerChooser{https://127.0.0.1:9999}"));
    assertThat(asked).containsExactly("http");
  }

  // -----------------------------------------------------------------------------------------------
  // Serving and calling: pairs of fixtures with their fixed ports replaced by free ones

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  /** A fixture's text with each {@code ports} key replaced by its value, parsed. */
  private static Map<String, Object> withPorts(String fixture, Map<String, ?> ports)
      throws IOException {
    String text = Files.readString(Fixtures.path("yarpc-go/" + fixture), UTF_8);
    for (Map.Entry<String, ?> e : ports.entrySet()) {
      text = text.replace(e.getKey(), String.valueOf(e.getValue()));
    }
    return YarpcConfig.parse(new StringReader(text));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> merge(Map<String, Object> a, Map<String, Object> b) {
    Map<String, Object> out = new LinkedHashMap<>(a);
    b.forEach(
        (k, v) ->
            out.merge(k, v, (x, y) -> merge((Map<String, Object>) x, (Map<String, Object>) y)));
    return out;
  }

  /** Starts {@code document} as {@code service} with echo procedures, calls itself over {@code outbound}. */
  private static void serveAndCall(
      String service, Map<String, Object> document, String outbound, boolean oneway)
      throws Exception {
    Dispatcher d = YarpcConfig.load(service, document).build();
    CountDownLatch onewayArrived = new CountDownLatch(1);
    d.register(
        Raw.procedure("echo", body -> body),
        Raw.onewayProcedure("notify", body -> onewayArrived.countDown()));
    d.start();
    try {
      RawClient client = RawClient.of(d.clientConfig(outbound));
      byte[] reply =
          client
              .call("echo", "hello".getBytes(UTF_8), CallOptions.timeout(Duration.ofSeconds(10)))
              .get(20, TimeUnit.SECONDS);
      assertThat(new String(reply, UTF_8)).isEqualTo("hello");
      if (oneway) {
        client
            .callOneway("notify", new byte[] {1}, CallOptions.timeout(Duration.ofSeconds(10)))
            .get(20, TimeUnit.SECONDS);
        assertThat(onewayArrived.await(10, TimeUnit.SECONDS)).isTrue();
      }
    } finally {
      d.stop();
    }
  }

  @Test
  void httpInboundAndOutboundServeAndCall() throws Exception {
    int port = freePort();
    Map<String, Object> doc =
        merge(
            withPorts("doc-inbound-http.yaml", Map.of("8080", port)),
            Map.of("outbounds", withPorts("doc-outbound-implicit.yaml", Map.of("8080", port))));
    serveAndCall("keyvalue", doc, "keyvalue", true);
  }

  @Test
  void grpcInboundAndRoundRobinOutboundServeAndCall() throws Exception {
    int port = freePort();
    int nobody = freePort(); // the list's second peer: nothing listens there
    Map<String, Object> doc =
        merge(
            withPorts("grpc-inbound.yaml", Map.of(":80", ":" + port)),
            withPorts("grpc-outbound-round-robin.yaml", Map.of("8080", port, "8081", nobody)));
    serveAndCall("myservice", doc, "myservice", false);
  }

  @Test
  void tchannelOutboundServesAndCalls() throws Exception {
    int port = freePort();
    // yarpc-go documents no TChannel inbound without TLS material; this one is written here.
    Map<String, Object> inbound =
        YarpcConfig.parse(new StringReader("inbounds:\n  tchannel:\n    address: :" + port + "\n"));
    Map<String, Object> doc =
        merge(inbound, withPorts("tchannel-outbound.yaml", Map.of("4040", port)));
    serveAndCall("myservice", doc, "myservice", false);
  }
}
