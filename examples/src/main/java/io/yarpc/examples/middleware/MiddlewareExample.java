package io.yarpc.examples.middleware;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.middleware.Middleware;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpTransport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Middleware on both sides of a call. One {@link Middleware} type wraps inbound handlers and outbound
 * calls alike: it gets the request and the {@code next} step, and returns the future response.
 *
 * <ul>
 *   <li>{@link #logging}: logs each call's procedure, outcome and latency (used inbound and outbound);
 *   <li>{@link #requireToken}: inbound, refuses calls without the right {@code authorization} header
 *       with {@code unauthenticated};
 *   <li>{@link #attachToken}: outbound, adds that header to every call.
 * </ul>
 *
 * The calls go over HTTP, which carries every error code. (TChannel, like yarpc-go's, sends an error
 * that is not an application error as an error frame, which folds codes such as {@code unauthenticated}
 * into {@code internal}.)
 *
 * <p>Run: {@code java -cp examples/target/yarpc-examples.jar io.yarpc.examples.middleware.MiddlewareExample}
 */
public final class MiddlewareExample {
  private MiddlewareExample() {}

  /** Logs every call that passes through, with its outcome and latency, into {@code log}. */
  public static Middleware<Request, Response> logging(String side, List<String> log) {
    return (request, next) -> {
      long start = System.nanoTime();
      RequestMeta meta = request.meta(); // read before next: the request (and its body) moves on
      return next.handle(request)
          .whenComplete(
              (response, error) ->
                  log.add(
                      String.format(
                          "[%s] %s -> %s::%s: %s (%.1f ms)",
                          side,
                          meta.caller(),
                          meta.service(),
                          meta.procedure(),
                          error == null ? "ok" : YarpcException.from(error).code(),
                          (System.nanoTime() - start) / 1e6)));
    };
  }

  /** Inbound: calls must carry {@code authorization: Bearer <token>}, else {@code unauthenticated}. */
  public static Middleware<Request, Response> requireToken(String token) {
    return (request, next) -> {
      if (!("Bearer " + token).equals(request.headers().get("authorization"))) {
        request.body().release(); // the request stops here, so its body is ours to release
        return CompletableFuture.failedFuture(
            YarpcException.of(
                Code.UNAUTHENTICATED,
                "procedure \"%s\" needs a valid authorization header",
                request.procedure()));
      }
      return next.handle(request);
    };
  }

  /** Outbound: adds {@code authorization: Bearer <token>} to every call. */
  public static Middleware<Request, Response> attachToken(String token) {
    return (request, next) -> {
      RequestMeta meta = request.meta();
      return next.handle(
          request.withMeta(
              meta.toBuilder()
                  .headers(
                      meta.headers().toBuilder().add("authorization", "Bearer " + token).build())
                  .build()));
    };
  }

  /** Starts the service, calls it with and without a token, prints the log. */
  public static void main(String[] args) {
    run().forEach(System.out::println);
  }

  /** The example; returns the log lines (for tests). */
  public static List<String> run() {
    List<String> log = java.util.Collections.synchronizedList(new ArrayList<>());
    HttpTransport serverTransport = HttpTransport.create();
    HttpInbound inbound = serverTransport.inbound();
    Dispatcher server =
        Dispatcher.builder("vault")
            .inbound(inbound)
            .unaryInboundMiddleware(
                logging("server", log), requireToken("s3cret")) // first is outermost
            .build();
    server.register(Raw.procedure("open", body -> "the vault is open".getBytes(UTF_8)));
    server.start();

    HttpTransport clientTransport = HttpTransport.create();
    Dispatcher withToken =
        Dispatcher.builder("vault-client")
            .outbound("vault", Outbounds.unary(clientTransport.singleOutbound(inbound.hostPort())))
            .unaryOutboundMiddleware(logging("client", log), attachToken("s3cret"))
            .build();
    HttpTransport anonymousTransport = HttpTransport.create();
    Dispatcher anonymous =
        Dispatcher.builder("stranger")
            .outbound(
                "vault", Outbounds.unary(anonymousTransport.singleOutbound(inbound.hostPort())))
            .unaryOutboundMiddleware(logging("stranger", log))
            .build();
    withToken.start();
    anonymous.start();
    try {
      CallOptions options = CallOptions.timeout(Duration.ofSeconds(1));
      byte[] opened =
          RawClient.of(withToken.clientConfig("vault")).call("open", new byte[0], options).join();
      log.add("with a token:    " + new String(opened, UTF_8));
      try {
        RawClient.of(anonymous.clientConfig("vault")).call("open", new byte[0], options).join();
      } catch (CompletionException e) {
        YarpcException error = YarpcException.from(e);
        log.add("without a token: " + error.code() + ": " + error.getMessage());
      }
    } finally {
      anonymous.stop();
      withToken.stop();
      server.stop();
    }
    return List.copyOf(log);
  }
}
