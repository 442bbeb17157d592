package io.yarpc.benchmarks.load;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.yarpc.benchmarks.proto.EchoGrpc;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The baseline: plain grpc-java on Netty with the generated stub and the default protobuf marshaller. The
 * only settings that differ from grpc-java's defaults are the ones YARPC's gRPC transport also sets: a
 * 64 MiB receive limit, and per-side cached executors (grpc-java's default is one shared cached pool)
 * whose thread names tell server from client. Event loops are grpc-netty's shared defaults, as in YARPC's
 * gRPC transport.
 */
final class PlainGrpcSystem implements EchoSystem {
  private static final int MAX_MESSAGE = 64 << 20;

  private final ExecutorService serverExecutor =
      NamedThreads.cachedPool(NamedThreads.SERVER_PREFIX, "grpc");
  private final ExecutorService clientExecutor =
      NamedThreads.cachedPool(NamedThreads.CLIENT_PREFIX, "grpc");
  private Server server;
  private ManagedChannel channel;
  private EchoGrpc.EchoStub stub;
  private final Spacers spacers = new Spacers();
  private final BenchTls tls;

  /** The baseline, over TLS when {@code tls} is not null. */
  PlainGrpcSystem(BenchTls tls) {
    this.tls = tls;
  }

  @Override
  public String name() {
    return GRPC_JAVA;
  }

  @Override
  public int startServer() throws Exception {
    NettyServerBuilder serverBuilder =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .executor(serverExecutor)
            .maxInboundMessageSize(MAX_MESSAGE)
            .addService(new EchoService());
    if (tls != null) {
      serverBuilder.sslContext(tls.grpcServer());
    }
    server = serverBuilder.build().start();
    return ((InetSocketAddress) server.getListenSockets().get(0)).getPort();
  }

  @Override
  public void startClient(int port, int spacerCount) throws Exception {
    spacers.open(spacerCount, port);
    NettyChannelBuilder channelBuilder =
        NettyChannelBuilder.forAddress("127.0.0.1", port)
            .executor(clientExecutor)
            .maxInboundMessageSize(MAX_MESSAGE);
    if (tls != null) {
      channelBuilder.sslContext(tls.grpcClient());
    } else {
      channelBuilder.usePlaintext();
    }
    channel = channelBuilder.build();
    stub = EchoGrpc.newStub(channel);
  }

  @Override
  public EchoGrpc.EchoStub stub() {
    return stub;
  }

  @Override
  public boolean supportsStreaming() {
    return true;
  }

  @Override
  public boolean sharesEventLoops() {
    return true;
  }

  @Override
  public void close() {
    spacers.close();
    try {
      if (channel != null) {
        channel.shutdownNow();
        channel.awaitTermination(5, TimeUnit.SECONDS);
      }
      if (server != null) {
        server.shutdownNow();
        server.awaitTermination(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      serverExecutor.shutdownNow();
      clientExecutor.shutdownNow();
    }
  }
}
