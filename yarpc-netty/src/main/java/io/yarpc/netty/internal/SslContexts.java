package io.yarpc.netty.internal;

import io.netty.handler.codec.http2.Http2SecurityUtil;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.SupportedCipherSuiteFilter;
import io.yarpc.tls.ClientAuth;
import io.yarpc.tls.TlsConfig;
import io.yarpc.tls.TlsProvider;
import java.util.List;

/**
 * Builds Netty {@link SslContext}s from a {@link TlsConfig}: the provider it asks for, its protocols, the
 * cipher suites HTTP/2 allows when {@code h2} is among the ALPN protocols, and the client's hostname
 * verification. Stateless.
 */
public final class SslContexts {
  private SslContexts() {}

  /**
   * A server context presenting the config's certificate and offering {@code alpn} (most preferred first;
   * empty: no ALPN).
   *
   * @throws IllegalStateException naming the file or setting when the material cannot be read
   */
  public static SslContext server(TlsConfig config, List<String> alpn) {
    config.requireCertificate("a server");
    try {
      SslContextBuilder b =
          config.keyManager() != null
              ? SslContextBuilder.forServer(config.keyManager())
              : SslContextBuilder.forServer(
                  config.certificateChain().toFile(),
                  config.privateKey().toFile(),
                  config.keyPassword());
      trust(b, config);
      b.clientAuth(clientAuth(config.clientAuth()));
      return common(b, config, alpn).build();
    } catch (Exception e) {
      throw failure(config, e);
    }
  }

  /**
   * A client context trusting the config's roots, presenting its certificate when it has one, and
   * verifying the server's name when the config says so (the name comes with each engine).
   *
   * @throws IllegalStateException naming the file or setting when the material cannot be read
   */
  public static SslContext client(TlsConfig config, List<String> alpn) {
    try {
      SslContextBuilder b = SslContextBuilder.forClient();
      if (config.keyManager() != null) {
        b.keyManager(config.keyManager());
      } else if (config.certificateChain() != null) {
        b.keyManager(
            config.certificateChain().toFile(), config.privateKey().toFile(), config.keyPassword());
      }
      trust(b, config);
      // Off is "", not null: code that gets an engine whose algorithm is null turns verification on
      // (grpc-java's client TLS handler sets HTTPS then); the JDK and OpenSSL engines skip ""
      // alike.
      b.endpointIdentificationAlgorithm(config.hostnameVerification() ? "HTTPS" : "");
      return common(b, config, alpn).build();
    } catch (Exception e) {
      throw failure(config, e);
    }
  }

  /** The provider {@code config} resolves to on this machine. */
  public static SslProvider provider(TlsConfig config) {
    switch (config.provider()) {
      case JDK:
        return SslProvider.JDK;
      case OPENSSL:
        if (!OpenSsl.isAvailable()) {
          throw new IllegalStateException(
              "TLS provider OPENSSL is not available (add io.netty:netty-tcnative-boringssl-static): "
                  + OpenSsl.unavailabilityCause());
        }
        return SslProvider.OPENSSL;
      case AUTO:
      default:
        return OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
    }
  }

  /** Whether {@link TlsProvider#AUTO} picks OpenSSL here. */
  public static boolean openSslAvailable() {
    return OpenSsl.isAvailable();
  }

  private static void trust(SslContextBuilder b, TlsConfig config) {
    if (config.trustManager() != null) {
      b.trustManager(config.trustManager());
    } else if (config.trustedCertificates() != null) {
      b.trustManager(config.trustedCertificates().toFile());
    }
  }

  private static SslContextBuilder common(
      SslContextBuilder b, TlsConfig config, List<String> alpn) {
    b.sslProvider(provider(config)).protocols(config.protocols());
    if (alpn.contains("h2")) {
      b.ciphers(Http2SecurityUtil.CIPHERS, SupportedCipherSuiteFilter.INSTANCE);
    }
    if (!alpn.isEmpty()) {
      b.applicationProtocolConfig(
          new ApplicationProtocolConfig(
              ApplicationProtocolConfig.Protocol.ALPN,
              ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
              ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
              alpn));
    }
    return b;
  }

  private static io.netty.handler.ssl.ClientAuth clientAuth(ClientAuth a) {
    switch (a) {
      case REQUIRE:
        return io.netty.handler.ssl.ClientAuth.REQUIRE;
      case OPTIONAL:
        return io.netty.handler.ssl.ClientAuth.OPTIONAL;
      case NONE:
      default:
        return io.netty.handler.ssl.ClientAuth.NONE;
    }
  }

  private static IllegalStateException failure(TlsConfig config, Exception e) {
    if (e instanceof IllegalStateException && e.getMessage().startsWith("TLS provider")) {
      return (IllegalStateException) e;
    }
    return new IllegalStateException(
        "cannot build a TLS context from " + config + ": " + TlsErrors.describe(e), e);
  }
}
