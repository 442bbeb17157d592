package io.yarpc.benchmarks.load;

import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.benchmarks.proto.EchoGrpc;
import io.yarpc.encoding.protobuf.ProtobufProcedures;
import io.yarpc.encoding.protobuf.YarpcChannel;
import io.yarpc.encoding.protobuf.unsafe.UnsafeAliasing;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcOutbound;
import io.yarpc.transport.grpc.GrpcTransport;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpOutbound;
import io.yarpc.transport.http.HttpTransport;
import io.yarpc.transport.tchannel.TChannelInbound;
import io.yarpc.transport.tchannel.TChannelOutbound;
import io.yarpc.transport.tchannel.TChannelTransport;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.ExecutorService;

/**
 * YARPC end to end: a server dispatcher {@value #SERVER} serving {@link EchoService} through {@link
 * ProtobufProcedures} on one inbound, and a client dispatcher {@value #CLIENT} whose outbound reaches it,
 * called with the generated stub over {@link YarpcChannel}. Server and client have separate transport
 * instances (so separate event loops, except gRPC's, which are grpc-netty's shared ones) and named
 * executors; everything else is YARPC's defaults (the server's handler executor is the dispatcher's own
 * pool, {@code yarpc-bench-server-handler-N}).
 */
final class YarpcSystem implements EchoSystem {
  static final String SERVER = "bench-server";
  static final String CLIENT = "bench-client";

  /** The transport both sides use. */
  enum Kind {
    GRPC,
    HTTP,
    H2C,
    TCHANNEL
  }

  private final String name;
  private final Kind kind;
  private final boolean aliasing;
  private final boolean direct;
  private final ExecutorService serverCallbacks =
      NamedThreads.yarpcPool(NamedThreads.SERVER_PREFIX, "callback");
  private final ExecutorService clientCallbacks =
      NamedThreads.yarpcPool(NamedThreads.CLIENT_PREFIX, "callback");
  private Dispatcher server;
  private Dispatcher client;
  private EchoGrpc.EchoStub stub;
  private final Spacers spacers = new Spacers();
  private UnsafeAliasing aliasingPool;
  private final BenchTls tls;
  private final String observed;

  /**
   * A system over {@code kind}; {@code aliasing} opts in to the protobuf encoding's unsafe aliasing decode,
   * {@code direct} removes YARPC's own thread hops: the procedures are marked non-blocking (the unary
   * method runs on the transport's executor thread instead of the dispatcher's handler pool) and the
   * channel runs stub callbacks on the thread that completes the call (the gRPC transport's executor)
   * instead of its callback pool. With {@code tls}, both sides speak TLS (HTTP: {@code https}, h2 by
   * ALPN for {@link Kind#H2C}).
   */
  YarpcSystem(
      String name, Kind kind, boolean aliasing, boolean direct, BenchTls tls, String observed) {
    this.tls = tls;
    this.observed = observed;
    this.name = name;
    this.kind = kind;
    this.aliasing = aliasing;
    this.direct = direct;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public int startServer() throws Exception {
    Inbound inbound;
    switch (kind) {
      case GRPC:
        {
          GrpcInbound.Builder b =
              GrpcTransport.create().inboundBuilder(new InetSocketAddress("127.0.0.1", 0));
          inbound = (tls == null ? b : b.tls(tls.server())).build();
          break;
        }
      case HTTP:
      case H2C:
        {
          HttpInbound.Builder b = HttpTransport.create().inboundBuilder().http2(true);
          inbound = (tls == null ? b : b.tls(tls.server())).build();
          break;
        }
      case TCHANNEL:
        {
          TChannelInbound.Builder b = TChannelTransport.of(SERVER).inboundBuilder();
          inbound = (tls == null ? b : b.tls(tls.server())).build();
          break;
        }
      default:
        throw new AssertionError(kind);
    }
    Dispatcher.Builder serverBuilder = Dispatcher.builder(SERVER).inbound(inbound);
    BenchObservability.install(serverBuilder, observed);
    server = serverBuilder.build();
    ProtobufProcedures.Builder procedures =
        ProtobufProcedures.builder(new EchoService()).callbackExecutor(serverCallbacks);
    if (aliasing) {
      aliasingPool = UnsafeAliasing.create();
      procedures.unsafeAliasing(aliasingPool);
    }
    if (direct) {
      procedures.nonBlocking(true);
    }
    server.register(procedures.build());
    server.start();
    switch (kind) {
      case GRPC:
        return ((GrpcInbound) inbound).port();
      case HTTP:
      case H2C:
        return ((HttpInbound) inbound).address().getPort();
      case TCHANNEL:
        return ((TChannelInbound) inbound).address().getPort();
      default:
        throw new AssertionError(kind);
    }
  }

  @Override
  public void startClient(int port, int spacerCount) throws Exception {
    String hostPort = "127.0.0.1:" + port;
    Outbounds outbounds;
    switch (kind) {
      case GRPC:
        {
          spacers.open(spacerCount, port);
          GrpcTransport.Builder t = GrpcTransport.builder();
          GrpcOutbound out =
              (tls == null ? t : t.tls(tls.client())).build().singleOutbound(hostPort);
          outbounds = Outbounds.builder().unary(out).stream(out).build();
          break;
        }
      case HTTP:
      case H2C:
        {
          HttpTransport.Builder t = HttpTransport.builder();
          HttpOutbound out =
              (tls == null ? t : t.tls(tls.client()))
                  .build()
                  .singleOutboundBuilder(tls == null ? hostPort : "https://" + hostPort)
                  .http2(kind == Kind.H2C)
                  .build();
          outbounds = Outbounds.unary(out);
          break;
        }
      case TCHANNEL:
        {
          TChannelTransport.Builder t = TChannelTransport.builder().serviceName(CLIENT);
          TChannelOutbound out =
              (tls == null ? t : t.tls(tls.client())).build().singleOutbound(hostPort);
          outbounds = Outbounds.unary(out);
          break;
        }
      default:
        throw new AssertionError(kind);
    }
    client = Dispatcher.builder(CLIENT).outbound(SERVER, outbounds).build();
    client.start();
    YarpcChannel channel =
        YarpcChannel.builder(client.clientConfig(SERVER))
            .executor(direct ? Runnable::run : clientCallbacks)
            .defaultTimeout(Duration.ofSeconds(30))
            .build();
    stub = EchoGrpc.newStub(channel);
  }

  @Override
  public EchoGrpc.EchoStub stub() {
    return stub;
  }

  /** What the aliasing pool did so far, or null without aliasing (printed with {@code --verbose-threads}). */
  String aliasingPoolStats() {
    UnsafeAliasing p = aliasingPool;
    return p == null
        ? null
        : "aliasing pool: "
            + p.borrowedArrays()
            + " arrays borrowed, "
            + p.allocatedArrays()
            + " allocated, "
            + p.pooledBytes()
            + " bytes pooled";
  }

  @Override
  public boolean sharesEventLoops() {
    return kind == Kind.GRPC;
  }

  @Override
  public boolean supportsStreaming() {
    return kind == Kind.GRPC && !aliasing; // aliasing only changes unary decoding
  }

  @Override
  public void close() {
    spacers.close();
    try {
      if (client != null) {
        client.stop();
      }
    } finally {
      if (server != null) {
        server.stop();
      }
      serverCallbacks.shutdownNow();
      clientCallbacks.shutdownNow();
    }
  }
}
