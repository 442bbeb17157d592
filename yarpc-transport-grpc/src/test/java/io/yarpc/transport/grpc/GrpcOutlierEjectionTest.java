package io.yarpc.transport.grpc;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.peer.ConnectionStatus;
import io.yarpc.peer.OutlierDetection;
import io.yarpc.peer.PeerStatus;
import io.yarpc.peer.RoundRobinPeerList;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Outlier ejection over real gRPC: a round-robin list of three servers on loopback, one of which fails
 * every call ({@code internal}) or never answers before the call's deadline. Its failures reach the list
 * through the lease, it is ejected, and the calls after it go to the healthy two. Waits are bounded;
 * nothing asserts how long anything takes.
 */
@Timeout(60)
class GrpcOutlierEjectionTest {
  private final List<Runnable> cleanup = new ArrayList<>();

  @AfterEach
  void stop() {
    for (int i = cleanup.size() - 1; i >= 0; i--) {
      cleanup.get(i).run();
    }
  }

  /** A server answering {@code who} with its name, failing with {@code internal}, or never answering. */
  private String server(String name, String behaviour) {
    GrpcInbound inbound =
        GrpcTransport.create()
            .inboundBuilder(new InetSocketAddress("127.0.0.1", 0))
            .gracePeriod(Duration.ZERO)
            .build();
    Dispatcher d = Dispatcher.builder("backend").inbound(inbound).build();
    CompletableFuture<byte[]> never = new CompletableFuture<>();
    d.register(
        Raw.procedure(
            "who",
            body -> {
              switch (behaviour) {
                case "fails":
                  throw YarpcException.of(Code.INTERNAL, name + " is broken");
                case "hangs":
                  return never.get(30, TimeUnit.SECONDS); // until the call's deadline cancels it
                default:
                  return name.getBytes(UTF_8);
              }
            }));
    d.start();
    cleanup.add(d::stop);
    cleanup.add(() -> never.complete(new byte[0]));
    return "127.0.0.1:" + inbound.port();
  }

  private static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!condition.getAsBoolean()) {
      assertThat(System.nanoTime() - deadline).as("waiting for: " + what).isNegative();
      Thread.sleep(10);
    }
  }

  private void ejects(String behaviour, Duration timeout, String lastError) throws Exception {
    String good1 = server("good-1", "answers");
    String good2 = server("good-2", "answers");
    String bad = server("bad", behaviour);
    GrpcTransport transport = GrpcTransport.create();
    RoundRobinPeerList list =
        RoundRobinPeerList.builder(transport)
            .peers(List.of(good1, good2, bad))
            .outlierDetection(
                OutlierDetection.builder()
                    .consecutiveFailures(2)
                    .baseEjectionTime(Duration.ofMinutes(1))
                    .build())
            .build();
    Dispatcher client =
        Dispatcher.builder("client")
            .outbound("backend", Outbounds.unary(transport.outbound(list)))
            .build();
    client.start();
    cleanup.add(
        () -> {
          client.stop();
          transport.stop();
        });
    await("every peer in rotation", () -> list.availablePeers().size() == 3);
    RawClient raw = RawClient.of(client.clientConfig("backend"));

    List<Code> failures = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      try {
        byte[] reply =
            raw.call("who", new byte[0], CallOptions.builder().timeout(timeout).build())
                .get(20, TimeUnit.SECONDS);
        assertThat(new String(reply, UTF_8)).isIn("good-1", "good-2");
      } catch (ExecutionException e) {
        failures.add(YarpcException.from(e.getCause()).code());
      }
    }
    assertThat(failures).hasSize(2);
    assertThat(list.availablePeers()).containsExactlyInAnyOrder(good1, good2);
    PeerStatus status = list.introspect().peers().get(2);
    assertThat(status.identifier()).isEqualTo(bad);
    assertThat(status.status()).isEqualTo(ConnectionStatus.UNAVAILABLE);
    assertThat(status.unavailableReason())
        .startsWith("ejected for 1m0s after 2 consecutive failures (last: " + lastError);
  }

  @Test
  void aServerThatFailsEveryCallIsEjected() throws Exception {
    ejects("fails", Duration.ofSeconds(10), "internal: bad is broken)");
  }

  @Test
  void aServerThatAnswersNoCallBeforeItsDeadlineIsEjected() throws Exception {
    // long enough that a good server's answer makes it on a loaded machine: only the hanging one's
    // fail
    ejects("hangs", Duration.ofSeconds(2), "deadline-exceeded: ");
  }
}
