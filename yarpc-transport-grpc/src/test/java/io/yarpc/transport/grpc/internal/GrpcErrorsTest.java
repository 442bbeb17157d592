package io.yarpc.transport.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Metadata;
import io.grpc.Status;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import org.junit.jupiter.api.Test;

/** YARPC errors to gRPC statuses and back (docs/spec/wire-grpc.md §4.4). */
class GrpcErrorsTest {
  private static final Metadata.Key<String> NAME =
      Metadata.Key.of("rpc-error-name", Metadata.ASCII_STRING_MARSHALLER);

  @Test
  void everyCodeMapsByNumberBothWays() {
    for (Code code : Code.values()) {
      if (code == Code.OK) {
        continue;
      }
      Metadata trailers = new Metadata();
      Status status = GrpcErrors.toStatus(YarpcException.of(code, "m"), trailers, true);
      assertThat(status.getCode().value()).isEqualTo(code.value());
      assertThat(GrpcErrors.fromStatus(status, trailers)).isEqualTo(YarpcException.of(code, "m"));
    }
  }

  @Test
  void nameIsPrefixedAndSentAsTrailer() {
    Metadata trailers = new Metadata();
    Status status =
        GrpcErrors.toStatus(YarpcException.of(Code.ABORTED, "msg").withName("N"), trailers, true);
    assertThat(status.getDescription()).isEqualTo("N: msg");
    assertThat(trailers.get(NAME)).isEqualTo("N");
    YarpcException back = GrpcErrors.fromStatus(status, trailers);
    assertThat(back.name()).isEqualTo("N");
    assertThat(back.getMessage()).isEqualTo("msg");
  }

  @Test
  void nameAloneWhenMessageIsEmpty() {
    Metadata trailers = new Metadata();
    Status status =
        GrpcErrors.toStatus(YarpcException.of(Code.ABORTED, "").withName("N"), trailers, true);
    assertThat(status.getDescription()).isEqualTo("N");
    YarpcException back = GrpcErrors.fromStatus(status, trailers);
    assertThat(back.getMessage()).isEmpty();
    assertThat(back.name()).isEqualTo("N");
  }

  @Test
  void streamsSendNoNameTrailer() {
    Metadata trailers = new Metadata();
    Status status =
        GrpcErrors.toStatus(YarpcException.of(Code.ABORTED, "msg").withName("N"), trailers, false);
    assertThat(status.getDescription()).isEqualTo("N: msg");
    assertThat(trailers.containsKey(NAME)).isFalse();
  }

  @Test
  void statusDetailsTravelVerbatimAndSetTheStatus() {
    byte[] details =
        com.google.rpc.Status.newBuilder()
            .setCode(5)
            .setMessage("proto message")
            .addDetails(
                com.google.protobuf.Any.pack(
                    com.google.rpc.ErrorInfo.newBuilder().setReason("R").build()))
            .build()
            .toByteArray();
    Metadata trailers = new Metadata();
    Status status =
        GrpcErrors.toStatus(
            YarpcException.of(Code.INTERNAL, "ignored").withDetails(details), trailers, true);
    assertThat(status.getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(status.getDescription()).isEqualTo("proto message");
    assertThat(trailers.get(Metadatas.STATUS_DETAILS_KEY)).isEqualTo(details);
    YarpcException back = GrpcErrors.fromStatus(status, trailers);
    assertThat(back.code()).isEqualTo(Code.NOT_FOUND);
    assertThat(back.details()).isEqualTo(details);
  }

  @Test
  void detailsThatAreNotAStatusFallBackToCodeAndMessage() {
    Metadata trailers = new Metadata();
    Status status =
        GrpcErrors.toStatus(
            YarpcException.of(Code.DATA_LOSS, "m").withDetails(new byte[] {(byte) 0xff, 1, 2}),
            trailers,
            true);
    assertThat(status.getCode()).isEqualTo(Status.Code.DATA_LOSS);
    assertThat(trailers.containsKey(Metadatas.STATUS_DETAILS_KEY)).isFalse();
  }

  @Test
  void statusDetailsWithoutDetailEntriesAreNotKept() {
    Metadata trailers = new Metadata();
    trailers.put(
        Metadatas.STATUS_DETAILS_KEY,
        com.google.rpc.Status.newBuilder().setCode(3).setMessage("m").build().toByteArray());
    assertThat(
            GrpcErrors.fromStatus(Status.INVALID_ARGUMENT.withDescription("m"), trailers).details())
        .isNull();
  }

  @Test
  void localFailuresKeepTheirCode() {
    YarpcException e =
        GrpcErrors.fromStatus(
            Status.UNAVAILABLE.withDescription("io").withCause(new Exception()), null);
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage()).isEqualTo("io");
    assertThat(GrpcErrors.fromStatus(Status.CANCELLED, null).getMessage()).isEmpty();
  }

  @Test
  void aTlsFailureOfTheConnectionNamesThePeerAndTheReason() {
    Status failed =
        Status.UNAVAILABLE.withCause(
            new javax.net.ssl.SSLHandshakeException(
                "PKIX path building failed: unable to find valid certification path"));
    YarpcException e = GrpcErrors.fromStatus(failed, null, "db.internal:443");
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.getMessage())
        .isEqualTo(
            "TLS handshake with peer db.internal:443 failed: the certificate is not signed by a "
                + "trusted root (PKIX path building failed: unable to find valid certification path)");
    assertThat(e.getCause()).isSameAs(failed.getCause());

    // other connection failures, and TLS causes of other codes, are mapped as before
    Status refused = Status.UNAVAILABLE.withCause(new java.io.IOException("Connection refused"));
    assertThat(GrpcErrors.fromStatus(refused, null, "db.internal:443").getMessage())
        .isEqualTo("Connection refused");
    Status internal =
        Status.INTERNAL.withDescription("x").withCause(new javax.net.ssl.SSLException("y"));
    assertThat(GrpcErrors.fromStatus(internal, null, "db.internal:443").code())
        .isEqualTo(Code.INTERNAL);
  }
}
