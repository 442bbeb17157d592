package io.yarpc.examples;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.ErrorInfo;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.MetadataUtils;
import io.yarpc.Call;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.protobuf.ProtobufProcedures;
import io.yarpc.encoding.protobuf.YarpcChannel;
import io.yarpc.errors.Code;
import io.yarpc.examples.keyvalue.GetValueRequest;
import io.yarpc.examples.keyvalue.GetValueResponse;
import io.yarpc.examples.keyvalue.KeyValueGrpc;
import io.yarpc.examples.keyvalue.KeyValueService;
import io.yarpc.examples.keyvalue.SetValueRequest;
import io.yarpc.examples.keyvalue.WatchRequest;
import io.yarpc.transport.Handler;
import io.yarpc.transport.Lifecycle;
import io.yarpc.transport.Request;
import io.yarpc.transport.Response;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcOutbound;
import io.yarpc.transport.grpc.GrpcTransport;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpTransport;
import io.yarpc.transport.tchannel.TChannelInbound;
import io.yarpc.transport.tchannel.TChannelTransport;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The {@code demo} command. One dispatcher, {@code keyvalue}, serves the keyvalue service — a plain
 * grpc-java {@link KeyValueService} — over HTTP, gRPC and TChannel at once, each on a free loopback port.
 * A second dispatcher, {@code keyvalue-client}, has an outbound over each transport, and a generated
 * grpc-java stub on a {@link YarpcChannel} drives each one: set and get a key, get a missing key (a
 * {@code not-found} error whose {@code ErrorInfo} detail crosses the wire), a call that exceeds its
 * deadline, and over gRPC a streaming {@code Watch}. Every step is a row of the printed table; {@link
 * Result#exitCode()} is 0 only when every row behaved as expected.
 *
 * <p>The slow call: the server has an inbound middleware that, when a request carries the header {@value
 * #DELAY_HEADER}, waits that many milliseconds (or until the call is cancelled) before the handler runs.
 */
final class Demo {
  /** Request header that makes the demo server wait before handling the call, in milliseconds. */
  static final String DELAY_HEADER = "x-demo-delay-ms";

  private static final Duration TIMEOUT = Duration.ofSeconds(5);
  private static final Duration SHORT_DEADLINE = Duration.ofMillis(100);
  private static final long SERVER_DELAY_MILLIS = 400;
  private static final String TRANSPORT_HTTP = "http";
  private static final String TRANSPORT_GRPC = "grpc";
  private static final String TRANSPORT_TCHANNEL = "tchannel";

  private Demo() {}

  /**
   * One step of the demo.
   *
   * @param transport the transport it went over
   * @param step what the client did
   * @param outcome what came back
   * @param latency how long it took, as the client saw it
   * @param ok whether that is what the step expected
   */
  record Row(String transport, String step, String outcome, Duration latency, boolean ok) {}

  /**
   * What the demo did.
   *
   * @param rows the steps, per transport in order
   * @param exitCode 0 when every row is ok, else 1
   */
  record Result(List<Row> rows, int exitCode) {}

  /** The {@code demo} command's flags: none. */
  static final FlagSet FLAGS =
      new FlagSet(
          "demo",
          "",
          String.join(
              "\n",
              "Serves the keyvalue service over HTTP, gRPC and TChannel on free loopback ports, drives a",
              "grpc-java stub over each transport and prints a table of what happened; exits with 0 when",
              "every step behaved as expected. The command when none is given."));

  /** The {@code demo} command. */
  static Command command() {
    return new Command() {
      @Override
      public FlagSet flags() {
        return FLAGS;
      }

      @Override
      public int run(Flags flags, PrintStream out, PrintStream err) throws Flags.UsageException {
        flags.noPositional();
        return Demo.run(out).exitCode();
      }
    };
  }

  /** Runs the demo, printing the addresses and the table to {@code out}. */
  static Result run(PrintStream out) {
    HttpTransport serverHttp = HttpTransport.builder().eventLoopThreads(2).build();
    GrpcTransport serverGrpc = GrpcTransport.create();
    TChannelTransport serverTChannel = TChannelTransport.of("keyvalue");
    HttpInbound httpInbound = serverHttp.inbound();
    GrpcInbound grpcInbound = serverGrpc.inbound(new InetSocketAddress("127.0.0.1", 0));
    TChannelInbound tchannelInbound = serverTChannel.inbound();
    Dispatcher server =
        Dispatcher.builder("keyvalue")
            .inbound(httpInbound, grpcInbound, tchannelInbound)
            .unaryInboundMiddleware(Demo::delayWhenAsked)
            .build();
    server.register(ProtobufProcedures.of(new KeyValueService()));

    HttpTransport clientHttp = HttpTransport.builder().eventLoopThreads(2).build();
    GrpcTransport clientGrpc = GrpcTransport.create();
    TChannelTransport clientTChannel = TChannelTransport.of("keyvalue-client");
    List<Row> rows = new ArrayList<>();
    Dispatcher client = null;
    try {
      server.start();
      Map<String, String> peers = new LinkedHashMap<>();
      peers.put(TRANSPORT_HTTP, httpInbound.hostPort());
      peers.put(TRANSPORT_GRPC, "127.0.0.1:" + grpcInbound.port());
      peers.put(TRANSPORT_TCHANNEL, tchannelInbound.hostPort());
      GrpcOutbound grpcOutbound = clientGrpc.singleOutbound(peers.get(TRANSPORT_GRPC));
      client =
          Dispatcher.builder("keyvalue-client")
              .outbound(
                  TRANSPORT_HTTP,
                  Outbounds.builder()
                      .serviceName("keyvalue")
                      .unary(clientHttp.singleOutbound(peers.get(TRANSPORT_HTTP)))
                      .build())
              .outbound(
                  TRANSPORT_GRPC,
                  Outbounds.builder().serviceName("keyvalue").unary(grpcOutbound).stream(
                          grpcOutbound)
                      .build())
              .outbound(
                  TRANSPORT_TCHANNEL,
                  Outbounds.builder()
                      .serviceName("keyvalue")
                      .unary(clientTChannel.singleOutbound(peers.get(TRANSPORT_TCHANNEL)))
                      .build())
              .build();
      client.start();

      out.println(
          "The keyvalue service (a grpc-java KeyValueImplBase) served by one dispatcher over:");
      peers.forEach((transport, peer) -> out.printf("  %-9s %s%n", transport, peer));
      out.println();
      for (String transport : peers.keySet()) {
        rows.addAll(drive(transport, YarpcChannel.of(client.clientConfig(transport))));
      }
    } catch (RuntimeException e) {
      rows.add(new Row("-", "start the demo", "failed: " + e, Duration.ZERO, false));
    } finally {
      // Dispatchers stop their inbounds, outbounds and transports; the transports' own stop is for
      // a dispatcher that never started. Every stop runs even when one fails.
      List<Lifecycle> all = new ArrayList<>();
      if (client != null) {
        all.add(client);
      }
      all.addAll(
          List.of(
              server,
              clientHttp,
              serverHttp,
              clientGrpc,
              serverGrpc,
              clientTChannel,
              serverTChannel));
      for (Lifecycle component : all) {
        try {
          component.stop();
        } catch (RuntimeException e) {
          rows.add(new Row("-", "stop " + component, "failed: " + e, Duration.ZERO, false));
        }
      }
    }
    print(rows, out);
    boolean allOk = !rows.isEmpty() && rows.stream().allMatch(Row::ok);
    out.println();
    out.println(
        "Latency is what the client saw; the first call over each transport includes connecting.");
    out.println(
        allOk
            ? "Every step behaved as expected."
            : "Some steps did not behave as expected (ok = NO above).");
    return new Result(List.copyOf(rows), allOk ? 0 : 1);
  }

  /** The client's steps over one transport, through a generated stub on a {@link YarpcChannel}. */
  private static List<Row> drive(String transport, YarpcChannel channel) {
    KeyValueGrpc.KeyValueBlockingStub kv = KeyValueGrpc.newBlockingStub(channel);
    String value = "hello over " + transport;
    List<Row> rows = new ArrayList<>();

    rows.add(
        step(
            transport,
            "SetValue greeting",
            () -> {
              kv.withDeadlineAfter(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                  .setValue(
                      SetValueRequest.newBuilder().setKey("greeting").setValue(value).build());
              return Outcome.ok("ok");
            }));

    rows.add(
        step(
            transport,
            "GetValue greeting",
            () -> {
              String got =
                  kv.withDeadlineAfter(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                      .getValue(GetValueRequest.newBuilder().setKey("greeting").build())
                      .getValue();
              return new Outcome(quote(got), got.equals(value));
            }));

    rows.add(
        step(
            transport,
            "GetValue missing -> not-found",
            () -> {
              try {
                kv.withDeadlineAfter(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                    .getValue(GetValueRequest.newBuilder().setKey("missing").build());
                return new Outcome("unexpectedly found", false);
              } catch (StatusRuntimeException e) {
                ErrorInfo info = errorInfo(e);
                String detail =
                    info == null
                        ? "no details"
                        : "ErrorInfo{reason="
                            + info.getReason()
                            + ", key="
                            + info.getMetadataOrDefault("key", "")
                            + "}";
                boolean ok =
                    e.getStatus().getCode() == Status.Code.NOT_FOUND
                        && info != null
                        && info.getReason().equals("KEY_NOT_FOUND");
                return new Outcome(codeOf(e) + " + " + detail, ok);
              }
            }));

    String slowStep =
        String.format(
            "GetValue, server %dms, deadline %dms", SERVER_DELAY_MILLIS, SHORT_DEADLINE.toMillis());
    rows.add(
        step(
            transport,
            slowStep,
            () -> {
              Metadata delay = new Metadata();
              delay.put(
                  Metadata.Key.of(DELAY_HEADER, Metadata.ASCII_STRING_MARSHALLER),
                  Long.toString(SERVER_DELAY_MILLIS));
              try {
                kv.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(delay))
                    .withDeadlineAfter(SHORT_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
                    .getValue(GetValueRequest.newBuilder().setKey("greeting").build());
                return new Outcome("unexpectedly answered in time", false);
              } catch (StatusRuntimeException e) {
                return new Outcome(
                    codeOf(e), e.getStatus().getCode() == Status.Code.DEADLINE_EXCEEDED);
              }
            }));

    if (transport.equals(TRANSPORT_GRPC)) {
      rows.add(step(transport, "Watch greeting, set twice, cancel", () -> watch(channel, value)));
    }
    return rows;
  }

  /**
   * Watches {@code greeting} over a server stream: the current value arrives first, then one message per
   * change; the client then cancels and the stream ends with {@code cancelled}.
   */
  private static Outcome watch(YarpcChannel channel, String current) throws InterruptedException {
    KeyValueGrpc.KeyValueBlockingStub kv = KeyValueGrpc.newBlockingStub(channel);
    BlockingQueue<Object> events = new LinkedBlockingQueue<>();
    AtomicReference<ClientCallStreamObserver<WatchRequest>> call = new AtomicReference<>();
    KeyValueGrpc.newStub(channel)
        .withDeadlineAfter(30, TimeUnit.SECONDS)
        .watch(
            WatchRequest.newBuilder().setKey("greeting").build(),
            new ClientResponseObserver<WatchRequest, GetValueResponse>() {
              @Override
              public void beforeStart(ClientCallStreamObserver<WatchRequest> requestStream) {
                call.set(requestStream);
              }

              @Override
              public void onNext(GetValueResponse value) {
                events.add(value.getValue());
              }

              @Override
              public void onError(Throwable t) {
                events.add(t);
              }

              @Override
              public void onCompleted() {
                events.add("end of stream");
              }
            });
    List<String> seen = new ArrayList<>();
    try {
      seen.add(String.valueOf(next(events)));
      for (String v : List.of("bonjour", "hallo")) {
        kv.withDeadlineAfter(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
            .setValue(SetValueRequest.newBuilder().setKey("greeting").setValue(v).build());
        seen.add(String.valueOf(next(events)));
      }
    } finally {
      call.get().cancel("the demo has seen enough", null);
    }
    Object end = next(events);
    boolean cancelled =
        end instanceof StatusRuntimeException
            && ((StatusRuntimeException) end).getStatus().getCode() == Status.Code.CANCELLED;
    String outcome =
        String.join(" -> ", seen.stream().map(Demo::quote).toList())
            + (cancelled ? ", then cancelled" : ", then " + end);
    return new Outcome(outcome, cancelled && seen.equals(List.of(current, "bonjour", "hallo")));
  }

  private static Object next(BlockingQueue<Object> events) throws InterruptedException {
    Object event = events.poll(10, TimeUnit.SECONDS); // a guard against hanging, not a measurement
    return event == null ? "nothing (waited 10 s)" : event;
  }

  /**
   * Inbound middleware: a request with the header {@value #DELAY_HEADER} waits that long, or until its
   * call is cancelled (its deadline passed), before going on to the handler.
   */
  @SuppressWarnings("try") // the registration is only closed
  static CompletableFuture<Response> delayWhenAsked(
      Request request, Handler<Request, Response> next) {
    String delay = request.headers().get(DELAY_HEADER);
    if (delay != null) {
      Call call = Call.current();
      CountDownLatch cancelled = new CountDownLatch(1);
      try (AutoCloseable registration = call.onCancel(cancelled::countDown)) {
        cancelled.await(Long.parseLong(delay.trim()), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (Exception e) {
        throw new IllegalStateException(e); // closing the registration does not fail
      }
      if (call.isCancelled()) {
        request.body().release(); // not passed on: this middleware owns the body
        return CompletableFuture.failedFuture(call.cancellation());
      }
    }
    return next.handle(request);
  }

  private static ErrorInfo errorInfo(StatusRuntimeException e) {
    com.google.rpc.Status status = StatusProto.fromThrowable(e);
    if (status == null) {
      return null;
    }
    for (Any detail : status.getDetailsList()) {
      if (detail.is(ErrorInfo.class)) {
        try {
          return detail.unpack(ErrorInfo.class);
        } catch (InvalidProtocolBufferException ignored) {
          return null;
        }
      }
    }
    return null;
  }

  /** A gRPC status's code as YARPC names it, e.g. {@code not-found}. */
  private static String codeOf(StatusRuntimeException e) {
    Code code = Code.fromValue(e.getStatus().getCode().value());
    return code == null ? e.getStatus().getCode().name() : code.wireName();
  }

  /** A gRPC status as YARPC names it: {@code not-found: message}. */
  private static String describe(StatusRuntimeException e) {
    String description = e.getStatus().getDescription();
    return codeOf(e) + (description == null ? "" : ": " + description);
  }

  private static String quote(String s) {
    return "\"" + s + "\"";
  }

  /** What a step saw and whether it expected it. */
  private record Outcome(String text, boolean ok) {
    static Outcome ok(String text) {
      return new Outcome(text, true);
    }
  }

  private interface Step {
    Outcome run() throws Exception;
  }

  private static Row step(String transport, String name, Step step) {
    long start = System.nanoTime();
    Outcome outcome;
    try {
      outcome = step.run();
    } catch (StatusRuntimeException e) {
      outcome = new Outcome(describe(e), false);
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      outcome = new Outcome("failed: " + e, false);
    }
    return new Row(
        transport, name, outcome.text(), Duration.ofNanos(System.nanoTime() - start), outcome.ok());
  }

  private static void print(List<Row> rows, PrintStream out) {
    String format = "%-9s  %-38s  %-60s  %9s  %s%n";
    out.printf(format, "transport", "step", "outcome", "latency", "ok");
    out.printf(format, "-".repeat(9), "-".repeat(38), "-".repeat(60), "-".repeat(9), "--");
    for (Row r : rows) {
      String outcome =
          r.outcome().length() > 60 ? r.outcome().substring(0, 57) + "..." : r.outcome();
      out.printf(
          format,
          r.transport(),
          r.step(),
          outcome,
          String.format("%.1f ms", r.latency().toNanos() / 1e6),
          r.ok() ? "ok" : "NO");
    }
  }
}
