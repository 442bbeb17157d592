package io.yarpc.observability.admin;

import static io.yarpc.observability.admin.AdminHttp.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.Dispatcher;
import io.yarpc.encoding.raw.Raw;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What the admin server answers to what it does not serve: unknown paths, other methods, requests too
 * large or malformed, idle and surplus connections; HEAD and keep-alive; escaping on the page. Raw
 * sockets, so every byte sent is the test's.
 */
@Timeout(60)
class AdminServerLimitsTest {
  private Dispatcher dispatcher;
  private AdminServer admin;

  @BeforeEach
  void start() {
    dispatcher = Dispatcher.builder("limits").logLifecycle(false).build();
    dispatcher.register(Raw.procedure("echo", body -> body));
    dispatcher.register(Raw.procedure("<script>alert('x')</script>&", body -> body));
    dispatcher.start();
    admin = AdminServer.builder(dispatcher).build().start();
  }

  @AfterEach
  void stop() {
    admin.stop();
    dispatcher.stop();
  }

  private AdminHttp connect() throws Exception {
    return new AdminHttp(admin.address());
  }

  @Test
  void unknownPathsAre404WithAText() throws Exception {
    try (AdminHttp c = connect()) {
      for (String path : new String[] {"/", "/debug", "/debug/yarpc/", "/metrics.json", "/x?y=z"}) {
        AdminHttp.Answer a = c.send(request("GET", path, "")).read();
        assertThat(a.status()).as(path).isEqualTo(404);
        assertThat(a.header("content-type")).isEqualTo("text/plain; charset=utf-8");
        assertThat(a.body()).startsWith("not found; the admin server answers GET /metrics");
      }
      // a query string does not change the endpoint
      assertThat(c.send(request("GET", "/health?verbose=1", "")).read().status()).isEqualTo(200);
    }
  }

  @Test
  void otherMethodsAre405WithAllow() throws Exception {
    try (AdminHttp c = connect()) {
      for (String method : new String[] {"POST", "PUT", "DELETE", "OPTIONS", "PATCH"}) {
        AdminHttp.Answer a =
            c.send(request(method, "/debug/yarpc", "Content-Length: 2\r\n") + "{}").read();
        assertThat(a.status()).as(method).isEqualTo(405);
        assertThat(a.header("allow")).isEqualTo("GET, HEAD");
        assertThat(a.body())
            .isEqualTo("method " + method + " not allowed; /debug/yarpc answers GET and HEAD\n");
      }
      assertThat(c.send(request("GET", "/health", "")).read().status())
          .as("the connection is still usable")
          .isEqualTo(200);
    }
  }

  @Test
  void headAnswersTheHeadersWithoutABody() throws Exception {
    try (AdminHttp c = connect()) {
      AdminHttp.Answer head = c.send(request("HEAD", "/health", "")).read(true);
      assertThat(head.status()).isEqualTo(200);
      assertThat(head.header("content-length")).isEqualTo("8");
      AdminHttp.Answer page = c.send(request("HEAD", "/debug/yarpc", "")).read(true);
      assertThat(page.header("content-type")).isEqualTo("text/html; charset=utf-8");
      // the next answer on the same connection starts right after the headers: no body was sent
      AdminHttp.Answer next = c.send(request("GET", "/health", "")).read();
      assertThat(next.body()).isEqualTo("SERVING\n");
    }
  }

  @Test
  void keepAliveAndPipelinedRequestsAreAnsweredInOrder() throws Exception {
    try (AdminHttp c = connect()) {
      c.send(
          request("GET", "/health", "")
              + request("GET", "/nope", "")
              + request("GET", "/debug/yarpc.json", ""));
      assertThat(c.read().status()).isEqualTo(200);
      assertThat(c.read().status()).isEqualTo(404);
      AdminHttp.Answer json = c.read();
      assertThat(json.status()).isEqualTo(200);
      assertThat(json.body()).contains("\"name\": \"limits\"");
      AdminHttp.Answer last = c.send(request("GET", "/health", "Connection: close\r\n")).read();
      assertThat(last.header("connection")).isEqualTo("close");
      assertThat(c.closedByServer()).isTrue();
    }
  }

  @Test
  void aLongRequestLineIs414AndCloses() throws Exception {
    try (AdminHttp c = connect()) {
      AdminHttp.Answer a = c.send(request("GET", "/health?" + "a".repeat(5000), "")).read();
      assertThat(a.status()).isEqualTo(414);
      assertThat(a.body()).isEqualTo("request line longer than 4096 bytes\n");
      assertThat(a.header("connection")).isEqualTo("close");
      assertThat(c.closedByServer()).isTrue();
    }
  }

  @Test
  void largeHeadersAre431AndClose() throws Exception {
    try (AdminHttp c = connect()) {
      AdminHttp.Answer a =
          c.send(request("GET", "/health", "X-Big: " + "b".repeat(17_000) + "\r\n")).read();
      assertThat(a.status()).isEqualTo(431);
      assertThat(a.body()).isEqualTo("request headers larger than 16384 bytes\n");
      assertThat(c.closedByServer()).isTrue();
    }
  }

  @Test
  void aLargeBodyIs413AndClosesWhetherItsLengthIsDeclaredOrChunked() throws Exception {
    try (AdminHttp c = connect()) {
      AdminHttp.Answer a = c.send(request("GET", "/health", "Content-Length: 1000000\r\n")).read();
      assertThat(a.status()).isEqualTo(413);
      assertThat(a.body()).isEqualTo("request body larger than 4096 bytes\n");
      assertThat(c.closedByServer()).isTrue();
    }
    try (AdminHttp c = connect()) {
      StringBuilder chunked =
          new StringBuilder(request("POST", "/health", "Transfer-Encoding: chunked\r\n"));
      for (int i = 0; i < 5; i++) {
        chunked.append("400\r\n").append("c".repeat(1024)).append("\r\n");
      }
      AdminHttp.Answer a = c.send(chunked.toString()).read();
      assertThat(a.status()).isEqualTo(413);
      assertThat(c.closedByServer()).isTrue();
    }
    try (AdminHttp c = connect()) {
      // a small body is read and ignored
      AdminHttp.Answer a =
          c.send(request("GET", "/health", "Content-Length: 5\r\n") + "hello").read();
      assertThat(a.status()).isEqualTo(200);
    }
  }

  @Test
  void aMalformedRequestIs400WithoutAStackTrace() throws Exception {
    try (AdminHttp c = connect()) {
      AdminHttp.Answer a =
          c.send("GET /health HTTP/1.1\r\nHost: a\r\nContent-Length: nope\r\n\r\n").read();
      assertThat(a.status()).isEqualTo(400);
      assertThat(a.body()).isEqualTo("malformed HTTP request\n");
      assertThat(c.closedByServer()).isTrue();
    }
    try (AdminHttp c = connect()) {
      byte[] garbage = "\u0001\u0002 not http at all\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1);
      AdminHttp.Answer a = c.send(garbage).read();
      assertThat(a.status()).isEqualTo(400);
      assertThat(a.body()).doesNotContain("Exception").doesNotContain("at io.");
    }
  }

  @Test
  void hostAndVersionRulesAreTheHttpInboundsOwn() throws Exception {
    String[][] cases = {
      {"GET /health HTTP/1.1\r\n\r\n", "400", "HTTP/1.1 request has no Host header field\n"},
      {
        "GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        "400",
        "request has more than one Host header field\n"
      },
      {
        "GET /health HTTP/1.1\r\nHost: a b\r\n\r\n",
        "400",
        "request has an invalid Host header field\n"
      },
      {
        "GET /health HTTP/2.0\r\nHost: a\r\n\r\n", "505", "HTTP version HTTP/2.0 is not supported\n"
      },
    };
    for (String[] c : cases) {
      try (AdminHttp http = connect()) {
        AdminHttp.Answer a = http.send(c[0]).read();
        assertThat(a.status()).as(c[0]).isEqualTo(Integer.parseInt(c[1]));
        assertThat(a.body()).isEqualTo(c[2]);
        assertThat(http.closedByServer()).isTrue();
      }
    }
    try (AdminHttp http = connect()) {
      assertThat(http.send("GET /health HTTP/1.0\r\n\r\n").read().status())
          .as("HTTP/1.0 needs no Host")
          .isEqualTo(200);
    }
    try (AdminHttp http = connect()) {
      assertThat(http.send("GET http://a/health HTTP/1.1\r\nHost: a\r\n\r\n").read().status())
          .as("a target in absolute form (RFC 9112 section 3.2.2)")
          .isEqualTo(200);
    }
  }

  @Test
  void metricsWithoutARegistryIs404SayingSo() throws Exception {
    try (AdminHttp c = connect()) {
      AdminHttp.Answer a = c.send(request("GET", "/metrics", "")).read();
      assertThat(a.status()).isEqualTo(404);
      assertThat(a.body())
          .isEqualTo(
              "no metrics: this admin server was built without a meter registry"
                  + " (AdminServer.Builder.meterRegistry)\n");
    }
  }

  @Test
  void thePageEscapesWhatItShowsAndLoadsNothing() throws Exception {
    try (AdminHttp c = connect()) {
      AdminHttp.Answer a = c.send(request("GET", "/debug/yarpc", "")).read();
      assertThat(a.status()).isEqualTo(200);
      assertThat(a.header("content-security-policy")).startsWith("default-src 'none'");
      assertThat(a.header("x-content-type-options")).isEqualTo("nosniff");
      assertThat(a.header("cache-control")).isEqualTo("no-store");
      assertThat(a.body())
          .startsWith("<!DOCTYPE html>")
          .contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;")
          .doesNotContain("<script")
          .doesNotContain("src=")
          .doesNotContain("http://")
          .doesNotContain("https://")
          .contains("<table id=\"procedures\">")
          .contains("<td class=\"empty\" colspan=\"6\">no peers reported</td>");
    }
  }

  @Test
  void anIdleConnectionIsClosed() throws Exception {
    AdminServer quick =
        AdminServer.builder(dispatcher).idleTimeout(Duration.ofMillis(300)).build().start();
    try (AdminHttp c = new AdminHttp(quick.address())) {
      c.send("GET /hea"); // half a request, then silence
      long start = System.nanoTime();
      assertThat(c.closedByServer()).isTrue();
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    } finally {
      quick.stop();
    }
  }

  @Test
  void connectionsBeyondTheLimitAreClosed() throws Exception {
    AdminServer one = AdminServer.builder(dispatcher).maxConnections(1).build().start();
    try (AdminHttp first = new AdminHttp(one.address())) {
      assertThat(first.send(request("GET", "/health", "")).read().status()).isEqualTo(200);
      try (AdminHttp second = new AdminHttp(one.address())) {
        second.send(request("GET", "/health", ""));
        assertThat(second.closedByServer()).isTrue();
      }
      assertThat(first.send(request("GET", "/health", "")).read().status()).isEqualTo(200);
    } finally {
      one.stop();
    }
  }

  @Test
  void lifecycleAndBuilderChecks() throws Exception {
    assertThat(admin.isRunning()).isTrue();
    assertThat(admin.start()).as("a second start does nothing").isSameAs(admin);
    assertThat(admin.url("/health"))
        .isEqualTo("http://127.0.0.1:" + admin.address().getPort() + "/health");

    AdminServer clash = AdminServer.builder(dispatcher).port(admin.address().getPort()).build();
    assertThatThrownBy(clash::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith(
            "admin server cannot listen on 127.0.0.1:" + admin.address().getPort() + ": ");
    assertThat(clash.isRunning()).isFalse();

    AdminServer notStarted = AdminServer.builder(dispatcher).build();
    assertThatThrownBy(notStarted::address).isInstanceOf(IllegalStateException.class);
    notStarted.stop();
    assertThatThrownBy(notStarted::start)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("admin server was stopped and cannot start again");

    InetSocketAddress was = admin.address();
    admin.stop();
    admin.stop();
    assertThat(admin.isRunning()).isFalse();
    assertThatThrownBy(() -> new AdminHttp(was).send(request("GET", "/health", "")).read())
        .isInstanceOf(java.io.IOException.class);

    assertThatThrownBy(() -> AdminServer.builder(dispatcher).port(70000))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> AdminServer.builder(dispatcher).maxConnections(0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> AdminServer.builder(dispatcher).idleTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> AdminServer.builder(null)).isInstanceOf(NullPointerException.class);
  }
}
