package io.yarpc.config;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.peer.BoundPeerChooser;
import io.yarpc.peer.ChooserStatus;
import io.yarpc.peer.RoundRobinPeerList;
import io.yarpc.testing.InMemoryOutbound;
import io.yarpc.testing.InMemoryTransport;
import io.yarpc.transport.http.HttpOutbound;
import java.io.IOException;
import java.io.StringReader;
import java.net.ServerSocket;
import java.net.URL;
import java.net.URLClassLoader;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A transport and a peer list that the configuration module knows nothing about register their specs
 * through {@link java.util.ServiceLoader} ({@code META-INF/services} files in a directory of test
 * resources, put on the class path by a class loader given to the loader), and a YAML document
 * configures them.
 */
@Timeout(60)
class PluginTest {
  private static URLClassLoader plugins;

  @BeforeAll
  static void pluginClassPath() {
    URL dir = PluginTest.class.getResource("/plugin/");
    plugins = new URLClassLoader(new URL[] {dir}, PluginTest.class.getClassLoader());
  }

  @AfterAll
  static void close() throws IOException {
    plugins.close();
  }

  private static YarpcConfig.Loader loader() {
    return YarpcConfig.loader().classLoader(plugins);
  }

  @Test
  void aPluggedInTransportIsConfiguredFromYaml() throws Exception {
    String yaml =
        String.join(
            "\n",
            "inbounds:",
            "  in-memory: {}",
            "outbounds:",
            "  echo-service:",
            "    service: echoes",
            "    in-memory: {}",
            "transports:",
            "  in-memory:",
            "    streamWindow: 4",
            "");
    Dispatcher d = loader().load("echoes", new StringReader(yaml)).build();
    assertThat(d.outbounds().get("echo-service").unary()).isInstanceOf(InMemoryOutbound.class);
    assertThat(d.outbounds().get("echo-service").stream())
        .isSameAs(d.outbounds().get("echo-service").oneway());
    d.register(Raw.procedure("echo", body -> body));
    d.start();
    try {
      byte[] reply =
          RawClient.of(d.clientConfig("echo-service"))
              .call("echo", "plugged".getBytes(UTF_8), CallOptions.timeout(Duration.ofSeconds(5)))
              .get(10, TimeUnit.SECONDS);
      assertThat(new String(reply, UTF_8)).isEqualTo("plugged");
    } finally {
      d.stop();
    }
  }

  @Test
  void aPluggedInSectionSpecReadsItsSection() {
    TaggingSectionSpec.Seen seen = new TaggingSectionSpec.Seen();
    Dispatcher d =
        loader()
            .provide(TaggingSectionSpec.Seen.class, seen)
            .load("echoes", new StringReader("tagging: {label: plugged}\n"))
            .build();
    d.stop();
    assertThat(seen.applied).hasValue(1);
    assertThat(
            Fixtures.problems(
                loader().provide(TaggingSectionSpec.Seen.class, seen),
                YarpcConfig.parse(new StringReader("tagging: {label: x, colour: red}\n"))))
        .containsExactly("tagging.colour: unknown key (known keys here: label, procedures)");
  }

  @Test
  void aPluggedInTransportsSectionIsCheckedLikeAnyOther() {
    String yaml =
        String.join(
            "\n",
            "outbounds:",
            "  echoes:",
            "    in-memory: {colour: red}",
            "transports:",
            "  in-memory:",
            "    streamWindow: many",
            "");
    assertThat(Fixtures.problems(loader(), YarpcConfig.parse(new StringReader(yaml))))
        .containsExactly(
            "outbounds.echoes.in-memory.colour: unknown key",
            "transports.in-memory.streamWindow: not an integer: \"many\"");
  }

  @Test
  void withoutThePluginTheTransportIsUnknown() {
    assertThat(
            Fixtures.problems(
                YarpcConfig.loader(),
                YarpcConfig.parse(new StringReader("inbounds:\n  in-memory: {}\n"))))
        .containsExactly(
            "inbounds.in-memory: unknown transport \"in-memory\" (known: grpc, http, tchannel)");
  }

  @Test
  void aSpecRegisteredByHandWorksWithoutServiceLoader() {
    Dispatcher d =
        YarpcConfig.loader()
            .transportSpec(new InMemoryTransportSpec())
            .load("echoes", Map.of("inbounds", Map.of("in-memory", Map.of())))
            .build();
    assertThat(d.inbounds()).hasSize(1);
    d.stop();
  }

  @Test
  void aTransportMayNotTakeTheNameOfAKey() {
    io.yarpc.config.spi.TransportSpec unary =
        new io.yarpc.config.spi.TransportSpec() {
          @Override
          public String name() {
            return "unary";
          }

          @Override
          public io.yarpc.transport.Transport buildTransport(
              io.yarpc.config.spi.ConfigSection config, io.yarpc.config.spi.ConfigContext context) {
            return InMemoryTransport.create();
          }
        };
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> YarpcConfig.loader().transportSpec(unary).load("echoes", Map.of()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("a TransportSpec may not be named \"unary\"");
  }

  @Test
  void aPluggedInPeerListFeedsAnHttpOutbound() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    String yaml =
        String.join(
            "\n",
            "inbounds:",
            "  http: {address: \"127.0.0.1:" + port + "\"}",
            "outbounds:",
            "  echoes:",
            "    http:",
            "      url: http://ignored/yarpc",
            "      recording:",
            "        label: first",
            "        peers: [\"127.0.0.1:" + port + "\"]",
            "");
    RecordingPeerListSpec.LABELS.clear();
    Dispatcher d = loader().load("echoes", new StringReader(yaml)).build();
    assertThat(RecordingPeerListSpec.LABELS).containsExactly("first");
    HttpOutbound out = (HttpOutbound) d.outbounds().get("echoes").unary();
    assertThat(((RoundRobinPeerList) out.chooser()).peerIdentifiers())
        .isEqualTo(List.of("127.0.0.1:" + port));
    d.register(Raw.procedure("echo", body -> body));
    d.start();
    try {
      byte[] reply =
          RawClient.of(d.clientConfig("echoes"))
              .call("echo", "listed".getBytes(UTF_8), CallOptions.timeout(Duration.ofSeconds(5)))
              .get(10, TimeUnit.SECONDS);
      assertThat(new String(reply, UTF_8)).isEqualTo("listed");
    } finally {
      d.stop();
    }
  }

  @Test
  void aPluggedInUpdaterFeedsAPeerList() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    String yaml =
        String.join(
            "\n",
            "inbounds:",
            "  http: {address: \"127.0.0.1:" + port + "\"}",
            "outbounds:",
            "  echoes:",
            "    http:",
            "      url: http://ignored/yarpc",
            "      round-robin:",
            "        failFast: false",
            "        fixed: {hostPorts: [\":" + port + "\"]}",
            "");
    Dispatcher d = loader().load("echoes", new StringReader(yaml)).build();
    HttpOutbound out = (HttpOutbound) d.outbounds().get("echoes").unary();
    BoundPeerChooser<?> chooser = (BoundPeerChooser<?>) out.chooser();
    assertThat(chooser.updater()).isInstanceOf(FixedUpdaterSpec.Fixed.class);
    assertThat(((RoundRobinPeerList) chooser.list()).peerIdentifiers()).isEmpty(); // until start
    d.register(Raw.procedure("echo", body -> body));
    d.start();
    try {
      assertThat(((RoundRobinPeerList) chooser.list()).peerIdentifiers())
          .containsExactly("127.0.0.1:" + port); // identified as the HTTP outbound does
      byte[] reply =
          RawClient.of(d.clientConfig("echoes"))
              .call("echo", "fed".getBytes(UTF_8), CallOptions.timeout(Duration.ofSeconds(5)))
              .get(10, TimeUnit.SECONDS);
      assertThat(new String(reply, UTF_8)).isEqualTo("fed");
      ChooserStatus status = d.introspect().outbounds().get(0).chooser();
      assertThat(status.kind()).isEqualTo("round-robin");
      assertThat(status.updater().kind()).isEqualTo("fixed");
    } finally {
      d.stop();
    }
    assertThat(chooser.isRunning()).isFalse();
    assertThat(chooser.updater().isRunning()).isFalse();
  }

  @Test
  void anUpdaterBlockIsCheckedLikeAnyOther() {
    String base =
        "outbounds:\n  echoes:\n    http:\n      url: http://ignored/\n      round-robin:\n";
    assertThat(
            Fixtures.problems(
                loader(),
                YarpcConfig.parse(new StringReader(base + "        fixed: {colour: red}\n"))))
        .containsExactly(
            "outbounds.echoes.http.round-robin.fixed.hostPorts: missing required key",
            "outbounds.echoes.http.round-robin.fixed.colour: unknown key (known keys here:"
                + " hostPorts)");
    assertThat(
            Fixtures.problems(
                loader(),
                YarpcConfig.parse(
                    new StringReader(base + "        fixed: {hostPorts: [localhost]}\n"))))
        .containsExactly(
            "outbounds.echoes.http.round-robin.fixed.hostPorts[0]: not host:port: \"localhost\""
                + " (no port)");
    assertThat(
            Fixtures.problems(
                loader(),
                YarpcConfig.parse(
                    new StringReader(
                        base + "        peers: [127.0.0.1:1]\n        fixed: {hostPorts: []}\n"))))
        .containsExactly(
            "outbounds.echoes.http.round-robin: give one peer list updater, got peers and fixed");
    assertThat(
            Fixtures.problems(
                loader(), YarpcConfig.parse(new StringReader(base + "        failFast: true\n"))))
        .containsExactly(
            "outbounds.echoes.http.round-robin: no peers: give them as \"peers: [host:port, ...]\""
                + " or name a peer list updater (fixed)");
  }

  @Test
  void anUpdaterMayNotTakeTheStaticListsName() {
    FixedUpdaterSpec peers =
        new FixedUpdaterSpec() {
          @Override
          public String name() {
            return "peers";
          }
        };
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> YarpcConfig.loader().peerListUpdaterSpec(peers).load("echoes", Map.of()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("a PeerListUpdaterSpec may not be named \"peers\"");
  }
}
