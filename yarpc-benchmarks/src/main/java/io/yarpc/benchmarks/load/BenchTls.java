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
 * and the provider every system uses, YARPC's and plain grpc-java's alike. A server in a child JVM ({@code
 * --processes separate}) gets the same files through {@link #arguments()} and {@link #of}.
 */
final class BenchTls {
  private final TlsProvider provider;
  private final Path caCertificate;
  private final Path serverCertificate;
  private final Path serverKey;

  private BenchTls(
      TlsProvider provider, Path caCertificate, Path serverCertificate, Path serverKey) {
    this.provider = provider;
    this.caCertificate = caCertificate;
    this.serverCertificate = serverCertificate;
    this.serverKey = serverKey;
  }

  /** TLS with {@code provider} ({@code JDK} or {@code OPENSSL}) and a new PKI. */
  static BenchTls with(TlsProvider provider) {
    try {
      Path dir = Files.createTempDirectory("yarpc-bench-pki");
      dir.toFile().deleteOnExit();
      TestCertificates pki = TestCertificates.generate(dir);
      return new BenchTls(
          provider, pki.caCertificate(), pki.server().certificate(), pki.server().key());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** TLS with {@code provider} and the PKI files another process made (see {@link #arguments()}). */
  static BenchTls of(
      TlsProvider provider, Path caCertificate, Path serverCertificate, Path serverKey) {
    return new BenchTls(provider, caCertificate, serverCertificate, serverKey);
  }

  /** The provider and files, as {@link ServerProcess} takes them on its command line. */
  java.util.List<String> arguments() {
    return java.util.List.of(
        "--tls",
        name(),
        "--tls-ca",
        caCertificate.toString(),
        "--tls-cert",
        serverCertificate.toString(),
        "--tls-key",
        serverKey.toString());
  }

  /** The provider's name as options and reports spell it. */
  String name() {
    return provider.name().toLowerCase(java.util.Locale.ROOT);
  }

  /** YARPC's server side. */
  TlsConfig server() {
    return TlsConfig.builder()
        .keyCertChain(serverCertificate, serverKey)
        .trustedCertificates(caCertificate)
        .clientAuth(ClientAuth.NONE)
        .provider(provider)
        .build();
  }

  /** YARPC's client side. */
  TlsConfig client() {
    return TlsConfig.builder().trustedCertificates(caCertificate).provider(provider).build();
  }

  /** Plain grpc-java's server context. */
  SslContext grpcServer() throws SSLException {
    return GrpcSslContexts.configure(
            SslContextBuilder.forServer(serverCertificate.toFile(), serverKey.toFile()),
            nettyProvider())
        .build();
  }

  /** Plain grpc-java's client context. */
  SslContext grpcClient() throws SSLException {
    return GrpcSslContexts.configure(
            SslContextBuilder.forClient().trustManager(caCertificate.toFile()), nettyProvider())
        .build();
  }

  private SslProvider nettyProvider() {
    return provider == TlsProvider.OPENSSL ? SslProvider.OPENSSL : SslProvider.JDK;
  }
}
