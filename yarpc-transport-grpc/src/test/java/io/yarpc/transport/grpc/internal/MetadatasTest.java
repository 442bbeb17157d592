package io.yarpc.transport.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.grpc.Metadata;
import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Headers;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import org.junit.jupiter.api.Test;

/** Request and response metadata on the wire (docs/spec/wire-grpc.md §4.2, §4.4). */
class MetadatasTest {
  private static Metadata.Key<String> key(String name) {
    return Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
  }

  @Test
  void requestMetadataCarriesEveryFieldAndSkipsEmptyValues() {
    RequestMeta meta =
        RequestMeta.builder()
            .caller("c")
            .service("s")
            .procedure("p")
            .encoding("json")
            .shardKey("sk")
            .routingKey("rk")
            .routingDelegate("rd")
            .callerProcedure("cp")
            .headers(Headers.of("X-App", "V", "empty", "", "x-uber-rpc-routing-zone", "z1"))
            .build();
    Metadata md = Metadatas.requestMetadata(meta);
    assertThat(md.get(key("rpc-caller"))).isEqualTo("c");
    assertThat(md.get(key("rpc-service"))).isEqualTo("s");
    assertThat(md.get(key("rpc-encoding"))).isEqualTo("json");
    assertThat(md.get(key("rpc-shard-key"))).isEqualTo("sk");
    assertThat(md.get(key("rpc-routing-key"))).isEqualTo("rk");
    assertThat(md.get(key("rpc-routing-delegate"))).isEqualTo("rd");
    assertThat(md.get(key("rpc-caller-procedure"))).isEqualTo("cp");
    assertThat(md.get(key("x-app"))).isEqualTo("V");
    assertThat(md.containsKey(key("empty"))).isFalse();
    assertThat(md.get(key("x-uber-rpc-routing-zone")))
        .as("cross-zone keys are not reserved")
        .isEqualTo("z1");
    assertThat(md.containsKey(key("rpc-procedure"))).isFalse();
  }

  @Test
  void propagationHeadersGoAsMetadataAndWinOverApplicationHeaders() {
    RequestMeta meta =
        RequestMeta.builder()
            .caller("c")
            .service("s")
            .procedure("p")
            .encoding("raw")
            .headers(Headers.of("traceparent", "from the application", "x-app", "v"))
            .propagationHeaders(
                Headers.of(
                    "traceparent",
                    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                    "Uber-Trace-Id",
                    "4bf92f3577b34da6a3ce929d0e0e4736:00f067aa0ba902b7:0:1",
                    "rpc-caller",
                    "not written",
                    "grpc-timeout",
                    "not written",
                    "bad key",
                    "skipped",
                    "uberctx-k",
                    "not ascii: \u00e9"))
            .build();
    Metadata md = Metadatas.requestMetadata(meta);
    assertThat(md.getAll(key("traceparent")))
        .containsExactly("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    assertThat(md.get(key("uber-trace-id")))
        .isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736:00f067aa0ba902b7:0:1");
    assertThat(md.get(key("rpc-caller"))).isEqualTo("c");
    assertThat(md.containsKey(key("grpc-timeout"))).isFalse();
    assertThat(md.containsKey(key("uberctx-k"))).as("a value gRPC cannot carry").isFalse();
    assertThat(md.get(key("x-app"))).isEqualTo("v");
  }

  @Test
  void inboundPropagationKeysAreNotApplicationHeaders() {
    Metadata md = new Metadata();
    md.put(key("rpc-caller"), "c");
    md.put(key("traceparent"), "tp");
    md.put(key("tracestate"), "ts");
    md.put(key("uber-trace-id"), "u");
    md.put(key("uberctx-tenant"), "t1");
    md.put(key("x-b3-traceid"), "b3");
    md.put(key("x-app"), "v");
    RequestMeta meta = Metadatas.toRequestMeta(md, "proc", null, "svc");
    assertThat(meta.headers().asMap()).containsOnlyKeys("x-app");
    assertThat(meta.propagationHeaders().asMap())
        .containsOnlyKeys(
            "traceparent", "tracestate", "uber-trace-id", "uberctx-tenant", "x-b3-traceid")
        .containsEntry("traceparent", "tp");
  }

  @Test
  void inboundMetadataBecomesRequestMeta() {
    Metadata md = new Metadata();
    md.put(key("rpc-caller"), "c");
    md.put(key("rpc-service"), "s");
    md.put(key("rpc-encoding"), "raw");
    md.put(key("rpc-routing-delegate"), "rd");
    md.put(key("content-type"), "application/grpc+json");
    md.put(key("user-agent"), "grpc-go/1.0");
    md.put(key("grpc-accept-encoding"), "gzip");
    md.put(key("te"), "trailers");
    md.put(key("x-uber-rpc-routing-region"), "r");
    md.put(key("Rpc-Procedure"), "survives as an application header");
    md.put(key("x-app"), "v");
    RequestMeta meta = Metadatas.toRequestMeta(md, "proc", null, "svc");
    assertThat(meta.caller()).isEqualTo("c");
    assertThat(meta.service()).isEqualTo("s");
    assertThat(meta.encoding()).as("rpc-encoding wins over content-type").isEqualTo("raw");
    assertThat(meta.routingDelegate()).isEqualTo("rd");
    assertThat(meta.procedure()).isEqualTo("proc");
    assertThat(meta.transport()).isEqualTo("grpc");
    assertThat(meta.headers().asMap())
        .containsOnlyKeys("x-app", "rpc-procedure")
        .containsEntry("x-app", "v");
  }

  @Test
  void encodingFromContentTypeWhenAbsent() {
    for (String[] c :
        new String[][] {
          {"application/grpc+proto", "proto"},
          {"application/grpc;json", "json"},
          {"application/grpc", "proto"},
          {"application/grpcx", ""},
          {"text/plain", ""}
        }) {
      Metadata md = new Metadata();
      md.put(key("content-type"), c[0]);
      assertThat(Metadatas.toRequestMeta(md, "p", null, "svc").encoding()).as(c[0]).isEqualTo(c[1]);
    }
  }

  @Test
  void plainClientGetsDefaultServiceAndCallerFromItsUserAgent() {
    String[][] cases = {
      {"grpc-java-netty/1.85.1", "grpc-java-netty"},
      {"grpc-python/1.51.1 grpc-c/29.0.0 (linux; chttp2)", "grpc-python"},
      {"curl/8.5", "curl"},
      {"/1.0", "unknown"},
      {" x", "unknown"},
      {null, "unknown"}
    };
    for (String[] c : cases) {
      Metadata md = new Metadata();
      md.put(key("content-type"), "application/grpc");
      if (c[0] != null) {
        md.put(key("user-agent"), c[0]);
      }
      RequestMeta meta = Metadatas.toRequestMeta(md, "p", null, "dflt");
      assertThat(meta.caller()).as("%s", c[0]).isEqualTo(c[1]);
      assertThat(meta.service()).isEqualTo("dflt");
      assertThat(meta.encoding()).isEqualTo("proto");
      assertThat(meta.headers().asMap()).as("user-agent is not an application header").isEmpty();
    }
    Metadata yarpc = new Metadata();
    yarpc.put(key("rpc-caller"), "c");
    yarpc.put(key("rpc-service"), "s");
    yarpc.put(key("user-agent"), "yarpc-java");
    RequestMeta meta = Metadatas.toRequestMeta(yarpc, "p", null, "dflt");
    assertThat(meta.caller()).as("a YARPC peer's names win").isEqualTo("c");
    assertThat(meta.service()).isEqualTo("s");
  }

  @Test
  void repeatedKeyIsInvalidArgument() {
    Metadata md = new Metadata();
    md.put(key("x-a"), "1");
    md.put(key("x-a"), "2");
    YarpcException e =
        catchThrowableOfType(
            YarpcException.class, () -> Metadatas.toRequestMeta(md, "p", null, "svc"));
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage()).isEqualTo("header has more than one value: x-a:[1 2]");
  }

  @Test
  void repeatedKeyIsFoundWhetherKnownIgnoredOrAmongManyKeys() {
    Metadata known = new Metadata();
    known.put(key("rpc-caller"), "a");
    known.put(key("rpc-caller"), "b");
    assertThat(
            catchThrowableOfType(
                    YarpcException.class, () -> Metadatas.toRequestMeta(known, "p", null, "svc"))
                .getMessage())
        .isEqualTo("header has more than one value: rpc-caller:[a b]");

    Metadata ignored = new Metadata();
    ignored.put(key("te"), "trailers");
    ignored.put(key("te"), "gzip");
    assertThat(
            catchThrowableOfType(
                    YarpcException.class, () -> Metadatas.toRequestMeta(ignored, "p", null, "svc"))
                .getMessage())
        .isEqualTo("header has more than one value: te:[trailers gzip]");

    Metadata many = new Metadata();
    for (int i = 0; i < 12; i++) {
      many.put(key("x-h" + i), "v" + i);
    }
    many.put(key("x-h3"), "again");
    assertThat(
            catchThrowableOfType(
                    YarpcException.class, () -> Metadatas.toRequestMeta(many, "p", null, "svc"))
                .getMessage())
        .isEqualTo("header has more than one value: x-h3:[v3 again]");
  }

  @Test
  void responseHeadersThatHttp2OrGrpcOwnAreDropped() {
    // what an echoing handler returns when a client sent content-length (curl, nghttp2): as a
    // trailer
    // it made nghttp2 reset the stream
    Headers h =
        Headers.of(
            "content-length", "7",
            "connection", "keep-alive",
            "transfer-encoding", "chunked",
            "te", "trailers",
            "grpc-status", "5",
            "content-type", "text/plain",
            "x-kept", "yes");
    Metadata md = new Metadata();
    Metadatas.putResponseHeaders(md, h);
    assertThat(md.keys()).containsExactly("x-kept");
    assertThat(md.get(key("x-kept"))).isEqualTo("yes");
  }

  @Test
  void repeatedKeyAmongManyIsInvalidArgument() {
    Metadata md = new Metadata();
    for (int i = 0; i < 20; i++) {
      md.put(key("x-" + i), "v");
    }
    md.put(key("x-7"), "again");
    YarpcException e =
        catchThrowableOfType(
            YarpcException.class, () -> Metadatas.toRequestMeta(md, "p", null, "svc"));
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
  }

  @Test
  void receivedUtf8AndBinaryValuesSurvive() {
    Metadata md = new Metadata();
    // a peer that sends UTF-8 bytes anyway (gRPC allows only printable ASCII) is read faithfully
    md.put(
        io.grpc.InternalMetadata.keyOf(
            "x-text",
            new io.grpc.InternalMetadata.TrustedAsciiMarshaller<String>() {
              @Override
              public byte[] toAsciiString(String value) {
                return value.getBytes(java.nio.charset.StandardCharsets.UTF_8);
              }

              @Override
              public String parseAsciiString(byte[] serialized) {
                return new String(serialized, java.nio.charset.StandardCharsets.UTF_8);
              }
            }),
        "héllo ✓");
    md.put(
        Metadata.Key.of("x-raw-bin", Metadata.BINARY_BYTE_MARSHALLER),
        new byte[] {(byte) 0xff, 0, (byte) 0x80});
    RequestMeta meta = Metadatas.toRequestMeta(md, "p", null, "svc");
    assertThat(meta.headers().get("x-text")).isEqualTo("héllo ✓");
    assertThat(meta.headers().get("x-raw-bin"))
        .as("binary values are base64, unpadded, as on gRPC's wire")
        .isEqualTo("/wCA");
  }

  @Test
  void binaryHeadersSentAreBase64AndCarriedAsBytes() {
    Metadata md = new Metadata();
    Metadatas.putHeader(md, "x-padded-bin", "/wCAAQ==");
    Metadatas.putHeader(md, "x-unpadded-bin", "/wCAAQ");
    Metadata.Key<byte[]> padded = Metadata.Key.of("x-padded-bin", Metadata.BINARY_BYTE_MARSHALLER);
    Metadata.Key<byte[]> unpadded =
        Metadata.Key.of("x-unpadded-bin", Metadata.BINARY_BYTE_MARSHALLER);
    assertThat(md.get(padded)).containsExactly(0xff, 0, 0x80, 1);
    assertThat(md.get(unpadded)).containsExactly(0xff, 0, 0x80, 1);
    YarpcException e =
        catchThrowableOfType(
            YarpcException.class,
            () -> Metadatas.putHeader(new Metadata(), "x-text-bin", "not base64!"));
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage())
        .isEqualTo(
            "grpc binary header \"x-text-bin\" must hold base64, as gRPC writes binary values");
  }

  @Test
  void valuesSentMustBePrintableAscii() {
    RequestMeta meta = RequestMeta.builder().headers(Headers.of("x-text", "héllo")).build();
    YarpcException e =
        catchThrowableOfType(YarpcException.class, () -> Metadatas.requestMetadata(meta));
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage())
        .isEqualTo(
            "grpc header value for key \"x-text\" contains characters other than printable ASCII");
    RequestMeta tab = RequestMeta.builder().caller("a\tb").build();
    assertThat(
            catchThrowableOfType(YarpcException.class, () -> Metadatas.requestMetadata(tab)).code())
        .isEqualTo(Code.INVALID_ARGUMENT);
    Metadata trailers = new Metadata();
    Metadatas.putResponse(
        trailers,
        Response.builder()
            .headers(Headers.of("x-text", "héllo", "x-ok", "ok"))
            .applicationError(new ApplicationErrorMeta(null, "Ünknown", "dëtails"))
            .body(Body.empty())
            .build(),
        false);
    assertThat(trailers.containsKey(key("x-text")))
        .as("dropped: a response cannot report it")
        .isFalse();
    assertThat(trailers.get(key("x-ok"))).isEqualTo("ok");
    // free text of our own keys is percent-encoded, as grpc-message is
    assertThat(trailers.get(key("rpc-application-error-name"))).isEqualTo("%C3%9Cnknown");
    assertThat(trailers.get(key("rpc-application-error-details"))).isEqualTo("d%C3%ABtails");
    assertThat(Metadatas.applicationErrorMeta(trailers))
        .isEqualTo(new ApplicationErrorMeta(null, "Ünknown", "dëtails"));
  }

  @Test
  void applicationErrorTextFromAPeerThatDoesNotEncode() {
    // yarpc-go writes the text's bytes as they are; a stray % that is not an escape stays
    Metadata trailers = new Metadata();
    Metadatas.putHeader(trailers, "rpc-application-error", "error");
    trailers.put(
        io.grpc.InternalMetadata.keyOf(
            "rpc-application-error-name",
            new io.grpc.InternalMetadata.TrustedAsciiMarshaller<String>() {
              @Override
              public byte[] toAsciiString(String value) {
                return value.getBytes(java.nio.charset.StandardCharsets.UTF_8);
              }

              @Override
              public String parseAsciiString(byte[] serialized) {
                return new String(serialized, java.nio.charset.StandardCharsets.UTF_8);
              }
            }),
        "Ünknown 100%");
    assertThat(Metadatas.applicationErrorMeta(trailers).name()).isEqualTo("Ünknown 100%");
  }

  @Test
  void invalidHeaderNameIsInvalidArgument() {
    RequestMeta meta = RequestMeta.builder().headers(Headers.of("bad name", "v")).build();
    YarpcException e =
        catchThrowableOfType(YarpcException.class, () -> Metadatas.requestMetadata(meta));
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage()).startsWith("invalid header name \"bad name\"");
  }

  @Test
  void responseTrailersCarryHeadersAndApplicationError() {
    Metadata trailers = new Metadata();
    String longDetails = "d".repeat(300);
    Metadatas.putResponse(
        trailers,
        Response.builder()
            .headers(Headers.of("x-a", "1", "rpc-sneaky", "dropped"))
            .applicationError(new ApplicationErrorMeta(Code.NOT_FOUND, "Missing", longDetails))
            .body(Body.empty())
            .build(),
        false);
    assertThat(trailers.get(key("x-a"))).isEqualTo("1");
    assertThat(trailers.containsKey(key("rpc-sneaky"))).isFalse();
    assertThat(trailers.get(key("rpc-application-error"))).isEqualTo("error");
    assertThat(trailers.get(key("rpc-application-error-name"))).isEqualTo("Missing");
    assertThat(trailers.get(key("rpc-application-error-details"))).hasSize(256);
    assertThat(Metadatas.isApplicationError(trailers)).isTrue();
    assertThat(Metadatas.applicationErrorMeta(trailers))
        .isEqualTo(
            new ApplicationErrorMeta(
                null,
                "Missing",
                "d".repeat(244) + " (truncated)")); // core's rule: 256 bytes in all
    assertThat(Metadatas.responseHeaders(null, trailers).asMap()).containsOnlyKeys("x-a");
  }

  @Test
  void responseHeadersMergeHeadersAndTrailersWithoutGrpcKeys() {
    Metadata headers = new Metadata();
    headers.put(key("x-h"), "from-headers");
    headers.put(key("x-both"), "headers");
    headers.put(key("content-type"), "application/grpc");
    Metadata trailers = new Metadata();
    trailers.put(key("x-both"), "trailers");
    trailers.put(key("rpc-service"), "s");
    trailers.put(
        Metadata.Key.of("grpc-status-details-bin", Metadata.BINARY_BYTE_MARSHALLER),
        new byte[] {1});
    Headers h = Metadatas.responseHeaders(headers, trailers);
    assertThat(h.asMap()).containsOnlyKeys("x-h", "x-both").containsEntry("x-both", "trailers");
  }

  @Test
  void aYarpcPeerGetsTheInitialHeadersInTheTrailersToo() {
    Response r =
        Response.builder()
            .initialHeaders(Headers.of("x-early", "1", "x-both", "initial"))
            .headers(Headers.of("x-both", "trailing", "x-late", "2"))
            .body(Body.empty())
            .build();
    Metadata forYarpc = new Metadata();
    Metadatas.putResponse(forYarpc, r, true);
    assertThat(forYarpc.get(key("x-early"))).as("yarpc-go reads only the trailers").isEqualTo("1");
    assertThat(forYarpc.get(key("x-late"))).isEqualTo("2");
    assertThat(forYarpc.getAll(key("x-both")))
        .as("the trailer's own value, once")
        .containsExactly("trailing");
    Metadata forPlain = new Metadata();
    Metadatas.putResponse(forPlain, r, false);
    assertThat(forPlain.containsKey(key("x-early")))
        .as("a plain client reads the initial metadata")
        .isFalse();
  }

  @Test
  void printableAsciiTextGoesOutAsItIsAsYarpcGoWritesIt() {
    assertThat(Metadatas.encodeText("disk 95% full ~ok")).isEqualTo("disk 95% full ~ok");
    assertThat(Metadatas.decodeText("disk 95% full ~ok")).isEqualTo("disk 95% full ~ok");
    assertThat(Metadatas.encodeText("100% é"))
        .as("text that needs it is encoded, % too")
        .isEqualTo("100%25 %C3%A9");
    assertThat(Metadatas.decodeText("100%25 %C3%A9")).isEqualTo("100% é");
  }
}
