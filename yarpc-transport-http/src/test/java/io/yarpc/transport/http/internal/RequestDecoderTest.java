package io.yarpc.transport.http.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.netty.internal.Http1Heads;
import io.yarpc.transport.RequestMeta;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Request heads read as docs/spec/wire-http.md §3.2 says, with no channel. */
class RequestDecoderTest {
  private static HttpRequest post(String... headers) {
    return request(HttpVersion.HTTP_1_1, HttpMethod.POST, headers);
  }

  private static HttpRequest request(HttpVersion version, HttpMethod method, String... headers) {
    HttpRequest req = new DefaultHttpRequest(version, method, "/any/path");
    for (int i = 0; i < headers.length; i += 2) {
      req.headers().add(headers[i], headers[i + 1]);
    }
    return req;
  }

  @Test
  void everyRpcHeaderBecomesMetadata() {
    HttpRequest req =
        post(
            "rpc-caller",
            "client",
            "RPC-SERVICE",
            "svc",
            "Rpc-Procedure",
            "proc",
            "Rpc-Encoding",
            "json",
            "Rpc-Shard-Key",
            "shard",
            "Rpc-Routing-Key",
            "rk",
            "Rpc-Routing-Delegate",
            "rd",
            "Rpc-Caller-Procedure",
            "cp",
            "Context-TTL-MS",
            "1500");
    RequestDecoder.Decoded d = RequestDecoder.decode(req, false, null);
    RequestMeta m = d.meta();
    assertThat(d.ttlError()).isNull();
    assertThat(m.caller()).isEqualTo("client");
    assertThat(m.service()).isEqualTo("svc");
    assertThat(m.procedure()).isEqualTo("proc");
    assertThat(m.encoding()).isEqualTo("json");
    assertThat(m.transport()).isEqualTo("http");
    assertThat(m.shardKey()).isEqualTo("shard");
    assertThat(m.routingKey()).isEqualTo("rk");
    assertThat(m.routingDelegate()).isEqualTo("rd");
    assertThat(m.callerProcedure()).isEqualTo("cp");
    assertThat(m.deadline().timeRemaining())
        .as("counted from now")
        .isBetween(Duration.ofMillis(500), Duration.ofMillis(1500));
    assertThat(RequestDecoder.decode(req, true, null).meta().transport()).isEqualTo("http2");
  }

  @Test
  void applicationHeadersPrefixedWinOverUnprefixedTracingAndProxyHeaders() {
    HttpRequest req =
        post(
            "Context-TTL-MS",
            "10",
            "uber-trace-id",
            "plain",
            "Rpc-Header-Uber-Trace-Id",
            "prefixed",
            "User-Agent",
            "curl",
            "rpc-header-foo-bar",
            "baz",
            "Rpc-Header-",
            "no key",
            "X-Other",
            "ignored");
    RequestMeta m = RequestDecoder.decode(req, false, null).meta();
    assertThat(m.headers().get("uber-trace-id")).isEqualTo("prefixed");
    // the unprefixed tracing key is a propagation header, not an application header
    assertThat(m.propagationHeaders().asMap()).containsExactly(Map.entry("uber-trace-id", "plain"));
    assertThat(m.headers().get("user-agent")).isEqualTo("curl");
    assertThat(m.headers().get("foo-bar")).isEqualTo("baz");
    assertThat(m.headers().get("x-other")).isNull();
    assertThat(m.headers().get("")).isNull();
  }

  @Test
  void noTtlMeansNoDeadlineAndNoError() {
    RequestDecoder.Decoded d = RequestDecoder.decode(post("Rpc-Service", "s"), false, null);
    assertThat(d.meta().deadline()).isNull();
    assertThat(d.ttlError()).isNull();
  }

  @Test
  void zeroTtlIsADeadlineNow() {
    RequestDecoder.Decoded d = RequestDecoder.decode(post("Context-TTL-MS", "0"), false, null);
    assertThat(d.ttlError()).isNull();
    assertThat(d.meta().deadline()).isNotNull();
  }

  @Test
  void unusableTtlsAreReportedAsGoQuotesThem() {
    String[][] cases = {
      {"moo", "invalid TTL \"moo\" for service \"S\" and procedure \"P\""},
      {"-5", "invalid TTL \"-5\" for service \"S\" and procedure \"P\""},
      {"-05", "invalid TTL \"-5\" for service \"S\" and procedure \"P\""},
      {"1.5", "invalid TTL \"1.5\" for service \"S\" and procedure \"P\""},
      {
        "99999999999999999999",
        "invalid TTL \"99999999999999999999\" for service \"S\" and procedure \"P\""
      },
    };
    for (String[] c : cases) {
      RequestDecoder.Decoded d =
          RequestDecoder.decode(
              post("Rpc-Service", "S", "Rpc-Procedure", "P", "Context-TTL-MS", c[0]), false, null);
      assertThat(d.meta().deadline()).as(c[0]).isNull();
      assertThat(d.ttlError().code()).isEqualTo(Code.INVALID_ARGUMENT);
      assertThat(d.ttlError().getMessage()).as(c[0]).isEqualTo(c[1]);
    }
  }

  @Test
  void onlyPostIsAllowed() {
    assertThat(RequestDecoder.methodError(post())).isNull();
    YarpcException e = RequestDecoder.methodError(request(HttpVersion.HTTP_1_1, HttpMethod.GET));
    assertThat(e.code()).isEqualTo(Code.NOT_FOUND);
    assertThat(e.getMessage()).isEqualTo("request method was GET but only POST is allowed");
    assertThat(
            RequestDecoder.methodError(request(HttpVersion.HTTP_1_1, HttpMethod.valueOf("BREW")))
                .getMessage())
        .isEqualTo("request method was BREW but only POST is allowed");
  }

  @Test
  void responseContextFromTheHead() {
    HttpRequest req =
        request(
            HttpVersion.HTTP_1_0,
            HttpMethod.POST,
            "Rpc-Service",
            "svc",
            "Rpc-Encoding",
            "raw",
            "Rpc-Accepts-Both-Response-Error",
            "true");
    assertThat(RequestDecoder.responseContext(req, false))
        .isEqualTo(new InboundResponses.Context(HttpVersion.HTTP_1_0, "svc", "raw", true));
    assertThat(RequestDecoder.responseContext(req, true).version())
        .as("HTTP/2 answers as 1.1")
        .isEqualTo(HttpVersion.HTTP_1_1);
    assertThat(
            RequestDecoder.responseContext(post("Rpc-Accepts-Both-Response-Error", "TRUE"), false)
                .bothResponseError())
        .as("only the literal true")
        .isFalse();
    assertThat(RequestDecoder.responseContext(null, false))
        .isEqualTo(new InboundResponses.Context(HttpVersion.HTTP_1_1, "", "", false));
  }

  @Test
  void keepAlive() {
    assertThat(RequestDecoder.keepAlive(null)).isTrue();
    assertThat(RequestDecoder.keepAlive(post())).isTrue();
    assertThat(RequestDecoder.keepAlive(post("Connection", "close"))).isFalse();
    assertThat(RequestDecoder.keepAlive(request(HttpVersion.HTTP_1_0, HttpMethod.POST))).isFalse();
    assertThat(
            RequestDecoder.keepAlive(
                request(HttpVersion.HTTP_1_0, HttpMethod.POST, "Connection", "keep-alive")))
        .isTrue();
  }

  @Test
  void nonAsciiValuesAreReadAsUtf8() {
    String wire =
        new String(
            "café".getBytes(java.nio.charset.StandardCharsets.UTF_8),
            java.nio.charset.StandardCharsets.ISO_8859_1);
    RequestMeta m =
        RequestDecoder.decode(post("Rpc-Caller", wire, "Rpc-Header-Name", wire), false, null)
            .meta();
    assertThat(m.caller()).isEqualTo("café");
    assertThat(m.headers().get("name")).isEqualTo("café");
  }

  /** The text of {@code headError}'s answer to a request, with its status; null when it may be served. */
  private static String headError(HttpRequest req) {
    Http1Heads.Problem p = Http1Heads.check(req);
    return p == null ? null : p.status() + " " + RequestDecoder.headError(p).getMessage();
  }

  @Test
  void hostRulesOfRfc9112() {
    HttpVersion v19 = new HttpVersion("HTTP/1.9", true);
    assertThat(headError(post("Host", "example.com:8080"))).isNull();
    assertThat(headError(post("Host", "[::1]:80"))).isNull();
    assertThat(headError(post("Host", ""))).as("empty is allowed").isNull();
    assertThat(headError(request(HttpVersion.HTTP_1_0, HttpMethod.POST)))
        .as("1.0 needs none")
        .isNull();
    assertThat(headError(post())).isEqualTo("400 HTTP/1.1 request has no Host header field");
    assertThat(headError(request(v19, HttpMethod.POST)))
        .isEqualTo("400 HTTP/1.9 request has no Host header field");
    assertThat(headError(request(HttpVersion.HTTP_1_0, HttpMethod.POST, "Host", "a", "Host", "b")))
        .isEqualTo("400 request has more than one Host header field");
    for (String bad : new String[] {"a b", "a/b", "a\"b", "a@b", "é"}) {
      assertThat(headError(post("Host", bad)))
          .as(bad)
          .isEqualTo("400 request has an invalid Host header field");
    }
  }

  @Test
  void versionsOtherThanOneAreRefusedAndAnswersNeverCarryAVersionNotSpoken() {
    assertThat(headError(request(new HttpVersion("HTTP/3.0", true), HttpMethod.POST, "Host", "h")))
        .isEqualTo("505 HTTP version HTTP/3.0 is not supported");
    assertThat(
            RequestDecoder.answerVersion(
                request(new HttpVersion("HTTP/1.2", true), HttpMethod.POST), false))
        .isEqualTo(HttpVersion.HTTP_1_1);
    assertThat(RequestDecoder.answerVersion(request(HttpVersion.HTTP_1_0, HttpMethod.POST), false))
        .isEqualTo(HttpVersion.HTTP_1_0);
    assertThat(RequestDecoder.answerVersion(request(HttpVersion.HTTP_1_0, HttpMethod.POST), true))
        .as("HTTP/2 answers are built as 1.1")
        .isEqualTo(HttpVersion.HTTP_1_1);
    assertThat(RequestDecoder.answerVersion(null, false)).isEqualTo(HttpVersion.HTTP_1_1);
  }
}
