package io.yarpc.examples.tls;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.middleware.Middleware;
import io.yarpc.tls.ClientAuth;
import io.yarpc.tls.TlsConfig;
import io.yarpc.transport.ConnectionInfo;
import io.yarpc.transport.Request;
import io.yarpc.transport.Response;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcTransport;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Mutual TLS with authorization by certificate. The server asks every client for a certificate its CA
 * signed ({@link ClientAuth#OPTIONAL}: a client without one still connects, and the middleware answers it);
 * {@link #authorize} lets a call through only when the caller's verified certificate carries a URI name
 * (a SPIFFE ID) that the procedure's policy allows:
 *
 * <ul>
 *   <li>no certificate: {@code unauthenticated};
 *   <li>a certificate the policy does not list for the procedure: {@code permission-denied}.
 * </ul>
 *
 * The certificates come from the README's {@code openssl} lines (section "TLS"): {@code ca.pem}, {@code
 * server.pem}/{@code server.key} and {@code client.pem}/{@code client.key}, whose SAN is {@code
 * URI:spiffe://example.test/client}.
 *
 * <p>Run: {@code java -cp examples/target/yarpc-examples.jar io.yarpc.examples.tls.MutualTlsExample DIR}
 */
public final class MutualTlsExample {
  /** The identity the README's client certificate carries. */
  public static final String CLIENT_ID = "spiffe://example.test/client";

  private MutualTlsExample() {}

  /**
   * Inbound authorization: {@code policy} maps a procedure to the SPIFFE IDs that may call it (a procedure
   * it does not name may be called by no one).
   */
  public static Middleware<Request, Response> authorize(Map<String, Set<String>> policy) {
    return (request, next) -> {
      ConnectionInfo connection = request.meta().connection();
      if (connection == null || !connection.hasPeerCertificate()) {
        request.body().release(); // the request stops here, so its body is ours to release
        return CompletableFuture.failedFuture(
            YarpcException.of(Code.UNAUTHENTICATED, "a client certificate is required"));
      }
      Set<String> allowed = policy.getOrDefault(request.procedure(), Set.of());
      for (String name : connection.peerSubjectAlternativeNames()) {
        if (name.startsWith("URI:") && allowed.contains(name.substring("URI:".length()))) {
          return next.handle(request);
        }
      }
      request.body().release();
      return CompletableFuture.failedFuture(
          YarpcException.of(
              Code.PERMISSION_DENIED,
              "%s may not call \"%s\"",
              connection.peerSubject(),
              request.procedure()));
    };
  }

  /** Runs the example with the certificates in {@code args[0]} and prints what each call got. */
  public static void main(String[] args) {
    if (args.length != 1) {
      System.err.println(
          "usage: MutualTlsExample DIR (with ca.pem, server.pem/.key, client.pem/.key)");
      System.exit(2);
    }
    run(Path.of(args[0])).forEach(System.out::println);
  }

  /** The example; returns one line per call (for tests). */
  public static List<String> run(Path certs) {
    TlsConfig serverTls =
        TlsConfig.builder()
            .keyCertChain(certs.resolve("server.pem"), certs.resolve("server.key"))
            .trustedCertificates(certs.resolve("ca.pem"))
            .clientAuth(ClientAuth.OPTIONAL)
            .build();
    GrpcTransport serverTransport = GrpcTransport.create();
    GrpcInbound inbound =
        serverTransport
            .inboundBuilder(new InetSocketAddress("127.0.0.1", 0))
            .tls(serverTls)
            .build();
    Dispatcher server =
        Dispatcher.builder("vault")
            .inbound(inbound)
            .unaryInboundMiddleware(authorize(Map.of("open", Set.of(CLIENT_ID))))
            .build();
    server.register(Raw.procedure("open", body -> "the vault is open".getBytes(UTF_8)));
    server.register(Raw.procedure("empty", body -> "the vault is empty".getBytes(UTF_8)));
    server.start();

    String address = "127.0.0.1:" + inbound.port();
    TlsConfig withCertificate =
        TlsConfig.builder()
            .trustedCertificates(certs.resolve("ca.pem"))
            .keyCertChain(certs.resolve("client.pem"), certs.resolve("client.key"))
            .build();
    TlsConfig withoutCertificate =
        TlsConfig.builder().trustedCertificates(certs.resolve("ca.pem")).build();
    List<String> lines = new ArrayList<>();
    try {
      lines.add("client certificate, open:  " + call(withCertificate, address, "open"));
      lines.add("client certificate, empty: " + call(withCertificate, address, "empty"));
      lines.add("no certificate, open:      " + call(withoutCertificate, address, "open"));
    } finally {
      server.stop();
    }
    return lines;
  }

  private static String call(TlsConfig tls, String address, String procedure) {
    GrpcTransport transport = GrpcTransport.builder().tls(tls).build();
    Dispatcher client =
        Dispatcher.builder("vault-client")
            .outbound("vault", Outbounds.unary(transport.singleOutbound(address)))
            .build();
    client.start();
    try {
      byte[] answer =
          RawClient.of(client.clientConfig("vault"))
              .call(procedure, new byte[0], CallOptions.timeout(Duration.ofSeconds(5)))
              .join();
      return new String(answer, UTF_8);
    } catch (CompletionException e) {
      YarpcException error = YarpcException.from(e);
      return error.code() + ": " + error.getMessage();
    } finally {
      client.stop();
    }
  }
}
