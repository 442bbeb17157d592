package io.yarpc.config;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.testing.TestCertificates;
import io.yarpc.tls.TlsMode;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.tchannel.TChannelInbound;
import java.io.IOException;
import java.io.StringReader;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mutual TLS on all three transports from one document: inbounds with {@code tls} (certificate, key,
 * the CA for client certificates, {@code clientAuth: require}), transports with the client side's {@code
 * tls} (the CA, a client certificate), file names from {@code ${...}} variables; the dispatcher calls
 * itself over each.
 */
@Timeout(90)
class TlsFromConfigTest {
  private static final String YAML =
      String.join(
          "\n",
          "inbounds:",
          "  http:",
          "    address: 127.0.0.1:${HTTP_PORT}",
          "    tls: &server",
          "      certFile: ${CERTS}/server.pem",
          "      keyFile: ${CERTS}/server.key",
          "      caFile: ${CERTS}/ca.pem",
          "      clientAuth: require",
          "  grpc:",
          "    address: 127.0.0.1:${GRPC_PORT}",
          "    tls: *server",
          "  tchannel:",
          "    address: 127.0.0.1:${TCHANNEL_PORT}",
          "    tls:",
          "      mode: permissive",
          "      certFile: ${CERTS}/server.pem",
          "      keyFile: ${CERTS}/server.key",
          "      caFile: ${CERTS}/ca.pem",
          "outbounds:",
          "  over-http:",
          "    service: secure",
          "    http: {url: \"https://127.0.0.1:${HTTP_PORT}/\"}",
          "  over-grpc:",
          "    service: secure",
          "    grpc: {address: \"127.0.0.1:${GRPC_PORT}\"}",
          "  over-tchannel:",
          "    service: secure",
          "    tchannel: {peer: \"127.0.0.1:${TCHANNEL_PORT}\"}",
          "transports:",
          "  http:",
          "    tls: &client",
          "      caFile: ${CERTS}/ca.pem",
          "      certFile: ${CERTS}/client.pem",
          "      keyFile: ${CERTS}/client.key",
          "      provider: jdk",
          "  grpc:",
          "    tls: *client",
          "  tchannel:",
          "    tls: *client",
          "");

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  @Test
  void mutualTlsOverEveryTransport(@TempDir Path dir) throws Exception {
    TestCertificates certs = TestCertificates.generate(dir);
    Map<String, String> env = new HashMap<>();
    env.put("CERTS", dir.toString());
    env.put("HTTP_PORT", String.valueOf(freePort()));
    env.put("GRPC_PORT", String.valueOf(freePort()));
    env.put("TCHANNEL_PORT", String.valueOf(freePort()));
    assertThat(certs.server().certificate()).isEqualTo(dir.resolve("server.pem"));
    assertThat(certs.client().key()).isEqualTo(dir.resolve("client.key"));

    Dispatcher d =
        YarpcConfig.loader().environment(env::get).load("secure", new StringReader(YAML)).build();
    assertThat(((HttpInbound) d.inbounds().get(0)).tlsMode()).isEqualTo(TlsMode.ENFORCED);
    assertThat(((GrpcInbound) d.inbounds().get(1)).tlsMode()).isEqualTo(TlsMode.ENFORCED);
    assertThat(((TChannelInbound) d.inbounds().get(2)).tlsMode()).isEqualTo(TlsMode.PERMISSIVE);
    d.register(Raw.procedure("echo", body -> body));
    d.start();
    try {
      for (String outbound : new String[] {"over-http", "over-grpc", "over-tchannel"}) {
        byte[] reply =
            RawClient.of(d.clientConfig(outbound))
                .call("echo", outbound.getBytes(UTF_8), CallOptions.timeout(Duration.ofSeconds(10)))
                .get(20, TimeUnit.SECONDS);
        assertThat(new String(reply, UTF_8)).as(outbound).isEqualTo(outbound);
      }
    } finally {
      d.stop();
    }
  }
}
