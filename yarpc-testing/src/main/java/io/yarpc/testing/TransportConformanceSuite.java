package io.yarpc.testing;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.yarpc.Call;
import io.yarpc.CallOptions;
import io.yarpc.ClientConfig;
import io.yarpc.Dispatcher;
import io.yarpc.Reply;
import io.yarpc.encoding.json.Json;
import io.yarpc.encoding.json.JsonClient;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.errors.ApplicationErrorMeta;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.ClientStream;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Headers;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.ServerStream;
import io.yarpc.transport.StreamMessage;
import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The transport conformance kit: one JUnit 5 suite that every transport runs to show it carries YARPC
 * calls faithfully. A transport author extends it and implements {@link #newTransport()}:
 *
 * <pre>{@code
 * class HttpConformanceTest extends TransportConformanceSuite {
 *   @Override
 *   protected TransportUnderTest newTransport() {
 *     HttpTransport server = HttpTransport.create();   // one transport per side, as two processes
 *     HttpTransport client = HttpTransport.create();
 *     HttpInbound inbound = server.inbound();
 *     return new TransportUnderTest() {
 *       public List<Inbound> serverInbounds() { return List.of(inbound); }
 *       public Outbounds clientOutbounds() {          // called once the server has started
 *         HttpOutbound out = client.singleOutbound(inbound.hostPort());
 *         return Outbounds.builder().unary(out).oneway(out).build();
 *       }
 *       public boolean supportsStreaming() { return false; }
 *       public void close() { client.stop(); server.stop(); }
 *     };
 *   }
 * }
 * }</pre>
 *
 * <p>Before each test the suite starts a server dispatcher {@value #SERVER} on the transport's inbounds
 * with the suite's procedures, then a client dispatcher {@value #CLIENT} whose outbounds for
 * {@value #SERVER} come from the transport. After each test it stops both, checks that every body the
 * suite handed to the transport was released exactly once and never read afterwards, and calls
 * {@link TransportUnderTest#assertNoLeaks()}; Netty buffers are also checked by
 * {@link LeakDetectionExtension}. Both dispatchers log their start and stop at DEBUG ({@code
 * Dispatcher.Builder.logLifecycle(false)}), whatever logging backend the author's tests use (set the
 * logger {@code io.yarpc.Dispatcher} to DEBUG to see them); warnings and errors (a handler's unexpected
 * exception, a leak) still show.
 *
 * <p>What it covers:
 *
 * <ul>
 *   <li>unary round trips at the transport level ({@link Body}, including lazy and unknown-length bodies),
 *       with the raw encoding and with the JSON encoding, for bodies of 0 B, 1 B, 64 KiB and 4 MiB; byte
 *       access on received bodies; every request metadata field and the deadline reaching the server;
 *   <li>application headers echoed back as response headers: mixed-case keys come back lower-case, values
 *       keep their case, empty values, 100 headers;
 *   <li>errors: all 16 error codes with their messages, error names, application errors with meta, a
 *       handler's plain exception ({@code unknown} {@code error for service ...}), unknown service and
 *       procedure with yarpc-go's messages, missing deadline ({@code missing TTL}), a deadline that passes
 *       while the handler runs, and cancellation of a call reaching the server; a wrong code is reported
 *       with the code, name and message that arrived;
 *   <li>what an error carries besides its code and message: its details bytes ({@link
 *       YarpcException#withDetails}, a serialised {@code google.rpc.Status}) byte for byte, and the
 *       response attached to it ({@link YarpcException#withResponse}: body, header, application-error
 *       flag), each unless the transport declares it cannot carry them ({@link
 *       TransportUnderTest#errorDetailsLimitation}, {@link TransportUnderTest#errorResponseLimitation});
 *       and, on every transport, the server's release of that attached response's body;
 *   <li>text the wire may not carry ({@link TextTable}: tab, CR, LF, NUL and other controls, DEL,
 *       non-ASCII inside and outside the BMP, 10 KiB) in error messages and names, application-error names
 *       and details, response and request header values: answered before any deadline, arriving as sent or
 *       as the transport declares ({@link TransportUnderTest#expectedErrorText} and its siblings);
 *   <li>2,000 calls with 64 in flight, every response matching its request;
 *   <li>oneway calls (skipped unless {@link TransportUnderTest#supportsOneway()});
 *   <li>streams (skipped unless {@link TransportUnderTest#supportsStreaming()}): echo, server streaming,
 *       client half-close, client cancel seen by the handler, handler errors, stream headers, metadata,
 *       unknown procedure, deadline, and backpressure — a sender stalls while the receiver does not
 *       receive.
 * </ul>
 *
 * <p>No test asserts on elapsed time; waits have generous limits ({@link #WAIT}) that only guard against
 * hangs. A skipped test says why: the declaration of {@link TransportUnderTest} that turned it off, and
 * that declaration's own text where it has one.
 *
 * <h2>Contract points the checks rely on</h2>
 *
 * <p>Besides the Javadoc of the SPI ({@code Inbound}, {@code UnaryOutbound}, {@code OnewayOutbound},
 * {@code StreamOutbound}, {@code Body}), a transport follows these, which the project's transports do:
 *
 * <ul>
 *   <li><b>The service an inbound answers with</b> is the service the call named: HTTP echoes the
 *       request's {@code Rpc-Service} header on every answer, errors included; TChannel sends {@code
 *       $rpc$-service} (the call frame's service) with every call response, and none with an error frame;
 *       gRPC sends the routed call's service in the {@code rpc-service} trailer — the request's {@code
 *       rpc-service}, or, when the request sent none, the default service it was routed to — with a response or a
 *       handler's error, and none when routing failed. Never the dispatcher's own name in its place. An
 *       outbound that reads a service back compares it with the request's (the project's transports call
 *       core's internal {@code io.yarpc.internal.Checks.responseService}): an absent or empty one passes, a
 *       different one fails the call with {@code internal} {@code service name sent from the request does
 *       not match the service name received in the response, sent "S", got: "R"}. (The HTTP outbound
 *       checks every answer, the TChannel outbound every call response, the gRPC outbound the successful
 *       unary responses.)
 *   <li><b>Any thread may complete an outbound's future</b> — an event loop, a library's callback thread.
 *       Core's call path ({@code ClientConfig}) does not hop threads: the caller's future completes on the
 *       thread that completed the outbound's, or on core's timer thread when the deadline passes first, or
 *       on the thread that cancels; so callers must not block in callbacks. What core guarantees the
 *       outbound: the caller's future takes the first of the outbound's outcome, the deadline and the
 *       caller's cancellation, once; when the deadline or the caller wins, the outbound's future is
 *       cancelled ({@code cancel(false)}), also under middleware that wrapped it; a response, or an error's
 *       attached response, with which the outbound completes its future after the caller's future ended
 *       is released by core. When the outbound's own {@code complete} returns false (its future was
 *       cancelled already), what it would have delivered is the outbound's to release.
 *   <li><b>A oneway call is acknowledged</b> once the server's inbound received the whole request, routed
 *       it to a oneway procedure with a TTL and handed it to a dispatcher that is not stopping. The
 *       acknowledgement does not wait for the handler, and the handler's outcome never reaches the caller;
 *       the server only logs it. That includes a call the dispatcher turns away for load ({@code
 *       resource-exhausted}: a procedure's {@code maxConcurrentCalls}, a full handler executor), which is
 *       acknowledged like a handler's failure. Before that point the caller gets the error: unknown
 *       service or procedure, {@code missing TTL}, a dispatcher that is stopping ({@code unavailable}). The
 *       HTTP inbound answers an empty success response right after handing the call to the dispatcher, and
 *       the HTTP outbound completes its future when that answer arrives; the in-memory transport
 *       acknowledges at the same point.
 *   <li><b>What core does for every outbound</b>, so a transport does not: it fills in the caller, the
 *       service and the transport's name, and from the current {@code Call} the earlier deadline, its
 *       cancellation and the caller procedure; validates the metadata ({@code missing service name,
 *       procedure, caller name, encoding}) and refuses a unary or oneway call without a deadline ({@code
 *       missing TTL}), before anything is sent; fails a call whose deadline already passed, or whose
 *       current {@code Call} is cancelled, without calling the outbound; arms the one deadline timer of a
 *       unary or oneway call and cancels the outbound's future when it fires or the caller cancels;
 *       releases late responses (above) and cancels a stream established after its caller gave up. Its
 *       {@code io.yarpc.peer.PeerCalls.choose} does the peer step: fails the call when the chooser fails,
 *       gives up the choice when the call ends first, finishes a lease that arrives late and releases the
 *       request on those paths. The outbound's part: the wire work, releasing the request body on its own
 *       paths, sending the remaining TTL, stopping the exchange when its future is cancelled, mapping wire
 *       errors to codes, checking the response's service; no deadline timer of its own (a stream has no
 *       core timer: the transport bounds a stream by its deadline).
 * </ul>
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class TransportConformanceSuite {
  /** The server dispatcher's service name. */
  public static final String SERVER = "conformance-server";

  /** The client dispatcher's service name. */
  public static final String CLIENT = "conformance-client";

  /**
   * How long a wait for the other side may take before the suite calls it a hang (waits for what one side
   * does alone are shorter: 3 s).
   */
  public static final Duration WAIT = Duration.ofSeconds(10);

  /**
   * How long the suite waits for what only the client's side has to do (a cancelled stream failing its
   * own receive, core's deadline timer failing a call), and for a handler that may never start: no
   * network round trip to wait for, so shorter than {@link #WAIT}.
   */
  private static final Duration LOCAL_WAIT = Duration.ofSeconds(3);

  /**
   * How long a test waits for a handler's verdict on a cancellation: longer than the handler's own wait
   * ({@link #WAIT}), so the handler, not the test, decides that no cancellation came.
   */
  private static final Duration HANDLER_VERDICT_WAIT = WAIT.plusSeconds(5);

  private static final int KIB = 1024;
  private static final int MIB = 1024 * 1024;
  private static final int FLOW_MESSAGE_SIZE = 64 * KIB;
  private static final int RENDEZVOUS_CALLS = 64;
  private static final long QUIET_NANOS = TimeUnit.MILLISECONDS.toNanos(300);
  private static final String RAW = "raw";

  private TransportUnderTest transport;
  private Dispatcher server;
  private Dispatcher client;
  private final BodyTracker sentBodies = new BodyTracker();
  private final BodyTracker errorResponseBodies = new BodyTracker();
  private final Queue<String> serverProblems = new ConcurrentLinkedQueue<>();
  private final CountDownLatch handlerStarted = new CountDownLatch(1);
  private final CountDownLatch rendezvous = new CountDownLatch(RENDEZVOUS_CALLS);
  private final CompletableFuture<Code> serverCancellation = new CompletableFuture<>();
  private final CompletableFuture<byte[]> onewayReceived = new CompletableFuture<>();
  private final CompletableFuture<String> streamServerOutcome = new CompletableFuture<>();
  private final AtomicInteger flowSendsCompleted = new AtomicInteger();
  private final AtomicInteger textRequestsServed = new AtomicInteger();

  /** For subclasses. */
  protected TransportConformanceSuite() {}

  /**
   * The transport for the next test: a new server end and the client end pointing at it. Called once
   * before every test; share expensive resources (event loops) between calls if you like, the suite
   * closes each instance after its test.
   */
  protected abstract TransportUnderTest newTransport() throws Exception;

  // ---- lifecycle
  // ----------------------------------------------------------------------------------

  /** Starts the server dispatcher with the suite's procedures, then the client dispatcher. */
  @BeforeEach
  public final void startDispatchers() throws Exception {
    transport = newTransport();
    // Both dispatchers log start and stop at DEBUG (logLifecycle(false)): four INFO lines per test
    // would bury the output; warnings and errors still show.
    server =
        Dispatcher.builder(SERVER)
            .inbound(transport.serverInbounds().toArray(new Inbound[0]))
            .shutdownGracePeriod(
                Duration.ofSeconds(2)) // every test ends its calls; only failures need it
            .logLifecycle(false)
            .build();
    server.register(procedures());
    server.start();
    client =
        Dispatcher.builder(CLIENT)
            .outbound(SERVER, transport.clientOutbounds())
            .logLifecycle(false)
            .build();
    client.start();
  }

  /**
   * Stops the client, then the server dispatcher; checks the suite's bodies and the transport's buffers;
   * closes the transport.
   */
  @AfterEach
  public final void stopDispatchers() throws Exception {
    try {
      if (client != null) {
        client.stop();
      }
    } finally {
      try {
        if (server != null) {
          server.stop();
        }
      } finally {
        try {
          assertThat(serverProblems).as("problems seen by the server's handlers").isEmpty();
          sentBodies.assertAllReleased();
          if (transport != null) {
            transport.assertNoLeaks();
          }
        } finally {
          if (transport != null) {
            transport.close();
          }
        }
      }
    }
  }

  /** The transport of the running test. */
  protected final TransportUnderTest transport() {
    return transport;
  }

  /** The client config for {@value #SERVER} of the running test. */
  protected final ClientConfig clientConfig() {
    return client.clientConfig(SERVER);
  }

  /** The server dispatcher of the running test, e.g. to register more procedures. */
  protected final Dispatcher serverDispatcher() {
    return server;
  }

  /** The client dispatcher of the running test. */
  protected final Dispatcher clientDispatcher() {
    return client;
  }

  // ---- unary: bodies
  // ------------------------------------------------------------------------------

  /** Transport-level unary round trip of a byte-access body. */
  @ParameterizedTest(name = "{0} bytes")
  @ValueSource(ints = {0, 1, 64 * KIB, 4 * MIB})
  public void bodyRoundTrip(int size) throws Exception {
    byte[] bytes = randomBytes(size, size);
    assertThat(callBody("body-echo", track(Body.of(bytes), "request body"))).isEqualTo(bytes);
  }

  /** A lazy request body is written by the transport and arrives whole. */
  @Test
  public void lazyRequestBody() throws Exception {
    byte[] bytes = randomBytes(200 * KIB, 7);
    Body lazy = track(Body.lazy(bytes.length, out -> out.write(bytes)), "lazy request body");
    assertThat(callBody("body-echo", lazy)).isEqualTo(bytes);
  }

  /** A lazy response body is written by the server transport and arrives whole. */
  @Test
  public void lazyResponseBody() throws Exception {
    byte[] bytes = randomBytes(200 * KIB, 8);
    assertThat(callBody("body-lazy-echo", track(Body.of(bytes), "request body"))).isEqualTo(bytes);
  }

  /** A request body of unknown length, without byte access, arrives whole. */
  @Test
  public void unknownLengthRequestBody() throws Exception {
    byte[] bytes = randomBytes(100 * KIB, 9);
    Body body = track(Body.of(new ByteArrayInputStream(bytes), -1), "stream request body");
    assertThat(callBody("body-echo", body)).isEqualTo(bytes);
  }

  /** Received bodies (the server's request, the client's response) hold their bytes and offer byte access. */
  @Test
  public void receivedBodiesOfferByteAccess() throws Exception {
    byte[] bytes = randomBytes(100_000, 10);
    Response response =
        await(
            clientConfig()
                .call(Request.of(meta("body-inspect"), track(Body.of(bytes), "request"))));
    try {
      assertThat(response.body().hasByteAccess())
          .as("the client's response body offers byte access")
          .isTrue();
      assertThat(new String(response.body().toByteArray(), UTF_8))
          .as("what the server's handler saw of the request body")
          .isEqualTo("byteAccess=true length=100000");
    } finally {
      response.body().release();
    }
  }

  /** Raw-encoding unary round trip. */
  @ParameterizedTest(name = "{0} bytes")
  @ValueSource(ints = {0, 1, 64 * KIB, 4 * MIB})
  public void rawRoundTrip(int size) throws Exception {
    byte[] bytes = randomBytes(size, size + 1);
    assertThat(await(raw().call("raw-echo", bytes, options()))).isEqualTo(bytes);
  }

  /**
   * One deadline timer per unary call on each side, both core's: the client's call path arms one, the
   * server's dispatcher one; the transport arms none (its outbound's future is cancelled by the call path,
   * its inbound's handler is bounded by the dispatcher). Counted on core's shared timer; a transport that
   * keeps a timer of its own on an event loop is caught by code review and the duplicate-code check.
   */
  @Test
  public void oneDeadlineTimerPerUnaryCallOnEachSide() throws Exception {
    await(raw().call("raw-echo", new byte[] {1}, options())); // warm up: connections, peers
    int calls = 20;
    long before = io.yarpc.internal.Timers.scheduledTotal();
    for (int i = 0; i < calls; i++) {
      assertThat(await(raw().call("raw-echo", new byte[] {(byte) i}, options())))
          .containsExactly((byte) i);
    }
    assertThat(io.yarpc.internal.Timers.scheduledTotal() - before)
        .as("timers armed for %d calls", calls)
        .isEqualTo(2L * calls);
  }

  /** JSON-encoding unary round trip. */
  @ParameterizedTest(name = "{0} characters")
  @ValueSource(ints = {0, 1, 64 * KIB, 4 * MIB})
  public void jsonRoundTrip(int size) throws Exception {
    Payload request = new Payload(randomText(size, size + 2), size);
    Payload response = await(json().call("json-echo", request, Payload.class, options()));
    assertThat(response.data).isEqualTo(request.data);
    assertThat(response.number).isEqualTo(size);
  }

  // ---- unary: metadata and headers
  // ------------------------------------------------------------------

  /** Every request metadata field and the deadline reach the server. */
  @Test
  public void requestMetadataReachesServer() throws Exception {
    RequestMeta meta =
        RequestMeta.builder()
            .procedure("body-meta")
            .encoding(RAW)
            .shardKey("shard-7")
            .routingKey("routing-key")
            .routingDelegate("routing-delegate")
            .callerProcedure("caller-procedure")
            .headers(Headers.of("echo-meta", "meta-value"))
            .deadline(Deadline.after(WAIT))
            .build();
    Map<String, String> seen = parseLines(callBody(meta, track(Body.empty(), "request")));
    assertThat(seen)
        .containsEntry("caller", CLIENT)
        .containsEntry("service", SERVER)
        .containsEntry("procedure", "body-meta")
        .containsEntry("encoding", RAW)
        .containsEntry("shardKey", "shard-7")
        .containsEntry("routingKey", "routing-key")
        .containsEntry("routingDelegate", "routing-delegate")
        .containsEntry("callerProcedure", "caller-procedure")
        .containsEntry("header", "meta-value");
    assertThat(seen.get("transport")).as("the inbound's transport name").isNotEmpty();
    assertThat(seen.get("deadline")).as("the server's deadline").isNotEqualTo("none");
    assertThat(Long.parseLong(seen.get("deadline")))
        .as("remaining milliseconds of the server's deadline")
        .isPositive()
        .isLessThanOrEqualTo(WAIT.toMillis());
  }

  /** Application headers echoed by a transport-level handler come back as response headers. */
  @Test
  public void headersRoundTripAtTransportLevel() throws Exception {
    RequestMeta meta = meta("body-echo").toBuilder().headers(echoHeaders()).build();
    Response response =
        await(clientConfig().call(Request.of(meta, track(Body.empty(), "request"))));
    response.body().release();
    assertEchoed(response.headers());
  }

  /** Application headers echoed by a raw handler come back as response headers. */
  @Test
  public void headersRoundTripWithRaw() throws Exception {
    CallOptions options = CallOptions.builder().timeout(WAIT).headers(echoHeaders()).build();
    Reply<byte[]> reply = await(raw().callForReply("raw-echo", new byte[] {1}, options));
    assertThat(reply.value()).containsExactly(1);
    assertEchoed(reply.headers());
  }

  /** Application headers echoed by a JSON handler come back as response headers. */
  @Test
  public void headersRoundTripWithJson() throws Exception {
    CallOptions options = CallOptions.builder().timeout(WAIT).headers(echoHeaders()).build();
    Reply<Payload> reply =
        await(json().callForReply("json-echo", new Payload("x", 1), Payload.class, options));
    assertThat(reply.value().data).isEqualTo("x");
    assertEchoed(reply.headers());
  }

  // ---- unary: errors
  // ------------------------------------------------------------------------------

  /** A handler's error reaches the client with its code and message, for every code. */
  @ParameterizedTest(name = "{0}")
  @EnumSource(value = Code.class, names = "OK", mode = EnumSource.Mode.EXCLUDE)
  public void errorCodeRoundTrip(Code code) throws Exception {
    YarpcException e = failure(raw().call("raw-error", code.wireName().getBytes(UTF_8), options()));
    assertError(e, transport.expectedErrorCode(code), "error message for " + code.wireName());
  }

  /** An error's name reaches the client. */
  @Test
  public void errorNameRoundTrip() throws Exception {
    YarpcException e = failure(raw().call("raw-named-error", new byte[0], options()));
    assertError(e, transport.expectedErrorCode(Code.ABORTED), "named error");
    assertThat(e.name()).as("the error's name").isEqualTo("ConformanceError");
  }

  /** A response flagged as an application error keeps its body, headers and meta. */
  @Test
  public void applicationErrorWithMeta() throws Exception {
    Response response =
        await(
            clientConfig()
                .call(Request.of(meta("body-app-error"), track(Body.empty(), "request"))));
    try {
      assertThat(response.isApplicationError()).as("application error flag").isTrue();
      assertThat(response.applicationErrorMeta())
          .isEqualTo(transport.expectedApplicationErrorMeta(APP_ERROR_META));
      assertThat(response.headers().get("echo-app")).isEqualTo("yes");
      assertThat(new String(response.body().toByteArray(), UTF_8)).isEqualTo("app-error-body");
    } finally {
      response.body().release();
    }
  }

  /**
   * An error's details bytes ({@link YarpcException#withDetails}; here a serialised {@code google.rpc.Status}
   * whose code and message are the error's, with one binary detail holding every byte value, as the
   * protobuf encoding sends them) reach the caller byte for byte, with the error's code and message. (That
   * form is the one gRPC can carry at all, in {@code grpc-status-details-bin}; HTTP sends the raw bytes as
   * the body of its both-response-error answer.) Skipped, with the transport's reason, when it declares {@link
   * TransportUnderTest#errorDetailsLimitation()}.
   */
  @Test
  public void errorDetailsRoundTrip() throws Exception {
    String limitation = transport.errorDetailsLimitation();
    assumeTrue(limitation == null, () -> declared("errorDetailsLimitation()", limitation));
    YarpcException e =
        failure(
            clientConfig().call(Request.of(meta("error-details"), track(Body.empty(), "request"))));
    assertError(e, transport.expectedErrorCode(Code.FAILED_PRECONDITION), DETAILS_MESSAGE);
    assertSameBytes(
        "the error's details bytes (YarpcException.details(); the handler sent them with"
            + " withDetails)",
        e.details(),
        ERROR_DETAILS);
  }

  /**
   * The response a handler attaches to its error ({@link YarpcException#withResponse}: an 8 KiB binary
   * body, an application header, the application-error flag; what the encodings attach, and what HTTP's
   * both-response-error form and gRPC carry) arrives with the error on the client, intact. The suite
   * releases the client's copy after checking it. Skipped, with the transport's reason, when it declares
   * {@link TransportUnderTest#errorResponseLimitation()}.
   */
  @Test
  public void errorResponseRoundTrip() throws Exception {
    String limitation = transport.errorResponseLimitation();
    assumeTrue(limitation == null, () -> declared("errorResponseLimitation()", limitation));
    YarpcException e =
        failureWithResponse(
            clientConfig().call(Request.of(meta("error-response"), track(Body.empty(), "request"))),
            WAIT,
            "the call to fail");
    Response attached = e.response();
    try {
      assertError(e, transport.expectedErrorCode(Code.FAILED_PRECONDITION), RESPONSE_MESSAGE);
      if (attached == null) {
        throw new AssertionError(
            "the error arrived without the response the handler attached to it"
                + " (YarpcException.response() is null; the handler sent a body of "
                + ERROR_RESPONSE_BODY.length
                + " bytes and the header echo-error-response with withResponse)");
      }
      assertThat(attached.headers().get("echo-error-response"))
          .as("the application header of the response attached to the error")
          .isEqualTo("attached");
      assertThat(attached.isApplicationError())
          .as("the application-error flag of the response attached to the error")
          .isTrue();
      assertSameBytes(
          "the body of the response attached to the error",
          attached.body().toByteArray(),
          ERROR_RESPONSE_BODY);
    } finally {
      if (attached != null) {
        attached.body().release();
      }
    }
  }

  /**
   * The server's inbound releases the body of the response attached to a handler's error — once written,
   * or once it cannot be — whether or not its wire carries that response to the client.
   */
  @Test
  public void errorResponseBodyReleasedByServer() throws Exception {
    YarpcException e =
        failure(
            clientConfig()
                .call(Request.of(meta("error-response"), track(Body.empty(), "request"))));
    assertError(e, transport.expectedErrorCode(Code.FAILED_PRECONDITION), RESPONSE_MESSAGE);
    if (!errorResponseBodies.awaitAllReleased(WAIT)) {
      throw new AssertionError(
          "the server's inbound never released the body of the response attached to the handler's"
              + " error (YarpcException.withResponse): the inbound owns it once the handler's future"
              + " fails, and must release it exactly once, written or not");
    }
    assertThat(errorResponseBodies.violations())
        .as("uses of the attached response's body after its release, on the server")
        .isEmpty();
  }

  /**
   * A handler's plain exception becomes {@code unknown} with yarpc-go's message, whose exception text the
   * server keeps to itself (no class name or internal message reaches the wire).
   */
  @Test
  public void handlerExceptionIsUnknown() throws Exception {
    YarpcException e = failure(raw().call("boom", new byte[0], options()));
    assertError(
        e,
        transport.expectedErrorCode(Code.UNKNOWN),
        "error for service \"conformance-server\" and procedure \"boom\": unexpected error (the server logged it)");
  }

  /** A call without timeout outside any handler fails with {@code missing TTL}. */
  @Test
  public void missingDeadline() throws Exception {
    RequestMeta meta = RequestMeta.builder().procedure("body-echo").encoding(RAW).build();
    YarpcException e =
        failure(clientConfig().call(Request.of(meta, track(Body.of(new byte[] {1}), "request"))));
    assertCode(e, Code.INVALID_ARGUMENT);
    assertThat(e.getMessage())
        .as("the message of the client's missing-TTL error")
        .startsWith("missing TTL: the call to procedure \"body-echo\"");
  }

  /** A call to an unknown service fails with yarpc-go's message. */
  @Test
  public void unknownService() throws Exception {
    RequestMeta meta = meta("body-echo").toBuilder().service("x").build();
    YarpcException e =
        failure(clientConfig().call(Request.of(meta, track(Body.of(new byte[] {1}), "request"))));
    assertError(
        e,
        transport.expectedErrorCode(Code.UNIMPLEMENTED),
        "unrecognized service name \"x\", available services: \"conformance-server\"");
  }

  /** A call to an unknown procedure fails with yarpc-go's message. */
  @Test
  public void unknownProcedure() throws Exception {
    YarpcException e =
        failure(
            clientConfig()
                .call(Request.of(meta("nope"), track(Body.of(new byte[] {1}), "request"))));
    assertError(
        e,
        transport.expectedErrorCode(Code.UNIMPLEMENTED),
        "unrecognized procedure \"nope\" for service \"conformance-server\"");
  }

  /**
   * A handler still running at its deadline: the client's call fails with {@code deadline-exceeded}
   * (core's timer, on the client), and the server's handler sees its call cancelled (by the deadline the
   * inbound started from the TTL the client sent, or by the client's outbound stopping the exchange). On a
   * machine so slow that the request arrives after its deadline, the handler never runs: the test then
   * reports itself skipped, with that reason, after checking the client's side.
   */
  @Test
  public void deadlineExceededWhileHandlerRuns() throws Exception {
    CallOptions shortDeadline = CallOptions.timeout(Duration.ofMillis(100));
    YarpcException e =
        failure(
            raw().call("raw-wait-for-cancel", new byte[] {1}, shortDeadline),
            LOCAL_WAIT,
            "the client's call to fail with deadline-exceeded after its 100 ms deadline");
    assertCode(e, Code.DEADLINE_EXCEEDED);
    // A request that arrives after its deadline is refused before the handler runs: the server's
    // side can then not be checked.
    assumeTrue(
        handlerStarted.await(LOCAL_WAIT.toMillis(), TimeUnit.MILLISECONDS),
        "the 100 ms deadline passed before the server's handler started (a slow machine): only the"
            + " client's side was checked");
    Code why = await(serverCancellation, "the server's handler to end", HANDLER_VERDICT_WAIT);
    if (why == null) {
      throw new AssertionError(
          "the client's call failed with deadline-exceeded, but the server's handler never saw the"
              + " deadline pass: its Call was not cancelled within "
              + WAIT
              + " (the inbound must give the handler the TTL the client sent, and cancel the handler"
              + " when the exchange stops)");
    }
    assertThat(why)
        .as("why the server's call was cancelled after its deadline passed")
        .isIn(Code.DEADLINE_EXCEEDED, Code.CANCELLED);
  }

  /**
   * Cancelling the client's future cancels the call on the server: core's call path cancels the
   * outbound's future, the outbound stops the exchange, the inbound cancels the handler's future.
   */
  @Test
  public void clientCancellationReachesServer() throws Exception {
    CompletableFuture<byte[]> call =
        raw()
            .call("raw-wait-for-cancel", new byte[] {1}, CallOptions.timeout(WAIT.multipliedBy(3)));
    assertThat(handlerStarted.await(WAIT.toMillis(), TimeUnit.MILLISECONDS))
        .as("the server's handler started")
        .isTrue();
    assertThat(call.cancel(true))
        .as("the client's call was still waiting for the handler when cancelled (%s)", call)
        .isTrue();
    Code why = await(serverCancellation, "the server's handler to end", HANDLER_VERDICT_WAIT);
    if (why == null) {
      throw new AssertionError(
          "the client cancelled its call, but the server's handler never saw the cancellation: its"
              + " Call was not cancelled within "
              + WAIT
              + " (the outbound must stop the exchange when its future is cancelled, and the inbound"
              + " must then cancel the handler's future)");
    }
    assertThat(why).as("why the server's call was cancelled").isEqualTo(Code.CANCELLED);
  }

  // ---- unary: text the wire may not carry
  // -------------------------------------------------------------

  /**
   * A handler's error message holding control characters, non-ASCII or a lot of text is answered before
   * any deadline, with the message as sent or in the transport's documented form
   * ({@link TransportUnderTest#expectedErrorText}).
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("io.yarpc.testing.TextTable#rows")
  public void errorMessageText(TextTable.Row row) throws Exception {
    YarpcException e = failure(raw().call("text-error", row.text().getBytes(UTF_8), textOptions()));
    assertCode(e, transport.expectedErrorCode(Code.FAILED_PRECONDITION));
    TextTable.assertErrorText(transport, "the error message", e.getMessage(), row.text());
  }

  /** An error's name holding such text reaches the client as sent or in the transport's documented form. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("io.yarpc.testing.TextTable#rows")
  public void errorNameText(TextTable.Row row) throws Exception {
    YarpcException e =
        failure(raw().call("text-named-error", row.text().getBytes(UTF_8), textOptions()));
    assertError(e, transport.expectedErrorCode(Code.ABORTED), "named error");
    TextTable.assertErrorText(transport, "the error name", e.name(), row.text());
  }

  /**
   * An application error whose name and details hold such text: the response arrives, the name as sent
   * (or in the transport's form), the details cut to 256 bytes first.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("io.yarpc.testing.TextTable#rows")
  public void applicationErrorText(TextTable.Row row) throws Exception {
    Response response =
        await(
            clientConfig()
                .call(
                    Request.of(
                        textMeta("text-app-error"),
                        track(Body.of(row.text().getBytes(UTF_8)), "request"))));
    try {
      assertThat(response.isApplicationError()).as("application error flag").isTrue();
      ApplicationErrorMeta got = response.applicationErrorMeta();
      String details = transport.expectedErrorText(TextTable.truncatedDetails(row.text()));
      ApplicationErrorMeta expected =
          transport.expectedApplicationErrorMeta(
              new ApplicationErrorMeta(Code.FAILED_PRECONDITION, row.text(), details));
      assertThat(got.code()).as("the application error's code").isEqualTo(expected.code());
      TextTable.assertErrorText(
          transport, "the application error's name", got.name(), expected.name());
      TextTable.assertText("the application error's details", got.details(), expected.details());
      assertThat(new String(response.body().toByteArray(), UTF_8)).isEqualTo("app-error-body");
    } finally {
      response.body().release();
    }
  }

  /**
   * A response header holding such text: the response arrives with the header as sent, in the transport's
   * form, or without it when the wire cannot carry it ({@link TransportUnderTest#expectedResponseHeaderValue}).
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("io.yarpc.testing.TextTable#shortRows")
  public void responseHeaderText(TextTable.Row row) throws Exception {
    Response response =
        await(
            clientConfig()
                .call(
                    Request.of(
                        textMeta("text-response-header"),
                        track(Body.of(row.text().getBytes(UTF_8)), "request"))));
    try {
      assertThat(new String(response.body().toByteArray(), UTF_8)).isEqualTo("ok");
      TextTable.assertText(
          "the response header",
          response.headers().get("echo-text"),
          transport.expectedResponseHeaderValue(row.text()));
    } finally {
      response.body().release();
    }
  }

  /**
   * A request header holding such text reaches the handler as sent or in the transport's form, or the
   * client refuses the call with {@code invalid-argument} without sending it
   * ({@link TransportUnderTest#expectedRequestHeaderValue}).
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("io.yarpc.testing.TextTable#shortRows")
  public void requestHeaderText(TextTable.Row row) throws Exception {
    String expected = transport.expectedRequestHeaderValue(row.text());
    RequestMeta meta =
        textMeta("text-request-header").toBuilder()
            .headers(Headers.of("echo-text", row.text()))
            .build();
    CompletableFuture<Response> call =
        clientConfig().call(Request.of(meta, track(Body.empty(), "request")));
    if (expected == null) {
      YarpcException e = failure(call);
      assertCode(e, Code.INVALID_ARGUMENT);
      assertThat(textRequestsServed.get()).as("requests the handler saw").isZero();
    } else {
      Response response = await(call);
      try {
        TextTable.assertText(
            "what the handler saw",
            new String(response.body().toByteArray(), UTF_8),
            "value=" + expected);
      } finally {
        response.body().release();
      }
    }
  }

  // ---- unary: load
  // --------------------------------------------------------------------------------

  /** 2,000 calls, 64 in flight: every response matches its request. */
  @Test
  public void manyConcurrentCalls() throws Exception {
    int calls = 2000;
    Semaphore slots = new Semaphore(64);
    Queue<String> problems = new ConcurrentLinkedQueue<>();
    List<CompletableFuture<?>> all = new ArrayList<>(calls);
    ClientConfig cc = clientConfig();
    for (int i = 0; i < calls; i++) {
      assertThat(slots.tryAcquire(WAIT.toMillis(), TimeUnit.MILLISECONDS))
          .as("a call slot freed up")
          .isTrue();
      int n = i;
      byte[] payload = numberedPayload(n);
      CompletableFuture<Response> call =
          cc.call(Request.of(meta("body-echo"), track(Body.of(payload), "request #" + n)));
      all.add(
          call.handle(
              (response, error) -> {
                try {
                  if (error != null) {
                    problems.add("call #" + n + " failed: " + error);
                  } else if (!Arrays.equals(response.body().toByteArray(), payload)) {
                    problems.add("call #" + n + " got another call's or a corrupt body");
                  }
                } finally {
                  if (response != null) {
                    response.body().release();
                  }
                  slots.release();
                }
                return null;
              }));
    }
    await(
        CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0])), "all calls to complete");
    assertThat(problems).isEmpty();
  }

  /**
   * {@value #RENDEZVOUS_CALLS} calls whose handlers each block until all of them have started: the
   * default handler executor gives a blocked handler's waiting call a thread of its own (a pool that kept
   * to a few threads would leave the rest queued behind the blocked ones, and every call would fail with
   * the rendezvous's timeout).
   */
  @Test
  public void blockingHandlersDoNotHoldOthersBack() throws Exception {
    List<CompletableFuture<byte[]>> calls = new ArrayList<>(RENDEZVOUS_CALLS);
    for (int i = 0; i < RENDEZVOUS_CALLS; i++) {
      calls.add(raw().call("raw-rendezvous", new byte[] {(byte) i}, options()));
    }
    for (int i = 0; i < RENDEZVOUS_CALLS; i++) {
      assertThat(await(calls.get(i))).as("call #" + i).containsExactly((byte) i);
    }
  }

  // ---- oneway
  // -------------------------------------------------------------------------------------

  /** A oneway call is acknowledged and its handler sees the body. */
  @ParameterizedTest(name = "{0} bytes")
  @ValueSource(ints = {0, 64 * KIB})
  public void oneway(int size) throws Exception {
    assumeOneway();
    byte[] bytes = randomBytes(size, size + 3);
    await(raw().callOneway("raw-oneway", bytes, options()));
    assertThat(await(onewayReceived, "the oneway handler to run")).isEqualTo(bytes);
  }

  /** A oneway call to an unknown procedure fails: nothing acknowledged what no handler accepted. */
  @Test
  public void onewayUnknownProcedure() throws Exception {
    assumeOneway();
    YarpcException e = failure(raw().callOneway("nope", new byte[] {1}, options()));
    assertError(
        e,
        transport.expectedErrorCode(Code.UNIMPLEMENTED),
        "unrecognized procedure \"nope\" for service \"conformance-server\"");
  }

  // ---- streams
  // ------------------------------------------------------------------------------------

  /** The client sends N messages one by one, the server echoes each, the client half-closes. */
  @Test
  public void streamEcho() throws Exception {
    assumeStreaming();
    ClientStream stream = open("stream-echo");
    for (int i = 0; i < 100; i++) {
      byte[] bytes = randomBytes(i * 100, i);
      await(stream.send(message(bytes, "client message #" + i)));
      assertThat(receiveBytes(stream)).as("echo of message #%d", i).isEqualTo(bytes);
    }
    stream.halfClose();
    assertEndOfStream(stream);
  }

  /** One request message, then many response messages. */
  @Test
  public void serverStreaming() throws Exception {
    assumeStreaming();
    ClientStream stream = open("stream-server");
    await(stream.send(message(intBytes(50), "count")));
    stream.halfClose();
    for (int i = 0; i < 50; i++) {
      byte[] got = receiveBytes(stream);
      assertThat(got).as("message #%d", i).isEqualTo(numberedMessage(i, i * 1000));
    }
    assertEndOfStream(stream);
  }

  /** The server sees the client's half-close as end of stream, and the client still receives after it. */
  @Test
  public void clientHalfClose() throws Exception {
    assumeStreaming();
    ClientStream stream = open("stream-count");
    for (int i = 0; i < 3; i++) {
      await(stream.send(message(randomBytes(10, i), "client message #" + i)));
    }
    stream.halfClose();
    assertThat(new String(receiveBytes(stream), UTF_8))
        .as("messages the server counted")
        .isEqualTo("3");
    assertEndOfStream(stream);
  }

  /**
   * The client cancels: its own receive fails with {@code cancelled} at once (the client's stream), and
   * the handler's receive fails with {@code cancelled} (the server's inbound).
   */
  @Test
  public void clientCancelIsSeenByServer() throws Exception {
    assumeStreaming();
    ClientStream stream = open("stream-cancel");
    await(stream.send(message(new byte[] {1}, "client message")));
    assertThat(handlerStarted.await(WAIT.toMillis(), TimeUnit.MILLISECONDS))
        .as("the server's handler got a message")
        .isTrue();
    stream.cancel();
    YarpcException e =
        failure(
            stream.receive(),
            LOCAL_WAIT,
            "the client's receive() to fail after its own ClientStream.cancel() (the client's stream"
                + " was not cancelled)");
    if (e.code() != Code.CANCELLED) {
      throw new AssertionError(
          "the client's stream was not cancelled as such: its receive() after ClientStream.cancel()"
              + " failed with "
              + describe(e)
              + ", not cancelled",
          e);
    }
    String outcome = await(streamServerOutcome, "the stream handler to end", HANDLER_VERDICT_WAIT);
    assertThat(outcome)
        .as(
            "what the server's stream handler saw after the client cancelled (the client's side"
                + " was cancelled; the inbound must fail the handler's receive with cancelled)")
        .isEqualTo(Code.CANCELLED.wireName());
  }

  /** A handler that fails ends the stream with its code and message on the client's receive. */
  @Test
  public void streamHandlerError() throws Exception {
    assumeStreaming();
    ClientStream stream = open("stream-error");
    await(stream.send(message(new byte[] {1}, "client message")));
    YarpcException e = failure(stream.receive());
    assertError(e, transport.expectedErrorCode(Code.PERMISSION_DENIED), "stream refused");
  }

  /** Stream headers reach the client; a second {@code sendHeaders} after a message is refused. */
  @Test
  public void streamHeaders() throws Exception {
    assumeStreaming();
    assumeTrue(
        transport.supportsStreamHeaders(),
        () -> declared("supportsStreamHeaders() = false", "the transport sends no stream headers"));
    ClientStream stream = open("stream-headers");
    stream.halfClose();
    Headers headers = await(stream.headers(), "stream headers");
    assertThat(headers.get("Echo-Stream-Header")).isEqualTo("header-value");
    assertThat(new String(receiveBytes(stream), UTF_8)).isEqualTo("after headers");
    assertEndOfStream(stream);
    assertThat(await(streamServerOutcome, "the handler to end"))
        .isEqualTo("second sendHeaders refused");
  }

  /** The stream's metadata reaches the handler. */
  @Test
  public void streamMetadataReachesServer() throws Exception {
    assumeStreaming();
    RequestMeta meta =
        RequestMeta.builder()
            .procedure("stream-meta")
            .encoding(RAW)
            .shardKey("shard-7")
            .routingKey("routing-key")
            .routingDelegate("routing-delegate")
            .callerProcedure("caller-procedure")
            .headers(Headers.of("echo-meta", "meta-value"))
            .build();
    ClientStream stream = await(clientConfig().callStream(meta), "the stream to open");
    stream.halfClose();
    Map<String, String> seen = parseLines(receiveBytes(stream));
    assertEndOfStream(stream);
    assertThat(seen)
        .containsEntry("caller", CLIENT)
        .containsEntry("service", SERVER)
        .containsEntry("procedure", "stream-meta")
        .containsEntry("encoding", RAW)
        .containsEntry("shardKey", "shard-7")
        .containsEntry("routingKey", "routing-key")
        .containsEntry("routingDelegate", "routing-delegate")
        .containsEntry("callerProcedure", "caller-procedure")
        .containsEntry("header", "meta-value");
  }

  /** A stream to an unknown procedure fails, when opened or on the first receive. */
  @Test
  public void streamUnknownProcedure() throws Exception {
    assumeStreaming();
    CompletableFuture<ClientStream> opening = clientConfig().callStream(streamMeta("nope"));
    YarpcException e;
    ClientStream stream = null;
    try {
      stream = opening.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      e = failure(stream.receive());
    } catch (ExecutionException failed) {
      e = yarpc(failed.getCause());
    } finally {
      if (stream != null) {
        stream.cancel();
      }
    }
    assertError(
        e,
        transport.expectedErrorCode(Code.UNIMPLEMENTED),
        "unrecognized procedure \"nope\" for service \"conformance-server\"");
  }

  /** A stream that outlives its deadline fails with {@code deadline-exceeded}. */
  @Test
  public void streamDeadlineExceeded() throws Exception {
    assumeStreaming();
    RequestMeta meta =
        streamMeta("stream-wait").toBuilder()
            .deadline(Deadline.after(Duration.ofMillis(200)))
            .build();
    ClientStream stream;
    try {
      stream = clientConfig().callStream(meta).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException failed) { // the deadline passed before the stream was up: also fine
      assertCode(yarpc(failed.getCause()), Code.DEADLINE_EXCEEDED);
      return;
    }
    try {
      assertCode(failure(stream.receive()), Code.DEADLINE_EXCEEDED);
    } finally {
      stream.cancel();
    }
  }

  /**
   * Backpressure: while the client does not receive, the handler's sends stall after at most
   * {@link TransportUnderTest#maxBufferedStreamMessages()} messages of 64 KiB; once the client receives
   * again, every message arrives in order.
   */
  @Test
  public void slowReceiverBackpressure() throws Exception {
    assumeStreaming();
    int bound = transport.maxBufferedStreamMessages();
    int received = 4;
    int total = received + bound + 16;
    ClientStream stream = open("stream-flow");
    await(stream.send(message(intBytes(total), "count")));
    stream.halfClose();
    int next = 0;
    for (; next < received; next++) {
      assertThat(receiveBytes(stream)).isEqualTo(numberedMessage(next, FLOW_MESSAGE_SIZE));
    }
    int completed = awaitQuiet(flowSendsCompleted, total);
    assertThat(completed)
        .as(
            "sends the handler completed while the client had received only %d messages (allowed: %d more)",
            received, bound)
        .isLessThanOrEqualTo(received + bound);
    for (; next < total; next++) {
      assertThat(receiveBytes(stream))
          .as("message #%d", next)
          .isEqualTo(numberedMessage(next, FLOW_MESSAGE_SIZE));
    }
    assertEndOfStream(stream);
    assertThat(flowSendsCompleted.get()).isEqualTo(total);
  }

  // ---- the server's procedures
  // ----------------------------------------------------------------------

  private static final ApplicationErrorMeta APP_ERROR_META =
      new ApplicationErrorMeta(
          Code.FAILED_PRECONDITION, "ConformanceError", "the application failed");

  private static final String DETAILS_MESSAGE = "error with details";
  private static final String RESPONSE_MESSAGE = "error with a response";
  private static final byte[] ERROR_DETAILS =
      googleRpcStatus(Code.FAILED_PRECONDITION, DETAILS_MESSAGE);
  private static final byte[] ERROR_RESPONSE_BODY = randomBytes(8 * KIB, 11);

  private List<Procedure> procedures() {
    List<Procedure> p = new ArrayList<>();
    p.add(
        unary(
            "error-details",
            request -> {
              throw YarpcException.of(Code.FAILED_PRECONDITION, DETAILS_MESSAGE)
                  .withDetails(ERROR_DETAILS.clone());
            }));
    p.add(
        unary(
            "error-response",
            request -> {
              Response attached =
                  Response.builder()
                      .applicationError(true)
                      .headers(Headers.of("echo-error-response", "attached"))
                      .body(
                          errorResponseBodies.track(
                              Body.of(ERROR_RESPONSE_BODY.clone()),
                              "the body of the response attached to the handler's error"))
                      .build();
              throw YarpcException.of(Code.FAILED_PRECONDITION, RESPONSE_MESSAGE)
                  .withResponse(attached);
            }));
    p.add(
        unary(
            "body-echo",
            request -> {
              byte[] bytes = request.body().toByteArray();
              return Response.builder()
                  .headers(echoed(request.headers()))
                  .body(track(Body.of(bytes), "body-echo response"))
                  .build();
            }));
    p.add(
        unary(
            "body-lazy-echo",
            request -> {
              byte[] bytes = request.body().toByteArray();
              return Response.of(
                  track(
                      Body.lazy(bytes.length, out -> out.write(bytes)), "body-lazy-echo response"));
            }));
    p.add(
        unary(
            "body-inspect",
            request -> {
              Body in = request.body();
              String seen = "byteAccess=" + in.hasByteAccess() + " length=" + in.length();
              return Response.of(track(Body.of(seen.getBytes(UTF_8)), "body-inspect response"));
            }));
    p.add(
        unary(
            "body-meta",
            request ->
                Response.of(
                    track(
                        Body.of(describe(request.meta()).getBytes(UTF_8)), "body-meta response"))));
    p.add(
        unary(
            "body-app-error",
            request ->
                Response.builder()
                    .applicationError(APP_ERROR_META)
                    .headers(Headers.of("echo-app", "yes"))
                    .body(
                        track(Body.of("app-error-body".getBytes(UTF_8)), "body-app-error response"))
                    .build()));

    p.add(
        Raw.procedure(
            "text-error",
            body -> {
              throw YarpcException.of(Code.FAILED_PRECONDITION, new String(body, UTF_8));
            }));
    p.add(
        Raw.procedure(
            "text-named-error",
            body -> {
              throw YarpcException.of(Code.ABORTED, "named error")
                  .withName(new String(body, UTF_8));
            }));
    p.add(
        unary(
            "text-app-error",
            request -> {
              String text = new String(request.body().toByteArray(), UTF_8);
              return Response.builder()
                  .applicationError(new ApplicationErrorMeta(Code.FAILED_PRECONDITION, text, text))
                  .body(track(Body.of("app-error-body".getBytes(UTF_8)), "text-app-error response"))
                  .build();
            }));
    p.add(
        unary(
            "text-response-header",
            request ->
                Response.builder()
                    .headers(
                        Headers.of("echo-text", new String(request.body().toByteArray(), UTF_8)))
                    .body(track(Body.of("ok".getBytes(UTF_8)), "text-response-header response"))
                    .build()));
    p.add(
        unary(
            "text-request-header",
            request -> {
              textRequestsServed.incrementAndGet();
              String value = request.headers().get("echo-text");
              String seen = value == null ? "absent" : "value=" + value;
              return Response.of(
                  track(Body.of(seen.getBytes(UTF_8)), "text-request-header response"));
            }));

    p.add(
        Raw.procedure(
            "raw-rendezvous",
            body -> {
              rendezvous.countDown();
              if (!rendezvous.await(LOCAL_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw YarpcException.of(
                    Code.DEADLINE_EXCEEDED,
                    rendezvous.getCount() + " of the rendezvous's calls never started");
              }
              return body;
            }));
    p.add(
        Raw.procedure(
            "raw-echo",
            body -> {
              echoResponseHeaders();
              return body;
            }));
    p.add(
        Raw.procedure(
            "raw-error",
            body -> {
              Code code = Code.fromWireName(new String(body, UTF_8));
              throw YarpcException.of(code, "error message for " + code.wireName());
            }));
    p.add(
        Raw.procedure(
            "raw-named-error",
            body -> {
              throw YarpcException.of(Code.ABORTED, "named error").withName("ConformanceError");
            }));
    p.add(
        Raw.procedure(
            "boom",
            body -> {
              throw new RuntimeException("boom");
            }));
    p.add(
        Raw.procedure(
            "raw-wait-for-cancel",
            body -> {
              Call call = Call.current();
              CountDownLatch cancelled = new CountDownLatch(1);
              call.onCancel(cancelled::countDown);
              handlerStarted.countDown();
              if (!cancelled.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                serverCancellation.complete(null); // never cancelled: the test says which side
                return body;
              }
              serverCancellation.complete(call.cancellation().code());
              return body;
            }));
    p.add(Raw.onewayProcedure("raw-oneway", onewayReceived::complete));
    p.add(
        Json.procedure(
            "json-echo",
            Payload.class,
            payload -> {
              echoResponseHeaders();
              return payload;
            }));

    p.add(
        streaming(
            "stream-echo",
            stream -> {
              for (StreamMessage m; (m = receive(stream)) != null; ) {
                byte[] bytes = consume(m);
                await(stream.send(message(bytes, "stream-echo reply")));
              }
            }));
    p.add(
        streaming(
            "stream-server",
            stream -> {
              int count = ByteBuffer.wrap(consume(receive(stream))).getInt();
              expectEnd(stream);
              for (int i = 0; i < count; i++) {
                await(
                    stream.send(
                        message(numberedMessage(i, i * 1000), "stream-server message #" + i)));
              }
            }));
    p.add(
        streaming(
            "stream-count",
            stream -> {
              int count = 0;
              for (StreamMessage m; (m = receive(stream)) != null; ) {
                consume(m);
                count++;
              }
              await(
                  stream.send(
                      message(String.valueOf(count).getBytes(UTF_8), "stream-count reply")));
            }));
    p.add(
        streaming(
            "stream-cancel",
            stream -> {
              consume(receive(stream));
              handlerStarted.countDown();
              try {
                StreamMessage m = stream.receive().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                if (m != null) {
                  m.release();
                }
                streamServerOutcome.complete(
                    m == null
                        ? "end of stream instead of an error"
                        : "a message instead of an error");
              } catch (ExecutionException e) {
                streamServerOutcome.complete(yarpc(e.getCause()).code().wireName());
              } catch (TimeoutException e) {
                streamServerOutcome.complete(
                    "nothing: its receive() was still waiting " + WAIT + " later");
              }
            }));
    p.add(
        Procedure.builder("stream-error")
            .encoding(RAW)
            .streaming(
                stream -> {
                  try {
                    consume(receive(stream));
                  } catch (Exception e) {
                    return CompletableFuture.failedFuture(e);
                  }
                  return CompletableFuture.failedFuture(
                      YarpcException.of(Code.PERMISSION_DENIED, "stream refused"));
                })
            .build());
    p.add(
        streaming(
            "stream-headers",
            stream -> {
              stream.sendHeaders(Headers.of("Echo-Stream-Header", "header-value"));
              await(
                  stream.send(message("after headers".getBytes(UTF_8), "stream-headers message")));
              try {
                stream.sendHeaders(Headers.of("echo-too-late", "x"));
                streamServerOutcome.complete("second sendHeaders accepted");
              } catch (IllegalStateException expected) {
                streamServerOutcome.complete("second sendHeaders refused");
              }
              expectEnd(stream);
            }));
    p.add(
        streaming(
            "stream-meta",
            stream -> {
              expectEnd(stream);
              await(
                  stream.send(
                      message(describe(stream.meta()).getBytes(UTF_8), "stream-meta message")));
            }));
    p.add(
        streaming(
            "stream-wait",
            stream -> {
              try {
                StreamMessage m = stream.receive().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
                if (m != null) {
                  m.release();
                }
              } catch (ExecutionException | TimeoutException expected) {
                // the deadline ended the stream
              }
            }));
    p.add(
        streaming(
            "stream-flow",
            stream -> {
              int count = ByteBuffer.wrap(consume(receive(stream))).getInt();
              for (int i = 0; i < count; i++) {
                await(
                    stream.send(
                        message(
                            numberedMessage(i, FLOW_MESSAGE_SIZE), "stream-flow message #" + i)));
                flowSendsCompleted.incrementAndGet();
              }
              expectEnd(stream);
            }));
    return p;
  }

  /** A blocking unary body of a transport-level handler. */
  private interface UnaryBody {
    Response handle(Request request) throws Exception;
  }

  /** A blocking stream handler body; returning ends the stream with success. */
  private interface StreamBody {
    void handle(ServerStream stream) throws Exception;
  }

  private Procedure unary(String name, UnaryBody body) {
    return Procedure.builder(name)
        .encoding(RAW)
        .unary(
            request -> {
              try {
                return CompletableFuture.completedFuture(body.handle(request));
              } catch (Exception e) {
                return CompletableFuture.failedFuture(e);
              }
            })
        .build();
  }

  private Procedure streaming(String name, StreamBody body) {
    return Procedure.builder(name)
        .encoding(RAW)
        .streaming(
            stream -> {
              try {
                body.handle(stream);
                return CompletableFuture.completedFuture(null);
              } catch (Exception | AssertionError e) {
                serverProblems.add(name + ": " + e);
                return CompletableFuture.failedFuture(e);
              }
            })
        .build();
  }

  private static StreamMessage receive(ServerStream stream) throws Exception {
    return await(stream.receive(), "a stream message");
  }

  private static void expectEnd(ServerStream stream) throws Exception {
    StreamMessage m = receive(stream);
    if (m != null) {
      m.release();
      throw new AssertionError("expected the client's half-close, got a message");
    }
  }

  /** Copies out and releases a received message (which must not be null). */
  private static byte[] consume(StreamMessage m) {
    if (m == null) {
      throw new AssertionError("expected a message, got end of stream");
    }
    try {
      return m.body().toByteArray();
    } finally {
      m.release();
    }
  }

  private static void echoResponseHeaders() {
    Call call = Call.current();
    call.meta()
        .headers()
        .forEach(
            (k, v) -> {
              if (k.startsWith("echo-")) {
                call.setResponseHeader(k, v);
              }
            });
  }

  private static Headers echoed(Headers request) {
    Headers.Builder b = Headers.builder();
    request.forEach(
        (k, v) -> {
          if (k.startsWith("echo-")) {
            b.add(k, v);
          }
        });
    return b.build();
  }

  private static String describe(RequestMeta m) {
    return "caller="
        + m.caller()
        + "\nservice="
        + m.service()
        + "\nprocedure="
        + m.procedure()
        + "\nencoding="
        + m.encoding()
        + "\nshardKey="
        + m.shardKey()
        + "\nroutingKey="
        + m.routingKey()
        + "\nroutingDelegate="
        + m.routingDelegate()
        + "\ncallerProcedure="
        + m.callerProcedure()
        + "\nheader="
        + m.headers().get("echo-meta")
        + "\ntransport="
        + m.transport()
        + "\ndeadline="
        + (m.deadline() == null ? "none" : String.valueOf(m.deadline().remainingMillis()));
  }

  private static Map<String, String> parseLines(byte[] bytes) {
    Map<String, String> map = new LinkedHashMap<>();
    for (String line : new String(bytes, UTF_8).split("\n")) {
      int eq = line.indexOf('=');
      if (eq > 0) {
        map.put(line.substring(0, eq), line.substring(eq + 1));
      }
    }
    return map;
  }

  // ---- client helpers
  // -----------------------------------------------------------------------------

  /** A JSON payload: a string and a number. */
  public static final class Payload {
    /** Text of the requested size. */
    public String data;

    /** A number that must survive the round trip. */
    public long number;

    /** For Gson. */
    public Payload() {}

    /** A payload with these values. */
    public Payload(String data, long number) {
      this.data = data;
      this.number = number;
    }
  }

  private RawClient raw() {
    return RawClient.of(clientConfig());
  }

  private JsonClient json() {
    return JsonClient.of(clientConfig());
  }

  private static CallOptions options() {
    return CallOptions.timeout(WAIT);
  }

  private static RequestMeta meta(String procedure) {
    return RequestMeta.builder()
        .procedure(procedure)
        .encoding(RAW)
        .deadline(Deadline.after(WAIT))
        .build();
  }

  /**
   * Options for the text calls: a deadline well past {@link #WAIT}, so a call that is never answered shows
   * up as a hang the suite reports, not as the deadline's error.
   */
  private static CallOptions textOptions() {
    return CallOptions.timeout(WAIT.multipliedBy(3));
  }

  private static RequestMeta textMeta(String procedure) {
    return meta(procedure).toBuilder().deadline(Deadline.after(WAIT.multipliedBy(3))).build();
  }

  private static RequestMeta streamMeta(String procedure) {
    return RequestMeta.builder().procedure(procedure).encoding(RAW).build();
  }

  private Body track(Body body, String label) {
    return sentBodies.track(body, label);
  }

  private StreamMessage message(byte[] bytes, String label) {
    return StreamMessage.of(track(Body.of(bytes), label));
  }

  private byte[] callBody(String procedure, Body body) throws Exception {
    return callBody(meta(procedure), body);
  }

  private byte[] callBody(RequestMeta meta, Body body) throws Exception {
    Response response = await(clientConfig().call(Request.of(meta, body)));
    try {
      assertThat(response.isApplicationError()).as("application error flag").isFalse();
      return response.body().toByteArray();
    } finally {
      response.body().release();
    }
  }

  private ClientStream open(String procedure) throws Exception {
    // The suite's streams carry no deadline, so choosing a peer for one waits only the default
    // choose timeout, 500 ms (docs/spec/model.md §7.2), which a TLS handshake on a loaded machine
    // can outlast: a call with a deadline connects the client first.
    byte[] connected = callBody("body-echo", track(Body.of(new byte[] {1}), "connect"));
    assertThat(connected).as("the call that connects the client").containsExactly(1);
    return await(clientConfig().callStream(streamMeta(procedure)), "the stream to open");
  }

  private static byte[] receiveBytes(ClientStream stream) throws Exception {
    return consume(await(stream.receive(), "a stream message"));
  }

  private static void assertEndOfStream(ClientStream stream) throws Exception {
    StreamMessage m = await(stream.receive(), "end of stream");
    if (m != null) {
      m.release();
      throw new AssertionError("expected end of stream, got a message");
    }
  }

  private void assumeStreaming() {
    assumeTrue(
        transport.supportsStreaming(),
        () -> declared("supportsStreaming() = false", "the transport carries no streams"));
  }

  private void assumeOneway() {
    assumeTrue(
        transport.supportsOneway(),
        () -> declared("supportsOneway() = false", "the transport carries no oneway calls"));
  }

  /** The reason a check is skipped: the suite class, its transport's declaration and what it says. */
  private String declared(String declaration, String meaning) {
    return getClass().getSimpleName()
        + "'s TransportUnderTest declares "
        + declaration
        + ": "
        + meaning;
  }

  /** 100 headers: a mixed-case key, an empty value, a number-like value and 97 numbered ones. */
  private static Headers echoHeaders() {
    Headers.Builder b =
        Headers.builder()
            .add("Echo-Mixed-Case", "MiXeD VaLuE")
            .add("echo-empty", "")
            .add("echo-number", "1234");
    for (int i = 0; i < 97; i++) {
      b.add(String.format("echo-h-%03d", i), "value-" + i);
    }
    return b.build();
  }

  private void assertEchoed(Headers got) {
    Map<String, String> expected = new LinkedHashMap<>(echoHeaders().asMap());
    assertThat(expected).hasSize(100).containsKey("echo-mixed-case");
    if (!transport.sendsEmptyHeaderValues()) {
      expected.remove("echo-empty");
      assertThat(got.get("echo-empty")).as("a header with an empty value").isIn(null, "");
    }
    assertThat(got.asMap()).containsAllEntriesOf(expected);
    assertThat(got.get("ECHO-MIXED-CASE")).isEqualTo("MiXeD VaLuE");
  }

  // ---- waiting
  // ------------------------------------------------------------------------------------

  private static <T> T await(CompletableFuture<T> future) throws Exception {
    return await(future, "the call to complete");
  }

  /** The future's value; its failure is rethrown as is; a hang becomes an {@link AssertionError}. */
  private static <T> T await(CompletableFuture<T> future, String what) throws Exception {
    return await(future, what, WAIT);
  }

  private static <T> T await(CompletableFuture<T> future, String what, Duration wait)
      throws Exception {
    try {
      return future.get(wait.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof Exception) {
        throw (Exception) cause;
      }
      if (cause instanceof Error) {
        throw (Error) cause;
      }
      throw e;
    } catch (TimeoutException e) {
      throw new AssertionError("gave up waiting for " + what + " after " + wait, e);
    }
  }

  /**
   * The {@link YarpcException} the future fails with, after releasing the body of the response it carries
   * (the caller owns it; see {@link #failureWithResponse} to read it first); releases what the future
   * returns if it succeeds.
   */
  private static YarpcException failure(CompletableFuture<?> future) throws Exception {
    return failure(future, WAIT, "the call to fail");
  }

  private static YarpcException failure(CompletableFuture<?> future, Duration wait, String what)
      throws Exception {
    YarpcException e = failureWithResponse(future, wait, what);
    if (e.response() != null) {
      e.response().body().release();
    }
    return e;
  }

  /**
   * The {@link YarpcException} the future fails with; the caller releases the body of its attached
   * response, if any. Releases what the future returns if it succeeds.
   */
  private static YarpcException failureWithResponse(
      CompletableFuture<?> future, Duration wait, String what) throws Exception {
    Object value;
    try {
      value = future.get(wait.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      return yarpc(e.getCause());
    } catch (TimeoutException e) {
      throw new AssertionError("gave up waiting for " + what + " after " + wait, e);
    }
    if (value instanceof Response) {
      ((Response) value).body().release();
    } else if (value instanceof StreamMessage) {
      ((StreamMessage) value).release();
    }
    throw new AssertionError(
        "expected " + what + ", but it succeeded with " + (value == null ? "null" : value));
  }

  /**
   * Fails unless {@code e}'s code is {@code expected}; the failure names the code, name and message that
   * arrived instead.
   */
  private static void assertCode(YarpcException e, Code expected) {
    if (e.code() != expected) {
      throw new AssertionError(
          "expected an error with code " + expected.wireName() + ", got " + describe(e), e);
    }
  }

  /** {@link #assertCode}, then the message. */
  private static void assertError(YarpcException e, Code expected, String expectedMessage) {
    assertCode(e, expected);
    assertThat(e.getMessage())
        .as("the message of the %s error (%s)", expected.wireName(), describe(e))
        .isEqualTo(expectedMessage);
  }

  /** {@code code [name "N"]: "message"}, as an error arrived. */
  private static String describe(YarpcException e) {
    return e.code().wireName()
        + (e.name() == null ? "" : " name \"" + e.name() + "\"")
        + ": \""
        + e.getMessage()
        + "\"";
  }

  private static YarpcException yarpc(Throwable t) {
    Throwable cause = t;
    while (cause instanceof java.util.concurrent.CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    if (!(cause instanceof YarpcException)) {
      throw new AssertionError("expected a YarpcException, got " + cause, cause);
    }
    return (YarpcException) cause;
  }

  /**
   * Waits until {@code counter} reaches {@code stopAt} or stops moving for a while; returns its value.
   * Only decides when to look, never what passes.
   */
  private static int awaitQuiet(AtomicInteger counter, int stopAt) throws InterruptedException {
    long giveUp = System.nanoTime() + WAIT.toNanos();
    int last = counter.get();
    long lastChange = System.nanoTime();
    while (true) {
      Thread.sleep(10);
      int now = counter.get();
      long t = System.nanoTime();
      if (now >= stopAt || t > giveUp) {
        return now;
      }
      if (now != last) {
        last = now;
        lastChange = t;
      } else if (t - lastChange >= QUIET_NANOS) {
        return now;
      }
    }
  }

  // ---- data
  // ---------------------------------------------------------------------------------------

  private static byte[] randomBytes(int size, long seed) {
    byte[] b = new byte[size];
    new Random(seed).nextBytes(b);
    return b;
  }

  private static String randomText(int size, long seed) {
    String alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.";
    Random r = new Random(seed);
    StringBuilder sb = new StringBuilder(size);
    for (int i = 0; i < size; i++) {
      sb.append(alphabet.charAt(r.nextInt(alphabet.length())));
    }
    return sb.toString();
  }

  /**
   * A serialised {@code google.rpc.Status} (code, message, and one {@code google.protobuf.Any} detail
   * whose value holds every byte value), encoded by hand: the kit does not depend on protobuf.
   */
  private static byte[] googleRpcStatus(Code code, String message) {
    byte[] value = new byte[256];
    for (int i = 0; i < value.length; i++) {
      value[i] = (byte) i;
    }
    java.io.ByteArrayOutputStream any = new java.io.ByteArrayOutputStream();
    protoField(any, 1, "type.googleapis.com/io.yarpc.testing.ConformanceDetail".getBytes(UTF_8));
    protoField(any, 2, value);
    java.io.ByteArrayOutputStream status = new java.io.ByteArrayOutputStream();
    status.write(0x08); // field 1, varint
    protoVarint(status, code.value());
    protoField(status, 2, message.getBytes(UTF_8));
    protoField(status, 3, any.toByteArray());
    return status.toByteArray();
  }

  private static void protoField(java.io.ByteArrayOutputStream out, int field, byte[] bytes) {
    out.write(field << 3 | 2); // length-delimited
    protoVarint(out, bytes.length);
    out.writeBytes(bytes);
  }

  private static void protoVarint(java.io.ByteArrayOutputStream out, int value) {
    while ((value & ~0x7f) != 0) {
      out.write(value & 0x7f | 0x80);
      value >>>= 7;
    }
    out.write(value);
  }

  /** Fails unless {@code got} holds exactly {@code expected}, naming the first difference. */
  private static void assertSameBytes(String what, byte[] got, byte[] expected) {
    if (got == null) {
      throw new AssertionError(
          what + ": none arrived (null), though " + expected.length + " bytes were sent");
    }
    if (Arrays.equals(got, expected)) {
      return;
    }
    int i = Arrays.mismatch(got, expected);
    throw new AssertionError(
        String.format(
            "%s: %d bytes were sent, %d arrived, first difference at byte %d",
            what, expected.length, got.length, i));
  }

  private static byte[] intBytes(int value) {
    return ByteBuffer.allocate(4).putInt(value).array();
  }

  /** {@code size} bytes (at least 4) starting with {@code n}, the rest derived from {@code n}. */
  private static byte[] numberedMessage(int n, int size) {
    byte[] b = randomBytes(Math.max(4, size), n);
    ByteBuffer.wrap(b).putInt(n);
    return b;
  }

  /** A unique payload per call number, of varying size. */
  private static byte[] numberedPayload(int n) {
    return numberedMessage(n, 4 + (n * 37) % 2048);
  }
}
