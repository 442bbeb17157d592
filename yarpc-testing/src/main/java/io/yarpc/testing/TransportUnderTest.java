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
 * <p>The defaults describe a transport that supports everything the suite checks, except for text on the
 * wire ({@link #cutsLongErrorTexts}, {@link #expectedResponseHeaderValue},
 * {@link #expectedRequestHeaderValue}), where they describe the strictest wire, gRPC's metadata; override
 * a method to declare a limitation of the wire protocol, or what a transport carries beyond that. A check
 * a declaration turns off is reported as skipped, with the reason: the declaration's own text for those
 * that return one ({@link #errorDetailsLimitation}, {@link #errorResponseLimitation}), otherwise the name
 * of the declaration and the suite class that made it. To waive a single check instead, override its test
 * method in the suite subclass and annotate it with {@code @Disabled("why")}.
 *
 * <p>A declaration describes the wire, not a bug: what the protocol cannot do. The contract points the
 * checks rely on beyond the SPI's Javadoc (the service an inbound answers with, the threads that may
 * complete an outbound's future, what acknowledges a oneway call, what core already does for outbounds)
 * are listed in {@link TransportConformanceSuite}'s Javadoc.
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
   * The text a client reads in an error's message, an error's name, and an application error's name and
   * details, when the server sent {@code sent} (for details: {@code sent} already cut to 256 bytes, the rule
   * every transport applies). Default: {@code sent} itself — the transport carries any text, encoding what
   * its wire cannot hold and decoding it again. A transport whose wire replaces characters it cannot carry
   * returns the replaced form (HTTP: line breaks and other control characters become spaces).
   */
  default String expectedErrorText(String sent) {
    return sent;
  }

  /**
   * Whether the transport cuts long error texts to fit its wire: an error message, an error name or an
   * application-error name longer than the wire's budget then arrives as its first characters followed by
   * {@code " (truncated)"} (core's rule, {@code io.yarpc.internal.WireText}), keeping at least 256 bytes.
   * The suite's short texts (under 128 UTF-8 bytes) must arrive whole, its 10 KiB text may be cut.
   *
   * <p>Default: {@code true} — gRPC's case, whose texts travel in trailers that peers accept up to 8 KiB
   * by default (the strictest wire here). A transport that carries any length returns {@code false}, and
   * the suite then expects a 10 KiB text whole.
   */
  default boolean cutsLongErrorTexts() {
    return true;
  }

  /**
   * The value a client receives for a response application header the handler set to {@code sent}, or
   * {@code null} when the transport drops a header its wire cannot carry.
   *
   * <p>Default: the rule of gRPC metadata, the strictest of the wires here — printable ASCII
   * ({@code 0x20..0x7E}) arrives unchanged, anything else is dropped. A transport that carries more
   * overrides it (HTTP, TChannel and the in-memory transport do).
   */
  default String expectedResponseHeaderValue(String sent) {
    return isPrintableAscii(sent) ? sent : null;
  }

  /**
   * The value a handler receives for a request application header a client sent as {@code sent}, or
   * {@code null} when the client's outbound refuses the call with {@code invalid-argument} because its wire
   * cannot carry the value (the request is then never sent).
   *
   * <p>Default: the gRPC metadata rule, as for {@link #expectedResponseHeaderValue}: printable ASCII
   * arrives unchanged, anything else is refused.
   */
  default String expectedRequestHeaderValue(String sent) {
    return isPrintableAscii(sent) ? sent : null;
  }

  /** Whether every character of {@code s} is printable ASCII, {@code 0x20..0x7E}. */
  private static boolean isPrintableAscii(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x20 || c > 0x7e) {
        return false;
      }
    }
    return true;
  }

  /**
   * Why the transport cannot carry an error's details bytes ({@link
   * io.yarpc.errors.YarpcException#withDetails}, e.g. a serialised {@code google.rpc.Status}) from a
   * handler to its caller, or {@code null} (the default) when it carries them byte for byte. When not null
   * the suite skips {@code errorDetailsRoundTrip} and prints this text as the reason: say what the wire
   * lacks (e.g. "TChannel's error frame and $rpc$-error-* headers have no field for details bytes").
   */
  default String errorDetailsLimitation() {
    return null;
  }

  /**
   * Why the transport cannot carry the response attached to a handler's error ({@link
   * io.yarpc.errors.YarpcException#withResponse}: its body, application headers and application-error
   * flag, as HTTP's both-response-error form and gRPC's response message with an error status carry them),
   * or {@code null} (the default) when the caller receives it with the error, intact. When not null the
   * suite skips {@code errorResponseRoundTrip} and prints this text as the reason. The inbound must
   * release that response's body either way ({@code errorResponseBodyReleasedByServer} always runs).
   */
  default String errorResponseLimitation() {
    return null;
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
