package io.yarpc.encoding.protobuf;

import io.grpc.ForwardingServerCall;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;

/**
 * A grpc-java server interceptor of the kind services already have: it echoes the request's {@code
 * x-echo-ascii} header into the response's initial metadata, and its binary {@code x-echo-bin} header
 * into both the initial metadata and the trailers; with {@code x-compress: gzip} it asks for the response
 * to be compressed.
 */
final class MetadataEchoInterceptor implements ServerInterceptor {
  static final Metadata.Key<String> ASCII =
      Metadata.Key.of("x-echo-ascii", Metadata.ASCII_STRING_MARSHALLER);
  static final Metadata.Key<byte[]> BIN =
      Metadata.Key.of("x-echo-bin", Metadata.BINARY_BYTE_MARSHALLER);
  static final Metadata.Key<String> COMPRESS =
      Metadata.Key.of("x-compress", Metadata.ASCII_STRING_MARSHALLER);

  @Override
  public <Q, R> ServerCall.Listener<Q> interceptCall(
      ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
    String ascii = headers.get(ASCII);
    byte[] bin = headers.get(BIN);
    String compress = headers.get(COMPRESS);
    return next.startCall(
        new ForwardingServerCall.SimpleForwardingServerCall<Q, R>(call) {
          @Override
          public void sendHeaders(Metadata responseHeaders) {
            if (ascii != null) {
              responseHeaders.put(ASCII, ascii);
            }
            if (bin != null) {
              responseHeaders.put(BIN, bin);
            }
            if (compress != null) {
              setCompression(compress);
            }
            super.sendHeaders(responseHeaders);
          }

          @Override
          public void close(Status status, Metadata trailers) {
            if (bin != null) {
              trailers.put(BIN, bin);
            }
            super.close(status, trailers);
          }
        },
        headers);
  }
}
