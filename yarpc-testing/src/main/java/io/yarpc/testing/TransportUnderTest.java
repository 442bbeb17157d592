package io.yarpc.testing;

import io.yarpc.Outbounds;
import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.Code;
import io.yarpc.transport.Inbound;
import java.util.List;

/**
 * What a transport author gives the {@link TransportConformanceSuite}: one server end, one client end
 * pointing at it, and what the transport supports. The suite asks for a new instance before every test
 * and closes it after the test's dispatchers have stopped.
 *
 * <p>Order of calls in each test: {@link #serverInbounds()}, (server dispatcher starts),
 * {@link #clientOutbounds()}, (client dispatcher starts, the test runs, client then server dispatcher
 * stop), {@link #assertNoLeaks()}, {@link #close()}.
 *
 * <p>The defaults describe a transport that supports everything the suite checks; override a method to
 * declare a limitation of the wire protocol. To waive a single check instead, override its test method in
 * the suite subclass and annotate it with {@code @Disabled("why")}.
 */
public interface TransportUnderTest extends AutoCloseable {
  /**
   * The inbounds the server dispatcher {@code conformance-server} serves on, not started yet (usually one,
   * listening on an ephemeral port).
   */
  List<Inbound> serverInbounds();

  /**
   * The outbounds for the client dispatcher, pointing at the server's inbounds. Called after the server
   * dispatcher started, so listening addresses are known.
   */
  Outbounds clientOutbounds();

  /** Whether the transport carries oneway calls; if not, the oneway tests are skipped. */
  default boolean supportsOneway() {
    return true;
  }

  /** Whether the transport carries streams; if not, the streaming tests are skipped. */
  default boolean supportsStreaming() {
    return true;
  }

  /** Whether a stream handler can send stream headers ({@code ServerStream.sendHeaders}). */
  default boolean supportsStreamHeaders() {
    return true;
  }

  /**
   * Whether application headers with an empty value reach the other side (gRPC, for one, does not send
   * them); when false the suite accepts them being absent.
   */
  default boolean sendsEmptyHeaderValues() {
    return true;
  }

  /**
   * The code a client receives when a handler fails with {@code sent}: {@code sent} itself, unless the
   * wire protocol cannot express it (TChannel system errors, for example, fold several codes into one).
   */
  default Code expectedErrorCode(Code sent) {
    return sent;
  }

  /**
   * The application-error meta a client receives when a handler returns {@code sent}: {@code sent}
   * itself, unless the wire protocol drops parts of it (gRPC, for example, sends no code).
   */
  default ApplicationErrorMeta expectedApplicationErrorMeta(ApplicationErrorMeta sent) {
    return sent;
  }

  /**
   * How many 64 KiB stream messages a sender may get through (its {@code send} futures completed) beyond
   * those the receiver asked for: the sum of the transport's flow-control windows and buffers. The
   * backpressure test fails when a sender gets further than this while the receiver does not receive.
   * Default 128 (8 MiB).
   */
  default int maxBufferedStreamMessages() {
    return 128;
  }

  /**
   * Fails (throws {@link AssertionError}) when the test leaked buffers. Called after both dispatchers
   * stopped. Netty-based transports can rely on {@link LeakDetectionExtension}, which yarpc-testing
   * registers for every test, and keep the default (nothing); transports that track their own buffers
   * check them here.
   */
  default void assertNoLeaks() {}

  /**
   * Releases what the transport holds (event loops, ports); called once, after {@link #assertNoLeaks()}.
   * Declared without checked exceptions: wrap them.
   */
  @Override
  default void close() {}
}
