package io.yarpc.examples;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.testing.LeakDetectionExtension;
import io.yarpc.transport.UnaryOutbound;
import io.yarpc.transport.grpc.GrpcTransport;
import io.yarpc.transport.http.HttpTransport;
import io.yarpc.transport.tchannel.TChannelTransport;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A client started before its server: a call made while nothing listens waits for the peer within its
 * deadline and succeeds once the server is up; with no server at all, the deadline error names the
 * unreachable peer and why it is unreachable. Over every transport.
 */
@Timeout(60)
@ExtendWith(LeakDetectionExtension.class)
class ClientBeforeServerTest {
  private Dispatcher client;
  private Serve serve;
  private Runnable stopTransport = () -> {};

  @AfterEach
  void stop() {
    if (client != null) {
      client.stop();
    }
    stopTransport.run();
    if (serve != null) {
      serve.close();
    }
  }

  /**
   * One call to a running server first, so that class loading on a busy machine does not eat the
   * deadline of the call under test.
   */
  @BeforeAll
  static void warmUp() throws Exception {
    ClientBeforeServerTest t = new ClientBeforeServerTest();
    try {
      t.serve = Serve.start("127.0.0.1", 0, 0, 0);
      for (String transport : new String[] {"http", "grpc", "tchannel"}) {
        int port =
            transport.equals("http")
                ? t.serve.httpAddress().getPort()
                : transport.equals("grpc")
                    ? t.serve.grpcAddress().getPort()
                    : t.serve.tchannelAddress().getPort();
        t.client(transport, port)
            .call(
                "echo/raw",
                new byte[] {1},
                CallOptions.builder().timeout(Duration.ofSeconds(10)).build())
            .get(20, TimeUnit.SECONDS);
        t.client.stop();
        t.stopTransport.run();
      }
    } finally {
      t.serve.close();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"http", "grpc", "tchannel"})
  void aCallMadeBeforeTheServerIsUpSucceedsOnceItIs(String transport) throws Exception {
    int[] ports = {freePort(), freePort(), freePort()};
    int port = ports[index(transport)];
    RawClient raw = client(transport, port);

    CompletableFuture<byte[]> call =
        raw.call(
            "echo/raw",
            "early".getBytes(UTF_8),
            CallOptions.builder().timeout(Duration.ofSeconds(2)).build());
    Thread.sleep(300); // the server comes up after the call was made
    assertThat(call).as("the call waits for the server").isNotDone();
    serve = Serve.start("127.0.0.1", ports[0], ports[1], ports[2]);

    assertThat(new String(call.get(10, TimeUnit.SECONDS), UTF_8)).isEqualTo("early");
  }

  @ParameterizedTest
  @ValueSource(strings = {"http", "grpc", "tchannel"})
  void withNoServerTheDeadlineErrorNamesTheUnreachablePeerAndTheConnectError(String transport)
      throws Exception {
    int port = freePort();
    RawClient raw = client(transport, port);

    Throwable t =
        catchThrowable(
            () ->
                raw.call(
                        "echo/raw",
                        "lost".getBytes(UTF_8),
                        CallOptions.builder().timeout(Duration.ofMillis(700)).build())
                    .get(10, TimeUnit.SECONDS));
    YarpcException e = YarpcException.from(t);
    assertThat(e.code()).isEqualTo(Code.DEADLINE_EXCEEDED);
    assertThat(e.getMessage())
        .matches(
            "client timeout for procedure \"echo/raw\" of service \"yarpc-test\" after [0-9.]+m?s"
                + " while waiting for a peer: peer 127\\.0\\.0\\.1:"
                + port
                + " is unreachable: Connection refused: /?127\\.0\\.0\\.1:"
                + port);
  }

  private RawClient client(String transport, int port) {
    String peer = "127.0.0.1:" + port;
    UnaryOutbound outbound;
    switch (transport) {
      case "http":
        HttpTransport http = HttpTransport.create();
        outbound = http.singleOutbound(peer);
        stopTransport = http::stop;
        break;
      case "grpc":
        GrpcTransport grpc = GrpcTransport.create();
        outbound = grpc.singleOutbound(peer);
        stopTransport = grpc::stop;
        break;
      default:
        TChannelTransport tchannel = TChannelTransport.of("early-client");
        outbound = tchannel.singleOutbound(peer);
        stopTransport = tchannel::stop;
    }
    client =
        Dispatcher.builder("early-client")
            .outbound(Serve.SERVICE, Outbounds.unary(outbound))
            .build();
    client.start();
    return RawClient.of(client.clientConfig(Serve.SERVICE));
  }

  private static int index(String transport) {
    return transport.equals("http") ? 0 : transport.equals("grpc") ? 1 : 2;
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
