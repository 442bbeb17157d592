package io.yarpc.encoding.protobuf;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.util.JsonFormat;
import io.yarpc.Outbounds;
import io.yarpc.encoding.protobuf.testing.EchoResponse;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpOutbound;
import io.yarpc.transport.http.HttpTransport;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The generated service and stubs over HTTP/1.1 (unary only: HTTP does not stream), plus the JSON
 * encoding driven by a plain {@link HttpClient}, as yarpc-go's package doc shows with curl.
 */
class HttpEndToEndTest extends EndToEndTestBase {
  private final HttpTransport serverTransport = HttpTransport.builder().eventLoopThreads(2).build();
  private final HttpTransport clientTransport = HttpTransport.builder().eventLoopThreads(2).build();
  private HttpInbound inbound;

  @Override
  List<Inbound> serverInbounds() {
    inbound = serverTransport.inbound();
    return List.of(inbound);
  }

  @Override
  Outbounds clientOutbounds() {
    HttpOutbound out = clientTransport.singleOutbound(inbound.hostPort());
    return Outbounds.builder().unary(out).oneway(out).build();
  }

  @Override
  boolean supportsStreaming() {
    return false;
  }

  @Override
  void closeTransports() {
    clientTransport.stop();
    serverTransport.stop();
  }

  private HttpResponse<String> post(String procedure, String encoding, String body)
      throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://" + inbound.hostPort() + "/"))
            .timeout(Duration.ofSeconds(10))
            .header("Rpc-Caller", "curl")
            .header("Rpc-Service", "echo")
            .header("Rpc-Encoding", encoding)
            .header("Rpc-Procedure", procedure)
            .header("Context-TTL-MS", "2000")
            .header("Rpc-Header-X-Trace", "from-http-client")
            .POST(HttpRequest.BodyPublishers.ofString(body, UTF_8))
            .build();
    return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString(UTF_8));
  }

  @Test
  void jsonEncodingFromAPlainHttpClient() throws Exception {
    HttpResponse<String> res =
        post(
            "yarpc.test.protobuf.Echo::Unary",
            "json",
            "{\"message\":\"sample\",\"payload\":\"AQID\",\"unknownField\":42}");

    assertThat(res.statusCode()).isEqualTo(200);
    assertThat(res.headers().firstValue("Rpc-Status")).hasValue("success");
    assertThat(
            res.headers()
                .firstValue("Rpc-Header-X-Echoed-By")
                .orElse(res.headers().firstValue("rpc-header-x-echoed-by").orElse(null)))
        .isEqualTo("echo-service");
    EchoResponse.Builder decoded = EchoResponse.newBuilder();
    JsonFormat.parser().merge(res.body(), decoded);
    assertThat(decoded.getMessage()).isEqualTo("sample");
    assertThat(decoded.getPayload().toByteArray()).containsExactly(1, 2, 3);
    assertThat(decoded.getHeadersMap()).containsEntry("x-trace", "from-http-client");
    assertThat(res.body())
        .as("compact proto3 JSON, lower camel case")
        .contains("\"deadlineMillis\":");
  }

  @Test
  void jsonErrorsFromAPlainHttpClient() throws Exception {
    HttpResponse<String> malformed =
        post("yarpc.test.protobuf.Echo::Unary", "json", "{\"message\":");
    assertThat(malformed.statusCode()).isEqualTo(400);
    assertThat(malformed.headers().firstValue("Rpc-Error-Code")).hasValue("invalid-argument");
    assertThat(malformed.body())
        .startsWith(
            "failed to decode \"json\" request body for procedure "
                + "\"yarpc.test.protobuf.Echo::Unary\" of service \"echo\" from caller \"curl\": ");

    HttpResponse<String> failed =
        post(
            "yarpc.test.protobuf.Echo::Unary",
            "json",
            "{\"message\":\"x\",\"fail\":\"status-details\"}");
    assertThat(failed.statusCode()).isEqualTo(400);
    assertThat(failed.headers().firstValue("Rpc-Status")).hasValue("error");
    assertThat(failed.headers().firstValue("Rpc-Application-Error-Name")).hasValue("BadRequest");
    assertThat(failed.body()).isEqualTo("rude request\n");
  }
}
