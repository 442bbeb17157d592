package io.yarpc.benchmarks.load;

import io.grpc.netty.GrpcSslContexts;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.yarpc.testing.TestCertificates;
import io.yarpc.tls.ClientAuth;
import io.yarpc.tls.TlsConfig;
import io.yarpc.tls.TlsProvider;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import javax.net.ssl.SSLException;

/**
 * TLS for the load harness ({@code --tls jdk|openssl}): a throwaway PKI made once per run with {@link
 * TestCertificates} (server-only TLS: the client verifies the server's certificate for {@code 127.0.0.1}),
 * and the provider every system uses, YARPC's and plain grpc-java's alike.
 */
final class BenchTls {
  private final TlsProvider provider;
  private final TestCertificates pki;

  private BenchTls(TlsProvider provider, TestCertificates pki) {
    this.provider = provider;
    this.pki = pki;
  }

  /** TLS with {@code provider} ({@code JDK} or {@code OPENSSL}). */
  static BenchTls with(TlsProvider provider) {
    try {
      Path dir = Files.createTempDirectory("yarpc-bench-pki");
      dir.toFile().deleteOnExit();
      return new BenchTls(provider, TestCertificates.generate(dir));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The provider's name as options and reports spell it. */
  String name() {
    return provider.name().toLowerCase(java.util.Locale.ROOT);
  }

  /** YARPC's server side. */
  TlsConfig server() {
    return pki.serverConfig(ClientAuth.NONE).provider(provider).build();
  }

  /** YARPC's client side. */
  TlsConfig client() {
    return pki.clientConfig().provider(provider).build();
  }

  /** Plain grpc-java's server context. */
  SslContext grpcServer() throws SSLException {
    return GrpcSslContexts.configure(
            SslContextBuilder.forServer(
                pki.server().certificate().toFile(), pki.server().key().toFile()),
            nettyProvider())
        .build();
  }

  /** Plain grpc-java's client context. */
  SslContext grpcClient() throws SSLException {
    return GrpcSslContexts.configure(
            SslContextBuilder.forClient().trustManager(pki.caCertificate().toFile()),
            nettyProvider())
        .build();
  }

  private SslProvider nettyProvider() {
    return provider == TlsProvider.OPENSSL ? SslProvider.OPENSSL : SslProvider.JDK;
  }
}
