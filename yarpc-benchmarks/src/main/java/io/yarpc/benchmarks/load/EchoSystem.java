package io.yarpc.benchmarks.load;

import io.yarpc.benchmarks.proto.EchoGrpc;

/**
 * One system under test: an echo server and a client stub for it. Implementations start both in this
 * process with {@link #start()}, or one side each with {@link #startServer()} and {@link #startClient} (the
 * server then usually runs in a child JVM, see {@link ServerProcess}), and stop whatever they started in
 * {@link #close()}; server and client keep their threads apart (named pools, separate transports) so the
 * harness can tell which side allocates what. Not thread-safe: one harness thread drives it.
 */
public interface EchoSystem extends AutoCloseable {
  /** Plain grpc-java: generated stubs, default marshaller, Netty server and channel. The baseline. */
  String GRPC_JAVA = "grpc-java";

  /** YARPC over its gRPC transport, the service registered through the protobuf encoding. */
  String YARPC_GRPC = "yarpc-grpc";

  /** As {@link #YARPC_GRPC}, with the protobuf encoding's opt-in unsafe aliasing decode. */
  String YARPC_GRPC_ALIASING = "yarpc-grpc-aliasing";

  /**
   * As {@link #YARPC_GRPC}, without YARPC's own thread hops: non-blocking procedures (the method runs on
   * grpc-java's server executor thread, as in plain grpc-java) and stub callbacks run directly on the
   * thread that completes the call (the transport's executor).
   */
  String YARPC_GRPC_DIRECT = "yarpc-grpc-direct";

  /**
   * As {@link #YARPC_GRPC}, with metrics, call logs (successes off) and tracing (sampled out) on the
   * server whatever {@code --observability} says: the row beside {@link #YARPC_GRPC} that prices them.
   */
  String YARPC_GRPC_OBSERVED = "yarpc-grpc-observed";

  /** YARPC over HTTP/1.1. */
  String YARPC_HTTP = "yarpc-http";

  /**
   * As {@link #YARPC_HTTP}, without YARPC's own thread hops (as {@link #YARPC_GRPC_DIRECT}): the
   * non-blocking method runs on the server connection's event loop, stub callbacks on the client's.
   */
  String YARPC_HTTP_DIRECT = "yarpc-http-direct";

  /** YARPC over h2c (HTTP/2 with prior knowledge). */
  String YARPC_H2C = "yarpc-h2c";

  /** As {@link #YARPC_H2C}, without YARPC's own thread hops (as {@link #YARPC_HTTP_DIRECT}). */
  String YARPC_H2C_DIRECT = "yarpc-h2c-direct";

  /** YARPC over TChannel. */
  String YARPC_TCHANNEL = "yarpc-tchannel";

  /**
   * As {@link #YARPC_TCHANNEL}, without YARPC's own thread hops (as {@link #YARPC_GRPC_DIRECT}): the
   * non-blocking method runs on the server connection's event loop, and stub callbacks on the client
   * connection's event loop, which also writes the next call.
   */
  String YARPC_TCHANNEL_DIRECT = "yarpc-tchannel-direct";

  /** The floor: a bare Netty echo over HTTP/1.1, called by YARPC's HTTP outbound. */
  String NETTY_HTTP = NettyEchoSystem.NETTY_HTTP;

  /** The floor: a bare Netty echo over h2c, called by YARPC's HTTP outbound. */
  String NETTY_H2C = NettyEchoSystem.NETTY_H2C;

  /** The system's name (one of the constants). */
  String name();

  /** Starts server and client; the stub works afterwards. Same as {@code start(0)}. */
  default void start() throws Exception {
    start(0);
  }

  /**
   * Starts server and client in this process. Before the client connects, opens {@code spacers} idle TCP
   * connections to the server and keeps them until {@link #close()}: on gRPC, whose server and client
   * share grpc-netty's event loops (assigned round robin as channels register), each spacer moves the
   * client's connection to the next loop, so that the server's and the client's connections do not end up
   * on one thread (which would blur the per-side accounting). Systems with their own loops per side
   * ignore it.
   */
  default void start(int spacers) throws Exception {
    startClient(startServer(), spacers);
  }

  /**
   * Starts only the server, on {@code 127.0.0.1} and a free port, and returns the port. With {@link
   * #startClient} in another process this is one half of {@code load --processes separate}.
   */
  int startServer() throws Exception;

  /**
   * Starts only the client, calling the server on {@code 127.0.0.1:port}, after opening {@code spacers}
   * idle connections to it (see {@link #start(int)}); the stub works afterwards.
   */
  void startClient(int port, int spacers) throws Exception;

  /** Whether server and client may share event loop threads (see {@link #start(int)}). */
  default boolean sharesEventLoops() {
    return false;
  }

  /** An asynchronous stub calling the server. */
  EchoGrpc.EchoStub stub();

  /** Whether {@link EchoGrpc.EchoStub#stream} works on this system. */
  boolean supportsStreaming();

  /** Stops client and server. */
  @Override
  void close();

  /**
   * The system called {@code name}, with YARPC's defaults; over TLS when {@code tls} is not null (then
   * {@code yarpc-h2c} is h2 over TLS); YARPC's servers with metrics, call logs and tracing when {@code
   * observed} names them ({@code none}, {@code on}, or a list of {@code metrics}, {@code logs}, {@code
   * tracing}; plain grpc-java has none of these).
   */
  static EchoSystem create(String name, BenchTls tls, String observed) {
    switch (name) {
      case GRPC_JAVA:
        return new PlainGrpcSystem(tls);
      case YARPC_GRPC:
        return new YarpcSystem(name, YarpcSystem.Kind.GRPC, false, false, tls, observed);
      case YARPC_GRPC_ALIASING:
        return new YarpcSystem(name, YarpcSystem.Kind.GRPC, true, false, tls, observed);
      case YARPC_GRPC_DIRECT:
        return new YarpcSystem(name, YarpcSystem.Kind.GRPC, false, true, tls, observed);
      case YARPC_GRPC_OBSERVED:
        return new YarpcSystem(name, YarpcSystem.Kind.GRPC, false, false, tls, "on");
      case YARPC_HTTP:
        return new YarpcSystem(name, YarpcSystem.Kind.HTTP, false, false, tls, observed);
      case YARPC_HTTP_DIRECT:
        return new YarpcSystem(name, YarpcSystem.Kind.HTTP, false, true, tls, observed);
      case YARPC_H2C:
        return new YarpcSystem(name, YarpcSystem.Kind.H2C, false, false, tls, observed);
      case YARPC_H2C_DIRECT:
        return new YarpcSystem(name, YarpcSystem.Kind.H2C, false, true, tls, observed);
      case YARPC_TCHANNEL:
        return new YarpcSystem(name, YarpcSystem.Kind.TCHANNEL, false, false, tls, observed);
      case YARPC_TCHANNEL_DIRECT:
        return new YarpcSystem(name, YarpcSystem.Kind.TCHANNEL, false, true, tls, observed);
      case NETTY_HTTP:
      case NETTY_H2C:
        if (tls != null) {
          throw new IllegalArgumentException(name + " has no TLS: run it with --tls none");
        }
        return new NettyEchoSystem(name);
      default:
        throw new IllegalArgumentException("unknown system " + name);
    }
  }
}
