package io.yarpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.DispatcherStatus.InboundStatus;
import io.yarpc.DispatcherStatus.OutboundStatus;
import io.yarpc.DispatcherStatus.ProcedureStatus;
import io.yarpc.DispatcherStatus.State;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.peer.ChooserStatus;
import io.yarpc.peer.ConnectionStatus;
import io.yarpc.peer.HasPeerChooser;
import io.yarpc.peer.PeerChooser;
import io.yarpc.peer.PeerLease;
import io.yarpc.peer.PeerStatus;
import io.yarpc.transport.AbstractLifecycle;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.Router;
import io.yarpc.transport.RpcType;
import io.yarpc.transport.UnaryOutbound;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link Dispatcher#introspect()}: procedures and their calls in flight, inbounds, outbounds, state. */
@Timeout(30)
class DispatcherIntrospectionTest {

  /** An inbound that tells an address once started. */
  private static class AddressedInbound extends AbstractLifecycle implements Inbound {
    volatile SocketAddress address;

    @Override
    public void setRouter(Router router) {}

    @Override
    public String transportName() {
      return "fake";
    }

    @Override
    protected void doStart() {
      address = new InetSocketAddress("127.0.0.1", 4242);
    }

    @Override
    protected void doStop() {}

    @Override
    public SocketAddress listenAddress() {
      return address;
    }
  }

  /** An outbound with a chooser that reports a fixed status. */
  private static class ChoosingOutbound extends AbstractLifecycle
      implements UnaryOutbound, HasPeerChooser {
    final ChooserStatus status =
        new ChooserStatus(
            "fixed",
            List.of(
                new PeerStatus(
                    "10.0.0.1:80", ConnectionStatus.UNAVAILABLE, "Connection refused", 0),
                new PeerStatus("10.0.0.2:80", ConnectionStatus.AVAILABLE, null, 3)));

    @Override
    public PeerChooser chooser() {
      return new PeerChooser() {
        @Override
        public CompletableFuture<PeerLease> choose(RequestMeta meta) {
          return new CompletableFuture<>();
        }

        @Override
        public ChooserStatus introspect() {
          return status;
        }

        @Override
        public void start() {}

        @Override
        public void stop() {}

        @Override
        public boolean isRunning() {
          return true;
        }
      };
    }

    @Override
    public String transportName() {
      return "choosing";
    }

    @Override
    public CompletableFuture<Response> call(Request request) {
      request.body().release();
      return new CompletableFuture<>();
    }

    @Override
    protected void doStart() {}

    @Override
    protected void doStop() {}
  }

  @Test
  void tellsProceduresInboundsOutboundsAndState() {
    LoopbackOutbound loop = new LoopbackOutbound();
    AddressedInbound addressed = new AddressedInbound();
    ChoosingOutbound choosing = new ChoosingOutbound();
    Dispatcher d =
        Dispatcher.builder("svc")
            .inbound(loop, addressed)
            .outbound("loop", Outbounds.builder().unary(loop).oneway(loop).build())
            .outbound(
                "other", Outbounds.builder().serviceName("other-service").unary(choosing).build())
            .build();
    d.register(Raw.procedure("echo", body -> body));
    d.register(Raw.onewayProcedure("fire", body -> {}));

    DispatcherStatus before = d.introspect();
    assertThat(before.name()).isEqualTo("svc");
    assertThat(before.state()).isEqualTo(State.NEW);
    assertThat(before.procedures())
        .containsExactly(
            new ProcedureStatus("svc", "echo", "", RpcType.UNARY, "", 0),
            new ProcedureStatus("svc", "fire", "", RpcType.ONEWAY, "", 0));
    assertThat(before.inbounds())
        .containsExactly(
            new InboundStatus("loopback", null, false), new InboundStatus("fake", null, false));
    assertThat(before.outbounds())
        .containsExactly(
            new OutboundStatus(
                "loop", "loop", Set.of(RpcType.UNARY, RpcType.ONEWAY), "loopback", false, null),
            new OutboundStatus(
                "other",
                "other-service",
                Set.of(RpcType.UNARY),
                "choosing",
                false,
                choosing.status));

    d.start();
    try {
      DispatcherStatus running = d.introspect();
      assertThat(running.state()).isEqualTo(State.RUNNING);
      assertThat(running.inbounds().get(1))
          .isEqualTo(new InboundStatus("fake", new InetSocketAddress("127.0.0.1", 4242), true));
      assertThat(running.outbounds()).allSatisfy(o -> assertThat(o.running()).isTrue());
      assertThat(running.outbounds().get(0).rpcTypes())
          .as("in RpcType order")
          .containsExactly(RpcType.UNARY, RpcType.ONEWAY);
    } finally {
      d.stop();
    }
    assertThat(d.introspect().state()).isEqualTo(State.STOPPED);
    assertThat(d.introspect().inbounds()).allSatisfy(i -> assertThat(i.running()).isFalse());
  }

  @Test
  void aComponentWhoseIntrospectionThrowsSpoilsNoSnapshot() {
    AddressedInbound broken =
        new AddressedInbound() {
          @Override
          public SocketAddress listenAddress() {
            throw new IllegalStateException("already terminated");
          }
        };
    ChoosingOutbound brokenChooser =
        new ChoosingOutbound() {
          @Override
          public PeerChooser chooser() {
            PeerChooser real = super.chooser();
            return new PeerChooser() {
              @Override
              public CompletableFuture<PeerLease> choose(RequestMeta meta) {
                return real.choose(meta);
              }

              @Override
              public ChooserStatus introspect() {
                throw new IllegalStateException("bug");
              }

              @Override
              public void start() {}

              @Override
              public void stop() {}

              @Override
              public boolean isRunning() {
                return true;
              }
            };
          }
        };
    Dispatcher d =
        Dispatcher.builder("svc")
            .inbound(broken)
            .outbound("o", Outbounds.unary(brokenChooser))
            .logLifecycle(false)
            .build();
    DispatcherStatus s = d.introspect();
    assertThat(s.inbounds()).containsExactly(new InboundStatus("fake", null, false));
    assertThat(s.outbounds().get(0).chooser().peers()).isEmpty();
    assertThat(s.outbounds().get(0).chooser().kind()).isNotEmpty();
  }

  @Test
  void countsCallsInFlightPerProcedureAndShowsTheDrain() throws Exception {
    LoopbackOutbound loop = new LoopbackOutbound();
    CountDownLatch entered = new CountDownLatch(2);
    CountDownLatch release = new CountDownLatch(1);
    Dispatcher server =
        Dispatcher.builder("server")
            .inbound(loop)
            .shutdownGracePeriod(Duration.ofSeconds(10))
            .logLifecycle(false)
            .build();
    server.register(
        Raw.procedure(
            "slow",
            body -> {
              entered.countDown();
              release.await();
              return body;
            }));
    server.register(Raw.procedure("fast", body -> body));
    Dispatcher client =
        Dispatcher.builder("client")
            .outbound("server", Outbounds.unary(loop))
            .logLifecycle(false)
            .build();
    server.start();
    client.start();
    RawClient raw = RawClient.of(client.clientConfig("server"));
    CallOptions options = CallOptions.timeout(Duration.ofSeconds(20));
    CompletableFuture<byte[]> a = raw.call("slow", new byte[] {1}, options);
    CompletableFuture<byte[]> b = raw.call("slow", new byte[] {2}, options);
    assertThat(raw.call("fast", new byte[] {3}, options).get(10, TimeUnit.SECONDS))
        .containsExactly(3);
    assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
    // the fast call's count drops just after its caller got the answer
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (server.introspect().callsInFlight() != 2 && System.nanoTime() < until) {
      Thread.sleep(5);
    }

    DispatcherStatus busy = server.introspect();
    assertThat(busy.callsInFlight()).isEqualTo(2);
    assertThat(busy.procedures())
        .extracting(ProcedureStatus::name, ProcedureStatus::callsInFlight)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("fast", 0),
            org.assertj.core.groups.Tuple.tuple("slow", 2));

    Thread stopper = new Thread(server::stop, "stopper");
    stopper.start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (server.introspect().state() != State.STOPPING && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(server.introspect().state()).isEqualTo(State.STOPPING);
    assertThat(server.isRunning()).as("not serving while it drains").isFalse();
    release.countDown();
    assertThat(a.get(10, TimeUnit.SECONDS)).containsExactly(1);
    assertThat(b.get(10, TimeUnit.SECONDS)).containsExactly(2);
    stopper.join(10_000);
    DispatcherStatus stopped = server.introspect();
    assertThat(stopped.state()).isEqualTo(State.STOPPED);
    assertThat(stopped.callsInFlight()).isZero();
    assertThat(stopped.procedures()).allSatisfy(p -> assertThat(p.callsInFlight()).isZero());
    client.stop();
  }
}
