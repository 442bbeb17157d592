package io.yarpc.peer;

import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.RequestMeta;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class PeerCallsTest {
  private static final RequestMeta META = RequestMeta.builder().procedure("p").build();

  /** A chooser whose choices the test completes by hand. */
  private static final class HandChooser implements PeerChooser {
    final CompletableFuture<PeerLease> choice = new CompletableFuture<>();
    RuntimeException thrown;

    @Override
    public CompletableFuture<PeerLease> choose(RequestMeta meta) {
      if (thrown != null) {
        throw thrown;
      }
      return choice;
    }

    @Override
    public void start() {}

    @Override
    public void stop() {}

    @Override
    public boolean isRunning() {
      return true;
    }
  }

  /** A lease that counts its finishes. */
  private static final class CountingLease implements PeerLease {
    final AtomicInteger finished = new AtomicInteger();

    @Override
    public Peer peer() {
      return null;
    }

    @Override
    public void finish(Throwable error) {
      finished.incrementAndGet();
    }
  }

  private final AtomicInteger released = new AtomicInteger();
  private final AtomicReference<PeerLease> handed = new AtomicReference<>();

  @Test
  void theLeaseGoesToTheWireWorkWhileTheCallWantsIt() {
    HandChooser chooser = new HandChooser();
    CompletableFuture<String> result = new CompletableFuture<>();
    PeerCalls.choose(chooser, META, result, released::incrementAndGet, handed::set);
    CountingLease lease = new CountingLease();
    chooser.choice.complete(lease);
    assertThat(handed.get()).isSameAs(lease);
    assertThat(lease.finished).as("the wire work finishes it").hasValue(0);
    assertThat(released).as("the wire work owns the request").hasValue(0);
  }

  @Test
  void aChooserThatThrowsOrFailsFailsTheCallAndReleasesTheRequest() throws Exception {
    HandChooser throwing = new HandChooser();
    throwing.thrown = YarpcException.of(Code.UNAVAILABLE, "no peers");
    CompletableFuture<String> result = new CompletableFuture<>();
    PeerCalls.choose(throwing, META, result, released::incrementAndGet, handed::set);
    assertThat(failure(result).code()).isEqualTo(Code.UNAVAILABLE);

    HandChooser failing = new HandChooser();
    CompletableFuture<String> second = new CompletableFuture<>();
    PeerCalls.choose(failing, META, second, released::incrementAndGet, handed::set);
    failing.choice.completeExceptionally(new IllegalStateException("broken list"));
    assertThat(failure(second).code()).isEqualTo(Code.UNKNOWN);
    assertThat(released).hasValue(2);
    assertThat(handed.get()).isNull();
  }

  @Test
  void aCallThatEndsFirstGivesUpTheChoice() {
    HandChooser chooser = new HandChooser();
    CompletableFuture<String> result = new CompletableFuture<>();
    CompletableFuture<PeerLease> choice =
        PeerCalls.choose(chooser, META, result, released::incrementAndGet, handed::set);
    result.cancel(false); // the deadline passed, or the caller gave up
    assertThat(choice.isCancelled()).isTrue();
    assertThat(released).hasValue(1);
    assertThat(handed.get()).isNull();
  }

  @Test
  void aLeaseOnAPeerReleasedSinceItWasChosenIsRefusedWithTheReleasedError() throws Exception {
    PeerSubscriber holder = p -> {};
    PeerRegistry<AbstractPeer> registry = new PeerRegistry<>(ClosablePeer::new, p -> {});
    AbstractPeer peer = registry.retain("h:1", holder);
    HandChooser chooser = new HandChooser();
    CompletableFuture<String> result = new CompletableFuture<>();
    PeerCalls.choose(chooser, META, result, released::incrementAndGet, handed::set);
    AtomicInteger abandoned = new AtomicInteger();
    PeerLease lease =
        new PeerLease() {
          @Override
          public Peer peer() {
            return peer;
          }

          @Override
          public void finish(Throwable error) {
            throw new AssertionError("nothing was sent: abandon, not finish");
          }

          @Override
          public void abandon() {
            abandoned.incrementAndGet();
          }
        };

    registry.release("h:1", holder); // a list dropped the peer while the call waited
    chooser.choice.complete(lease);

    YarpcException e = failure(result);
    assertThat(e.code()).isEqualTo(Code.UNAVAILABLE);
    assertThat(e.unprocessed()).as("nothing was sent").isTrue();
    assertThat(e.getMessage()).isEqualTo("peer h:1 was released");
    assertThat(handed.get()).as("the wire work never sees it").isNull();
    assertThat(abandoned).hasValue(1);
    assertThat(released).hasValue(1);
  }

  /** A peer that is always available and has nothing to close. */
  private static final class ClosablePeer extends AbstractPeer {
    ClosablePeer(String identifier) {
      super(identifier);
    }

    @Override
    public ConnectionStatus status() {
      return ConnectionStatus.AVAILABLE;
    }

    @Override
    protected void close() {}
  }

  private static YarpcException failure(CompletableFuture<?> f) throws InterruptedException {
    try {
      f.get();
      throw new AssertionError("expected a failure");
    } catch (ExecutionException e) {
      return (YarpcException) e.getCause();
    }
  }
}
