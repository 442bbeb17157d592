package io.yarpc.transport.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.ClientConfig;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.StreamMessage;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;

/**
 * A YARPC server and a YARPC client talking gRPC over loopback, each with its own transport, for tests
 * that look at one side or the other.
 */
@SuppressWarnings("try") // close() may throw InterruptedException: it waits for releases
final class GrpcTestBed implements AutoCloseable {
  static final Duration WAIT = Duration.ofSeconds(10);
  static final String SERVER = "bed-server";

  final GrpcTransport serverTransport;
  final GrpcTransport clientTransport;
  final GrpcInbound inbound;
  final Dispatcher server;
  final GrpcOutbound outbound;
  final Dispatcher client;

  GrpcTestBed(
      UnaryOperator<GrpcInbound.Builder> inboundOptions,
      UnaryOperator<GrpcOutbound.Builder> outboundOptions,
      Procedure... procedures) {
    serverTransport = GrpcTransport.create();
    clientTransport = GrpcTransport.create();
    inbound =
        inboundOptions
            .apply(serverTransport.inboundBuilder(new InetSocketAddress("127.0.0.1", 0)))
            .build();
    server = Dispatcher.builder(SERVER).inbound(inbound).shutdownGracePeriod(WAIT).build();
    server.register(procedures);
    server.start();
    outbound =
        outboundOptions
            .apply(
                clientTransport.outboundBuilder(
                    io.yarpc.peer.SinglePeerChooser.of(
                        clientTransport, "127.0.0.1:" + inbound.port())))
            .build();
    client =
        Dispatcher.builder("bed-client")
            .outbound(SERVER, Outbounds.builder().unary(outbound).stream(outbound).build())
            .build();
    client.start();
  }

  GrpcTestBed(Procedure... procedures) {
    this(b -> b, b -> b, procedures);
  }

  ClientConfig clientConfig() {
    return client.clientConfig(SERVER);
  }

  static RequestMeta meta(String procedure) {
    return RequestMeta.builder()
        .procedure(procedure)
        .encoding("raw")
        .deadline(Deadline.after(WAIT))
        .build();
  }

  static RequestMeta streamMeta(String procedure) {
    return RequestMeta.builder().procedure(procedure).encoding("raw").build();
  }

  static <T> T await(CompletableFuture<T> f) throws Exception {
    try {
      return f.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof Exception) {
        throw (Exception) e.getCause();
      }
      throw e;
    }
  }

  static YarpcException failure(CompletableFuture<?> f) throws Exception {
    Object value;
    try {
      value = f.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      assertThat(e.getCause()).isInstanceOf(YarpcException.class);
      YarpcException y = (YarpcException) e.getCause();
      if (y.response() != null) {
        y.response().body().release();
      }
      return y;
    }
    if (value instanceof Response) {
      ((Response) value).body().release();
    } else if (value instanceof StreamMessage) {
      ((StreamMessage) value).release();
    }
    throw new AssertionError("expected a failure, got " + value);
  }

  /** Waits (at most {@link #WAIT}) for a condition that other threads make true; never judges time. */
  static void eventually(String what, BooleanSupplier condition) throws InterruptedException {
    long giveUp = System.nanoTime() + WAIT.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > giveUp) {
        throw new AssertionError("gave up waiting for " + what);
      }
      Thread.sleep(5);
    }
  }

  /** Asserts every detached receive buffer of both transports was released. */
  void assertReceiveBuffersReleased() throws InterruptedException {
    eventually(
        "server receive buffers released: " + serverTransport.receiveStats(),
        () -> serverTransport.receiveStats().outstanding() == 0);
    eventually(
        "client receive buffers released: " + clientTransport.receiveStats(),
        () -> clientTransport.receiveStats().outstanding() == 0);
  }

  @Override
  public void close() throws Exception {
    try {
      client.stop();
    } finally {
      server.stop();
    }
    assertReceiveBuffersReleased();
  }
}
