package io.yarpc.encoding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Headers;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.io.IOException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class EncodingErrorsTest {
  private static final RequestMeta META =
      RequestMeta.builder()
          .caller("caller")
          .service("svc")
          .procedure("proc")
          .encoding("thrift")
          .build();

  @Test
  void expectEncodingAcceptsAnAllowedEncoding() {
    EncodingErrors.expectEncoding(META, "json", "thrift");
    EncodingErrors.expectEncoding(META, "thrift");
  }

  @Test
  void expectEncodingWithOneEncodingUsesYarpcGoMessage() {
    assertThatThrownBy(() -> EncodingErrors.expectEncoding(META, "json"))
        .isInstanceOfSatisfying(
            YarpcException.class,
            e -> {
              assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
              assertThat(e.getMessage())
                  .isEqualTo(
                      "failed to decode \"json\" request body for procedure "
                          + "\"proc\" of service \"svc\" from caller \"caller\": expected encoding \"json\" but got "
                          + "\"thrift\"");
            });
  }

  @Test
  void expectEncodingWithSeveralEncodingsUsesYarpcGoMessage() {
    assertThatThrownBy(() -> EncodingErrors.expectEncoding(META, "proto", "json"))
        .isInstanceOfSatisfying(
            YarpcException.class,
            e -> {
              assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
              assertThat(e.getMessage())
                  .isEqualTo(
                      "failed to decode [proto json] request body for procedure "
                          + "\"proc\" of service \"svc\" from caller \"caller\": expected one of encodings [proto json] "
                          + "but got \"thrift\"");
            });
  }

  @Test
  void expectEncodingNeedsAnEncoding() {
    assertThatThrownBy(() -> EncodingErrors.expectEncoding(META))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void serverSideMessages() {
    IOException cause = new IOException("bad bytes");
    YarpcException decode = EncodingErrors.requestBodyDecodeError(META, "json", cause);
    assertThat(decode.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(decode.getMessage())
        .isEqualTo(
            "failed to decode \"json\" request body for procedure \"proc\" "
                + "of service \"svc\" from caller \"caller\": bad bytes");
    assertThat(decode.getCause()).isSameAs(cause);

    YarpcException encode = EncodingErrors.responseBodyEncodeError(META, "json", cause);
    assertThat(encode.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(encode.getMessage())
        .isEqualTo(
            "failed to encode \"json\" response body for procedure "
                + "\"proc\" of service \"svc\" from caller \"caller\": bad bytes");
  }

  @Test
  void clientSideMessages() {
    YarpcException encode =
        EncodingErrors.requestBodyEncodeError(META, "json", new IllegalStateException("x"));
    assertThat(encode.code()).isEqualTo(Code.INTERNAL);
    assertThat(encode.getMessage())
        .isEqualTo(
            "failed to encode \"json\" request body for procedure \"proc\" of service \"svc\": x");

    YarpcException decode =
        EncodingErrors.responseBodyDecodeError(META, "raw", new IllegalStateException());
    assertThat(decode.code()).isEqualTo(Code.INTERNAL);
    assertThat(decode.getMessage())
        .isEqualTo(
            "failed to decode \"raw\" response body for procedure \"proc\" "
                + "of service \"svc\": java.lang.IllegalStateException");
  }

  @Test
  void quotesLikeGo() {
    RequestMeta odd = META.toBuilder().procedure("a\"b\\c\nd\u0001").build();
    YarpcException e = EncodingErrors.requestBodyDecodeError(odd, "json", new IOException("m"));
    assertThat(e.getMessage()).contains("procedure \"a\\\"b\\\\c\\nd\\x01\" of service");
  }

  @Test
  void wrapHandlerErrorKeepsYarpcExceptionsAndWrapsOthers() {
    YarpcException notFound = YarpcException.of(Code.NOT_FOUND, "nope");
    assertThat(EncodingErrors.wrapHandlerError(META, notFound)).isSameAs(notFound);
    assertThat(EncodingErrors.wrapHandlerError(META, new CompletionException(notFound)))
        .isSameAs(notFound);

    YarpcException wrapped = EncodingErrors.wrapHandlerError(META, new RuntimeException("boom"));
    assertThat(wrapped.code()).isEqualTo(Code.UNKNOWN);
    assertThat(wrapped.getMessage())
        .isEqualTo("error for service \"svc\" and procedure \"proc\": boom");

    assertThat(EncodingErrors.wrapHandlerError(META, new NullPointerException()).getMessage())
        .isEqualTo(
            "error for service \"svc\" and procedure \"proc\": java.lang.NullPointerException");
  }

  @Test
  void handlerErrorAttachesAnApplicationErrorResponse() {
    Headers headers = Headers.of("x-out", "1");
    YarpcException e =
        EncodingErrors.handlerError(META, headers, new IllegalArgumentException("boom"));
    assertThat(e.code()).isEqualTo(Code.UNKNOWN);
    assertThat(e.getMessage()).isEqualTo("error for service \"svc\" and procedure \"proc\": boom");
    Response r = e.response();
    assertThat(r).isNotNull();
    assertThat(r.isApplicationError()).isTrue();
    assertThat(r.applicationErrorMeta()).isEqualTo(new ApplicationErrorMeta(null, null, null));
    assertThat(e.redacted().getMessage())
        .isEqualTo(
            "error for service \"svc\" and procedure \"proc\": unexpected error (the server logged"
                + " it)");
    assertThat(e.redacted().response()).isSameAs(r);
    assertThat(r.headers()).isEqualTo(headers);
    assertThat(r.body().length()).isZero();
  }

  @Test
  void handlerErrorKeepsAYarpcExceptionsCodeAndName() {
    YarpcException thrown = YarpcException.of(Code.NOT_FOUND, "no key").withName("KeyMissing");
    YarpcException e = EncodingErrors.handlerError(META, Headers.empty(), thrown);
    assertThat(e).isEqualTo(thrown);
    assertThat(e.code()).isEqualTo(Code.NOT_FOUND);
    assertThat(e.response().applicationErrorMeta())
        .isEqualTo(new ApplicationErrorMeta(Code.NOT_FOUND, "KeyMissing", "no key"));

    YarpcException unnamed =
        EncodingErrors.handlerError(
            META, Headers.empty(), YarpcException.of(Code.ALREADY_EXISTS, "dup"));
    assertThat(unnamed.response().applicationErrorMeta())
        .isEqualTo(new ApplicationErrorMeta(Code.ALREADY_EXISTS, null, "dup"));
    assertThat(unnamed.redacted()).isSameAs(unnamed);
  }

  @Test
  void handlerErrorKeepsAnAttachedResponse() {
    Response own = Response.of(Body.of(new byte[] {1}));
    YarpcException thrown = YarpcException.of(Code.INTERNAL, "x").withResponse(own);
    assertThat(EncodingErrors.handlerError(META, Headers.empty(), thrown).response()).isSameAs(own);
  }

  @Test
  void applicationErrorUsesTheMetaAndReleasesTheBody() {
    CountingBody body = CountingBody.withByteAccess(new byte[] {1, 2});
    Response response =
        Response.builder()
            .body(body)
            .headers(Headers.of("a", "b"))
            .applicationError(new ApplicationErrorMeta(Code.NOT_FOUND, "Missing", "no such key"))
            .build();
    YarpcException e = EncodingErrors.applicationError(response);
    assertThat(body.isReleased()).isTrue();
    assertThat(e.code()).isEqualTo(Code.NOT_FOUND);
    assertThat(e.name()).isEqualTo("Missing");
    assertThat(e.getMessage()).isEqualTo("no such key");
    assertThat(e.response().headers().get("a")).isEqualTo("b");
    assertThat(e.response().body().length()).isZero();
    assertThat(e.response().isApplicationError()).isTrue();
  }

  @Test
  void applicationErrorWithoutMeta() {
    CountingBody body = CountingBody.withByteAccess(new byte[0]);
    YarpcException e =
        EncodingErrors.applicationError(
            Response.builder().body(body).applicationError(true).build());
    assertThat(body.isReleased()).isTrue();
    assertThat(e.code()).isEqualTo(Code.UNKNOWN);
    assertThat(e.name()).isNull();
    assertThat(e.getMessage()).isEqualTo("application error");
  }

  @Test
  void applicationErrorDetailsAreNotFormatted() {
    YarpcException e =
        EncodingErrors.applicationError(
            Response.builder()
                .applicationError(new ApplicationErrorMeta(null, null, "100% sure"))
                .build());
    assertThat(e.getMessage()).isEqualTo("100% sure");
  }

  @Test
  void clientCallErrorReleasesAnAttachedBody() {
    CountingBody body = CountingBody.withByteAccess(new byte[] {1});
    YarpcException error =
        YarpcException.of(Code.UNAVAILABLE, "down")
            .withResponse(Response.builder().body(body).headers(Headers.of("h", "v")).build());
    YarpcException e = EncodingErrors.clientCallError(new CompletionException(error));
    assertThat(body.isReleased()).isTrue();
    assertThat(e).isEqualTo(error);
    assertThat(e.response().headers().get("h")).isEqualTo("v");
    assertThat(e.response().body().isReleased()).isFalse();

    YarpcException plain = EncodingErrors.clientCallError(new IOException("io"));
    assertThat(plain.code()).isEqualTo(Code.UNKNOWN);
    assertThat(plain.response()).isNull();
  }
}
