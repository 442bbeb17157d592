package io.yarpc.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import io.yarpc.examples.echo.EchoGrpc;
import io.yarpc.examples.echo.EchoMessage;
import io.yarpc.examples.keyvalue.GetValueRequest;
import io.yarpc.examples.keyvalue.GetValueResponse;
import io.yarpc.examples.keyvalue.KeyValueGrpc;
import io.yarpc.examples.keyvalue.SetValueRequest;
import io.yarpc.examples.keyvalue.WatchRequest;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Clients that know nothing of YARPC call the {@code serve} dispatcher's gRPC inbound: a stock grpc-java
 * generated stub and python grpcio, with no interceptor adding {@code rpc-*} metadata and no deadline.
 */
@Timeout(120)
class PlainGrpcClientsTest {
  private static final Path PYTHON = Path.of("/usr/bin/python3");
  private static Serve serve;
  private static ManagedChannel channel;

  @BeforeAll
  static void start() {
    serve = Serve.start("127.0.0.1", 0, 0, 0);
    InetSocketAddress grpc = serve.grpcAddress();
    channel =
        NettyChannelBuilder.forAddress(grpc.getHostString(), grpc.getPort()).usePlaintext().build();
  }

  @AfterAll
  static void stop() throws InterruptedException {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
    if (serve != null) {
      serve.close();
    }
  }

  @Test
  void grpcJavaStubWithoutDeadlineOrYarpcMetadata() throws Exception {
    KeyValueGrpc.KeyValueBlockingStub kv = KeyValueGrpc.newBlockingStub(channel);
    kv.setValue(SetValueRequest.newBuilder().setKey("java-key").setValue("v1").build());
    assertThat(kv.getValue(GetValueRequest.newBuilder().setKey("java-key").build()).getValue())
        .isEqualTo("v1");

    StatusRuntimeException missing =
        catchThrowableOfType(
            StatusRuntimeException.class,
            () -> kv.getValue(GetValueRequest.newBuilder().setKey("java-missing").build()));
    assertThat(missing.getStatus().getCode()).isEqualTo(Status.Code.NOT_FOUND);
    assertThat(StatusProto.fromThrowable(missing).getDetailsCount()).isEqualTo(1);

    EchoMessage echo =
        EchoMessage.newBuilder()
            .setPayload(ByteString.copyFrom(new byte[] {1, 2, 3}))
            .setToken("t")
            .build();
    assertThat(EchoGrpc.newBlockingStub(channel).echo(echo)).isEqualTo(echo);

    // server streaming, no deadline: the current value, then a change, then the client cancels
    LinkedBlockingQueue<Object> events = new LinkedBlockingQueue<>();
    io.grpc.Context.CancellableContext watching = io.grpc.Context.current().withCancellation();
    watching.run(
        () ->
            KeyValueGrpc.newStub(channel)
                .watch(
                    WatchRequest.newBuilder().setKey("java-key").build(),
                    new StreamObserver<GetValueResponse>() {
                      @Override
                      public void onNext(GetValueResponse value) {
                        events.add(value.getValue());
                      }

                      @Override
                      public void onError(Throwable t) {
                        events.add(Status.fromThrowable(t).getCode());
                      }

                      @Override
                      public void onCompleted() {
                        events.add("completed");
                      }
                    }));
    assertThat(events.poll(10, TimeUnit.SECONDS)).isEqualTo("v1");
    kv.setValue(SetValueRequest.newBuilder().setKey("java-key").setValue("v2").build());
    assertThat(events.poll(10, TimeUnit.SECONDS)).isEqualTo("v2");
    watching.cancel(null);
    assertThat(events.poll(10, TimeUnit.SECONDS)).isEqualTo(Status.Code.CANCELLED);
  }

  @Test
  void pythonGrpcioWithoutDeadlineOrYarpcMetadata() throws Exception {
    boolean available =
        Files.isExecutable(PYTHON)
            && new ProcessBuilder(PYTHON.toString(), "-c", "import grpc").start().waitFor() == 0;
    if (System.getenv("YARPC_REQUIRE_PEERS") != null) {
      assertThat(available).as("python3-grpcio (apt-get install python3-grpcio)").isTrue();
    }
    Assumptions.assumeTrue(
        available, "python3-grpcio is not installed (apt-get install python3-grpcio)");

    InetSocketAddress grpc = serve.grpcAddress();
    Process p =
        new ProcessBuilder(
                PYTHON.toString(),
                "src/test/python/plain_grpc_client.py",
                grpc.getHostString() + ":" + grpc.getPort())
            .redirectErrorStream(false)
            .start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("python client finished").isTrue();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.exitValue()).as("stderr: %s", err).isZero();
    JsonObject json = JsonParser.parseString(out).getAsJsonObject();
    assertThat(json.get("set").getAsString()).as("an empty SetValueResponse").isEmpty();
    assertThat(json.get("get").getAsString()).isEqualTo("from python");
    assertThat(json.getAsJsonObject("missing").get("code").getAsString()).isEqualTo("NOT_FOUND");
    assertThat(json.get("watch").getAsString()).isEqualTo("from python");
    assertThat(json.get("echo").getAsString()).isEqualTo("0a030102031203746f6b");
  }
}
