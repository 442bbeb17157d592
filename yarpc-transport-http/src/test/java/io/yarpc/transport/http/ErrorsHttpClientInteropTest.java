package io.yarpc.transport.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Interop with a client this project did not write: the JDK's {@link HttpClient} sends YARPC requests with
 * the headers set by hand to the HTTP inbound, for every case of crossdock's {@code errors_httpclient}
 * (docs/spec/model.md §8.9 item 6), and checks status, headers and body text exactly.
 */
class ErrorsHttpClientInteropTest {
  private static YarpcTestService server;
  private static HttpClient client;

  @BeforeAll
  static void start() {
    server = new YarpcTestService();
    client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  /** A response as seen by the JDK client: headers by lower-case name. */
  record Res(int status, Map<String, List<String>> headers, String body) {
    String header(String name) {
      List<String> v = headers.get(name.toLowerCase());
      return v == null ? null : v.get(0);
    }
  }

  static Res post(Map<String, String> headers, String body) throws Exception {
    return send("POST", headers, body);
  }

  static Res send(String method, Map<String, String> headers, String body) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://" + server.hostPort() + "/"))
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    headers.forEach(b::header);
    HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    Map<String, List<String>> h = new TreeMap<>();
    r.headers().map().forEach((k, v) -> h.put(k.toLowerCase(), v));
    return new Res(r.statusCode(), h, r.body());
  }

  static Map<String, String> headers(String... kv) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return m;
  }

  /**
   * Headers of a valid request. Crossdock sends a TTL of 100 ms in every case; here only the two cases
   * that wait for a timeout do, and the others send 5000 ms, so that a loaded machine (a cold JIT, a GC
   * pause) cannot turn them into timeouts.
   */
  static Map<String, String> valid(String procedure, String encoding, String ttl) {
    return headers(
        "RPC-Caller",
        "yarpc-test",
        "RPC-Service",
        "yarpc-test",
        "RPC-Procedure",
        procedure,
        "RPC-Encoding",
        encoding,
        "Context-TTL-MS",
        ttl);
  }

  /** The headers of a text/plain error answer (client did not accept both response and error). */
  static void assertTextError(Res res, int status, String code, String service, String body) {
    assertThat(res.status()).isEqualTo(status);
    assertThat(res.body()).isEqualTo(body);
    assertThat(res.header("Rpc-Error-Code")).isEqualTo(code);
    assertThat(res.header("Content-Type")).isEqualTo("text/plain; charset=utf8");
    assertThat(res.header("Rpc-Service")).isEqualTo(service);
    assertThat(res.header("Content-Length"))
        .isEqualTo(Integer.toString(body.getBytes(java.nio.charset.StandardCharsets.UTF_8).length));
    assertThat(res.headers()).doesNotContainKeys("rpc-both-response-error", "rpc-error-message");
  }

  @Test
  void validRequest() throws Exception {
    Res res = post(valid("echo", "json", "5000"), "{\"token\":\"10\"}");
    assertThat(res.status()).isEqualTo(200);
    assertThat(res.body()).isEqualTo("{\"token\":\"10\"}\n");
    assertThat(res.headers())
        .containsOnlyKeys("content-length", "content-type", "rpc-service", "rpc-status");
    assertThat(res.header("Content-Type")).isEqualTo("application/json");
    assertThat(res.header("Rpc-Status")).isEqualTo("success");
    assertThat(res.header("Rpc-Service")).isEqualTo("yarpc-test");
  }

  @Test
  void noService() throws Exception {
    assertTextError(
        post(headers(), "{}"),
        400,
        "invalid-argument",
        "",
        "missing service name, procedure, caller name, encoding\n");
  }

  @Test
  void wrongService() throws Exception {
    Map<String, String> h = valid("echo", "json", "5000");
    h.put("RPC-Service", "not-yarpc-test");
    assertTextError(
        post(h, "{\"token\":\"10\"}"),
        501,
        "unimplemented",
        "not-yarpc-test",
        "unrecognized service name \"not-yarpc-test\", available services: \"yarpc-test\"\n");
  }

  @Test
  void noProcedure() throws Exception {
    assertTextError(
        post(headers("RPC-Service", "yarpc-test"), "{}"),
        400,
        "invalid-argument",
        "yarpc-test",
        "missing procedure, caller name, encoding\n");
  }

  @Test
  void noCaller() throws Exception {
    assertTextError(
        post(headers("RPC-Service", "yarpc-test", "RPC-Procedure", "echo"), "{}"),
        400,
        "invalid-argument",
        "yarpc-test",
        "missing caller name, encoding\n");
  }

  @Test
  void noHandler() throws Exception {
    assertTextError(
        post(valid("no-such-procedure", "json", "5000"), "{}"),
        501,
        "unimplemented",
        "yarpc-test",
        "unrecognized procedure \"no-such-procedure\" for service \"yarpc-test\"\n");
  }

  @Test
  void noTimeoutAndNoEncoding() throws Exception {
    assertTextError(
        post(
            headers(
                "RPC-Caller", "yarpc-test", "RPC-Service", "yarpc-test", "RPC-Procedure", "echo"),
            "{}"),
        400,
        "invalid-argument",
        "yarpc-test",
        "missing encoding\n");
  }

  @Test
  void noTimeout() throws Exception {
    assertTextError(
        post(
            headers(
                "RPC-Caller",
                "yarpc-test",
                "RPC-Service",
                "yarpc-test",
                "RPC-Procedure",
                "echo",
                "RPC-Encoding",
                "json"),
            "{}"),
        400,
        "invalid-argument",
        "yarpc-test",
        "missing TTL\n");
  }

  @Test
  void noEncoding() throws Exception {
    assertTextError(
        post(
            headers(
                "RPC-Caller",
                "yarpc-test",
                "RPC-Service",
                "yarpc-test",
                "RPC-Procedure",
                "echo",
                "Context-TTL-MS",
                "5000"),
            "{}"),
        400,
        "invalid-argument",
        "yarpc-test",
        "missing encoding\n");
  }

  @Test
  void invalidTimeout() throws Exception {
    assertTextError(
        post(valid("echo", "json", "moo"), "{}"),
        400,
        "invalid-argument",
        "yarpc-test",
        "invalid TTL \"moo\" for service \"yarpc-test\" and procedure \"echo\"\n");
  }

  @Test
  void negativeTimeout() throws Exception {
    assertTextError(
        post(valid("echo", "json", "-05"), "{}"),
        400,
        "invalid-argument",
        "yarpc-test",
        "invalid TTL \"-5\" for service \"yarpc-test\" and procedure \"echo\"\n");
  }

  @Test
  void checkOrderValidationThenRoutingThenTtl() throws Exception {
    // a missing field wins over a bad TTL
    assertTextError(
        post(
            headers(
                "RPC-Service",
                "yarpc-test",
                "RPC-Procedure",
                "echo",
                "RPC-Encoding",
                "json",
                "Context-TTL-MS",
                "moo"),
            "{}"),
        400,
        "invalid-argument",
        "yarpc-test",
        "missing caller name\n");
    // routing wins over a bad TTL
    assertTextError(
        post(valid("nope", "json", "moo"), "{}"),
        501,
        "unimplemented",
        "yarpc-test",
        "unrecognized procedure \"nope\" for service \"yarpc-test\"\n");
    // a bad TTL wins over the handler (which would fail to decode)
    assertTextError(
        post(valid("echo", "json", "moo"), "i am not json"),
        400,
        "invalid-argument",
        "yarpc-test",
        "invalid TTL \"moo\" for service \"yarpc-test\" and procedure \"echo\"\n");
  }

  @Test
  void invalidRequest() throws Exception {
    Res res = post(valid("echo", "json", "5000"), "i am not json");
    assertThat(res.status()).isEqualTo(400);
    assertThat(res.body())
        .startsWith(
            "failed to decode \"json\" request body for procedure \"echo\" of service "
                + "\"yarpc-test\" from caller \"yarpc-test\":")
        .endsWith("\n");
    assertThat(res.header("Rpc-Error-Code")).isEqualTo("invalid-argument");
  }

  @Test
  void encodingMismatch() throws Exception {
    assertTextError(
        post(valid("echo", "thrift", "5000"), "{}"),
        400,
        "invalid-argument",
        "yarpc-test",
        "failed to decode \"json\" request body for procedure \"echo\" of service \"yarpc-test\" from caller "
            + "\"yarpc-test\": expected encoding \"json\" but got \"thrift\"\n");
  }

  @Test
  void unexpectedError() throws Exception {
    Res res = post(valid("unexpected-error", "json", "5000"), "{}");
    assertTextError(
        res,
        500,
        "unknown",
        "yarpc-test",
        "error for service \"yarpc-test\" and procedure \"unexpected-error\": unexpected error (the server logged it)\n");
    assertThat(res.header("Rpc-Status"))
        .isEqualTo("error"); // the JSON handler flags an application error
  }

  @Test
  void unexpectedErrorWithBothResponseAndError() throws Exception {
    Map<String, String> h = valid("unexpected-error", "json", "5000");
    h.put("Rpc-Accepts-Both-Response-Error", "true");
    Res res = post(h, "{}");
    assertThat(res.status()).isEqualTo(500);
    assertThat(res.body()).isEmpty();
    assertThat(res.header("Rpc-Both-Response-Error")).isEqualTo("true");
    assertThat(res.header("Rpc-Error-Code")).isEqualTo("unknown");
    assertThat(res.header("Rpc-Error-Message"))
        .isEqualTo(
            "error for service \"yarpc-test\" and procedure \"unexpected-error\": unexpected error (the server logged it)");
    assertThat(res.header("Rpc-Status")).isEqualTo("error");
    assertThat(res.headers()).doesNotContainKey("content-type");
  }

  @Test
  void badResponse() throws Exception {
    Res res = post(valid("bad-response", "json", "5000"), "{}");
    assertThat(res.status()).isEqualTo(400);
    assertThat(res.body())
        .startsWith(
            "failed to encode \"json\" response body for procedure \"bad-response\" "
                + "of service \"yarpc-test\" from caller \"yarpc-test\":");
    assertThat(res.header("Rpc-Error-Code")).isEqualTo("invalid-argument");
  }

  private String phone(String procedure, String body) {
    return "{\"service\": \"yarpc-test\", \"procedure\": \""
        + procedure
        + "\", \"body\": "
        + body
        + ", \"transport\": {\"http\": {\"host\": \"127.0.0.1\", \"port\": "
        + server.port()
        + "}}}";
  }

  @Test
  void remoteBadRequest() throws Exception {
    Res res = post(valid("phone", "json", "1000"), phone("Echo::echo", "\"not a Thrift payload\""));
    assertThat(res.status()).isEqualTo(400);
    assertThat(res.body())
        .contains(
            "failed to decode \"thrift\" request body for procedure \"Echo::echo\" "
                + "of service \"yarpc-test\" from caller \"yarpc-test\": ");
  }

  @Test
  void remoteUnexpectedError() throws Exception {
    Res res = post(valid("phone", "json", "1000"), phone("unexpected-error", "{}"));
    assertThat(res.status()).isEqualTo(500);
    assertThat(res.body())
        .contains(
            "error for service \"yarpc-test\" and procedure \"unexpected-error\": unexpected error"
                + " (the server logged it)\n");
  }

  @Test
  void remoteTimeout() throws Exception {
    Res res = post(valid("waitfortimeout/raw", "raw", "100"), null);
    assertThat(res.status()).isEqualTo(504);
    assertThat(res.header("Rpc-Error-Code")).isEqualTo("deadline-exceeded");
    assertThat(res.body())
        .contains(
            "call to procedure \"waitfortimeout/raw\" of service \"yarpc-test\" from "
                + "caller \"yarpc-test\" timed out");
  }

  @Test
  void unexpectedClientTimeout() throws Exception {
    Res res = post(valid("phone", "json", "100"), phone("sleep", "\"unused\""));
    assertThat(res.status()).isEqualTo(504);
    assertThat(res.body())
        .contains(
            "call to procedure \"phone\" of service \"yarpc-test\" from caller "
                + "\"yarpc-test\" timed out");
  }

  @Test
  void otherMethodsAreNotFound() throws Exception {
    assertTextError(
        send("GET", valid("echo", "json", "5000"), null),
        404,
        "not-found",
        "yarpc-test",
        "request method was GET but only POST is allowed\n");
    assertTextError(
        send("PUT", valid("echo", "json", "5000"), "{}"),
        404,
        "not-found",
        "yarpc-test",
        "request method was PUT but only POST is allowed\n");
  }

  @Test
  void clientsAskingToUpgradeToH2cAreServedOverHttp11() throws Exception {
    // the JDK client prefers HTTP/2: on http:// it sends Upgrade: h2c, which the inbound ignores
    HttpClient upgrading = HttpClient.newBuilder().version(HttpClient.Version.HTTP_2).build();
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://" + server.hostPort() + "/"))
            .POST(HttpRequest.BodyPublishers.ofString("up"));
    valid("echo/raw", "raw", "1000").forEach(b::header);
    HttpResponse<String> r = upgrading.send(b.build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.version()).isEqualTo(HttpClient.Version.HTTP_1_1);
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.body()).isEqualTo("up");
  }

  @Test
  void rawEcho() throws Exception {
    Res res = post(valid("echo/raw", "raw", "5000"), "hello");
    assertThat(res.status()).isEqualTo(200);
    assertThat(res.body()).isEqualTo("hello");
    assertThat(res.header("Content-Type")).isEqualTo("application/octet-stream");
  }

  @Test
  void applicationHeadersBothWays() throws Exception {
    Map<String, String> h = valid("echo/headers", "raw", "5000");
    h.put("Rpc-Header-Foo", "bar");
    h.put("rpc-header-MixedCase", "Value");
    h.put("Rpc-Header-Empty", "");
    h.put("Rpc-Header-Rpc-Procedure", "survives");
    h.put("X-Forwarded-For", "1.2.3.4");
    h.put("Rpc-Header-X-Request-Id", "prefixed");
    h.put("X-Request-Id", "plain");
    h.put("Uber-Trace-Id", "abc");
    h.put("Uberctx-Tenant", "t1");
    h.put("X-Not-Allowed", "dropped");
    h.put("Rpc-Header-Rpc-Routing-Zone", "zone1");
    Res res = post(h, "x");
    assertThat(res.status()).isEqualTo(200);
    assertThat(res.header("Rpc-Header-Foo")).isEqualTo("bar");
    assertThat(res.header("Rpc-Header-Mixedcase")).isEqualTo("Value");
    assertThat(res.header("Rpc-Header-Empty")).isEmpty();
    assertThat(res.header("Rpc-Header-Rpc-Procedure")).isEqualTo("survives");
    // tracing, proxy and cross-zone keys go back unprefixed; the prefixed value won over the plain
    // one
    assertThat(res.header("X-Forwarded-For")).isEqualTo("1.2.3.4");
    assertThat(res.header("X-Request-Id")).isEqualTo("prefixed");
    assertThat(res.header("Rpc-Routing-Zone")).isEqualTo("zone1");
    // unprefixed tracing keys are the request's propagation headers, not application headers, so
    // the handler has nothing of them to echo (docs/spec/model.md §8.3)
    assertThat(res.headers())
        .doesNotContainKeys(
            "uber-trace-id",
            "uberctx-tenant",
            "rpc-header-x-request-id",
            "x-not-allowed",
            "rpc-header-x-not-allowed",
            "rpc-header-rpc-routing-zone");
  }

  @Test
  void requestMetadata() throws Exception {
    Map<String, String> h = valid("meta", "raw", "5000");
    h.put("Rpc-Shard-Key", "shard");
    h.put("Rpc-Routing-Key", "rk");
    h.put("Rpc-Routing-Delegate", "rd");
    h.put("Rpc-Caller-Procedure", "cp");
    h.put("Uber-Trace-Id", "abc:def:0:1");
    h.put("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    h.put("Uberctx-Tenant", "t1");
    h.put("Rpc-Header-Traceparent", "an application header");
    Res res = post(h, "");
    assertThat(res.status()).isEqualTo(200);
    assertThat(res.body())
        .contains(
            "\"caller\":\"yarpc-test\"",
            "\"service\":\"yarpc-test\"",
            "\"procedure\":\"meta\"",
            "\"encoding\":\"raw\"",
            "\"transport\":\"http\"",
            "\"shardKey\":\"shard\"",
            "\"routingKey\":\"rk\"",
            "\"routingDelegate\":\"rd\"",
            "\"callerProcedure\":\"cp\"",
            "\"hasDeadline\":true",
            "\"propagationHeaders\":{",
            "\"uber-trace-id\":\"abc:def:0:1\"",
            "\"traceparent\":\"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\"",
            "\"uberctx-tenant\":\"t1\"");
    // none of the Rpc-* metadata headers leak into the application headers; user-agent is a proxy
    // key
    assertThat(res.body())
        .contains("\"headers\":{\"user-agent\":\"Java-http-client/")
        .contains("\"traceparent\":\"an application header\"");
    assertThat(res.body()).doesNotContain("rpc-header", "rpc-shard", "context-ttl");
  }
}
