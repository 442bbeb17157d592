package io.yarpc.observability.metrics;

import io.yarpc.Call;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.testing.InMemoryTransport;
import io.yarpc.transport.Body;
import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Response;
import io.yarpc.transport.ServerStream;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcOutbound;
import io.yarpc.transport.grpc.GrpcTransport;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpOutbound;
import io.yarpc.transport.http.HttpTransport;
import io.yarpc.transport.tchannel.TChannelInbound;
import io.yarpc.transport.tchannel.TChannelTransport;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

/**
 * A server dispatcher ({@value #SERVER}) and a client dispatcher ({@value #CLIENT}) talking over one real
 * transport on loopback, each configured by the test (metrics, call logs), with the procedures the
 * observability tests call. Stopping it stops both dispatchers, which stop their transports.
 */
public final class Loopback implements AutoCloseable {
  public static final String SERVER = "metrics-server";
  public static final String CLIENT = "metrics-client";

  /**
   * The server's inbounds hold no call longer than this, whatever time its caller gives it: a call to
   * {@code slow} with a longer timeout times out on the server first, so both sides see the server's
   * {@code deadline-exceeded} (when the client's deadline came first, gRPC would cancel the call and the
   * server would count a {@code cancelled} instead, a race between the two).
   */
  public static final Duration SERVER_MAX_TIMEOUT = Duration.ofSeconds(1);

  private static final DeadlinePolicy SERVER_DEADLINES =
      DeadlinePolicy.builder().maxTimeout(SERVER_MAX_TIMEOUT).build();

  /** How many times the handler of {@code slow} has run, in this JVM. */
  public static final AtomicInteger SLOW_CALLS = new AtomicInteger();

  /** The transports under test. */
  public static final List<String> TRANSPORTS = List.of("http", "grpc", "tchannel");

  public final String transport;
  public final Dispatcher server;
  public final Dispatcher client;
  private final InMemoryTransport inMemory;

  private Loopback(
      String transport, Dispatcher server, Dispatcher client, InMemoryTransport inMemory) {
    this.transport = transport;
    this.server = server;
    this.client = client;
    this.inMemory = inMemory;
  }

  /**
   * Starts both ends over {@code transport} ({@code http}, {@code grpc}, {@code tchannel}, or {@code
   * in-memory}: yarpc-testing's, which tracks every body it hands out); {@code
   * serverConfig} and {@code clientConfig} add to the dispatcher builders (install metrics, logs).
   */
  public static Loopback start(
      String transport,
      UnaryOperator<Dispatcher.Builder> serverConfig,
      UnaryOperator<Dispatcher.Builder> clientConfig) {
    Inbound inbound;
    java.util.function.Supplier<Outbounds> outbounds;
    InMemoryTransport inMemory = null;
    switch (transport) {
      case "in-memory":
        {
          InMemoryTransport t = InMemoryTransport.create();
          inMemory = t;
          inbound = t.inbound();
          outbounds = t::outbounds;
          break;
        }
      case "http":
        {
          HttpTransport serverTransport = HttpTransport.builder().eventLoopThreads(1).build();
          HttpTransport clientTransport = HttpTransport.builder().eventLoopThreads(1).build();
          HttpInbound in =
              serverTransport.inboundBuilder().deadlinePolicy(SERVER_DEADLINES).build();
          inbound = in;
          outbounds =
              () -> {
                HttpOutbound out = clientTransport.singleOutbound(in.hostPort());
                return Outbounds.builder().unary(out).oneway(out).build();
              };
          break;
        }
      case "grpc":
        {
          GrpcTransport serverTransport = GrpcTransport.create();
          GrpcTransport clientTransport = GrpcTransport.create();
          GrpcInbound in =
              serverTransport
                  .inboundBuilder(new InetSocketAddress("127.0.0.1", 0))
                  .deadlinePolicy(SERVER_DEADLINES)
                  .build();
          inbound = in;
          outbounds =
              () -> {
                GrpcOutbound out = clientTransport.singleOutbound("127.0.0.1:" + in.port());
                return Outbounds.builder().unary(out).stream(out).build();
              };
          break;
        }
      case "tchannel":
        {
          TChannelTransport serverTransport = TChannelTransport.of(SERVER);
          TChannelTransport clientTransport =
              TChannelTransport.builder().serviceName(CLIENT).build();
          TChannelInbound in =
              serverTransport.inboundBuilder().deadlinePolicy(SERVER_DEADLINES).build();
          inbound = in;
          outbounds = () -> Outbounds.unary(clientTransport.singleOutbound(in.hostPort()));
          break;
        }
      default:
        throw new IllegalArgumentException(transport);
    }
    Dispatcher server =
        serverConfig
            .apply(
                Dispatcher.builder(SERVER)
                    .inbound(inbound)
                    .shutdownGracePeriod(Duration.ofSeconds(2))
                    .logLifecycle(false))
            .build();
    server.register(procedures());
    server.start();
    Dispatcher client;
    try {
      client =
          clientConfig
              .apply(
                  Dispatcher.builder(CLIENT).outbound(SERVER, outbounds.get()).logLifecycle(false))
              .build();
      client.start();
    } catch (RuntimeException e) {
      server.stop();
      throw e;
    }
    return new Loopback(transport, server, client, inMemory);
  }

  /** Whether the transport carries oneway calls (HTTP, in-memory). */
  public boolean oneway() {
    return transport.equals("http") || inMemory != null;
  }

  /** Whether the transport carries streams (gRPC, in-memory). */
  public boolean streaming() {
    return transport.equals("grpc") || inMemory != null;
  }

  /**
   * For the in-memory transport: fails unless every body it handed out was released exactly once and
   * none was read after release. Call after {@link #close()}.
   */
  public void assertNoLeaks() {
    if (inMemory != null) {
      inMemory.assertNoLeaks();
    }
  }

  /**
   * {@code echo} answers its body; {@code bad} fails with {@code invalid-argument}, {@code broken} with
   * {@code internal}; {@code slow} answers only when its call is cancelled, with the reason (a timeout);
   * {@code oneway} takes a oneway call; {@code stream-echo} sends back every message it receives until
   * the client half-closes. For edge cases: {@code fail} fails with the code whose number is the body's
   * first byte (succeeds for {@code ok}); {@code app-error} answers a response flagged as an application
   * error named {@code KeyNotFound}, with the code whose number is the body's first byte (none when the
   * byte is -1); {@code panic} throws from the handler itself.
   */
  public static List<Procedure> procedures() {
    return List.of(
        Raw.procedure("echo", body -> body),
        Raw.procedure(
            "bad",
            body -> {
              throw YarpcException.of(Code.INVALID_ARGUMENT, "bad request body");
            }),
        Raw.procedure(
            "broken",
            body -> {
              throw YarpcException.of(Code.INTERNAL, "something broke");
            }),
        Procedure.builder("slow")
            .encoding(Raw.ENCODING)
            .unary(
                request -> {
                  SLOW_CALLS.incrementAndGet();
                  Call call = Call.current();
                  CompletableFuture<Response> f = new CompletableFuture<>();
                  call.onCancel(() -> f.completeExceptionally(call.cancellation()));
                  return f;
                })
            .build(),
        Raw.onewayProcedure("oneway", body -> {}),
        Procedure.builder("fail")
            .encoding(Raw.ENCODING)
            .unary(
                request -> {
                  Code code = Code.fromValue(request.body().toByteArray()[0]);
                  return code == Code.OK
                      ? CompletableFuture.completedFuture(Response.of(Body.empty()))
                      : CompletableFuture.failedFuture(
                          YarpcException.of(code, "failed on purpose"));
                })
            .build(),
        Procedure.builder("app-error")
            .encoding(Raw.ENCODING)
            .unary(
                request -> {
                  Code code = Code.fromValue(request.body().toByteArray()[0]);
                  return CompletableFuture.completedFuture(
                      Response.builder()
                          .applicationError(
                              new ApplicationErrorMeta(code, "KeyNotFound", "no such key"))
                          .build());
                })
            .build(),
        Procedure.builder("panic")
            .encoding(Raw.ENCODING)
            .unary(
                request -> {
                  throw new IllegalStateException("a bug");
                })
            .build(),
        Procedure.builder("stream-echo")
            .encoding(Raw.ENCODING)
            .streaming(
                stream -> {
                  CompletableFuture<Void> done = new CompletableFuture<>();
                  pump(stream, done);
                  return done;
                })
            .build());
  }

  private static void pump(ServerStream stream, CompletableFuture<Void> done) {
    stream
        .receive()
        .whenComplete(
            (m, error) -> {
              if (error != null) {
                done.completeExceptionally(error);
              } else if (m == null) {
                done.complete(null);
              } else {
                stream
                    .send(m) // the received body goes back out: the stream releases it
                    .whenComplete(
                        (v, sendError) -> {
                          if (sendError != null) {
                            done.completeExceptionally(sendError);
                          } else {
                            pump(stream, done);
                          }
                        });
              }
            });
  }

  @Override
  public void close() {
    try {
      client.stop();
    } finally {
      server.stop();
    }
  }
}
