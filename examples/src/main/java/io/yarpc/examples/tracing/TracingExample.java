package io.yarpc.examples.tracing;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.baggage.Baggage;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.observability.tracing.YarpcTracing;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcTransport;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpTransport;
import io.yarpc.transport.tchannel.TChannelInbound;
import io.yarpc.transport.tchannel.TChannelTransport;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * The gateway example's hops with tracing installed on every service, each hop on another transport:
 *
 * <pre>
 *   client --HTTP--> gateway "profile" --gRPC--> users "lookup" --TChannel--> store "get"
 * </pre>
 *
 * Every dispatcher gets {@code YarpcTracing.create(otel).install(builder)}; nothing else changes. The
 * handlers call downstream as before, and the trace follows: one trace of six spans (a client and a server
 * span per hop), with the client's baggage readable in the last handler. The SDK here keeps the spans in
 * memory and prints them; a real service configures an exporter (OTLP, say) with a batch processor, or
 * takes {@code GlobalOpenTelemetry.get()} from the OpenTelemetry Java agent.
 *
 * <p>Run: {@code java -cp examples/target/yarpc-examples.jar io.yarpc.examples.tracing.TracingExample}
 */
public final class TracingExample {
  private TracingExample() {}

  /** What the example observed: the exported spans, and the baggage the last handler read. */
  public record Observed(List<SpanData> spans, String storeSawTenant) {}

  /** Runs the example and prints the trace, one line per span, indented under its parent. */
  public static void main(String[] args) throws InterruptedException {
    Observed o = run();
    print(o.spans(), "", 0);
    System.out.println("store read baggage tenant=" + o.storeSawTenant());
  }

  private static void print(List<SpanData> spans, String parentId, int depth) {
    for (SpanData s : spans) {
      boolean root = parentId.isEmpty() && !s.getParentSpanContext().isValid();
      if (root || !parentId.isEmpty() && s.getParentSpanId().equals(parentId)) {
        System.out.printf(
            "%s%s %s trace=%s span=%s%n",
            "  ".repeat(depth), s.getKind(), s.getName(), s.getTraceId(), s.getSpanId());
        print(spans, s.getSpanId(), depth + 1);
      }
    }
  }

  /** Keeps finished spans in memory (an exporter of your choice goes here). */
  static final class CollectingExporter implements SpanExporter {
    final List<SpanData> spans = new CopyOnWriteArrayList<>();

    @Override
    public CompletableResultCode export(Collection<SpanData> batch) {
      spans.addAll(batch);
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode flush() {
      return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
      return CompletableResultCode.ofSuccess();
    }
  }

  /** An OpenTelemetry SDK that sends every span to {@code exporter} as it ends. */
  static OpenTelemetrySdk sdk(SpanExporter exporter) {
    return OpenTelemetrySdk.builder()
        .setTracerProvider(
            SdkTracerProvider.builder()
                .addSpanProcessor(SimpleSpanProcessor.create(exporter))
                .build())
        .build();
  }

  /** The example; returns what it observed (for tests). */
  public static Observed run() throws InterruptedException {
    CollectingExporter exporter = new CollectingExporter();
    OpenTelemetrySdk sdk = sdk(exporter);
    List<Dispatcher> started = new ArrayList<>();
    String[] storeSaw = {null};
    try {
      // store: TChannel inbound
      TChannelInbound storeInbound = TChannelTransport.of("store").inbound();
      Dispatcher store = start(sdk, Dispatcher.builder("store").inbound(storeInbound), started);
      store.register(
          Raw.procedure(
              "get",
              body -> {
                storeSaw[0] = Baggage.current().getEntryValue("tenant");
                return ("profile of " + new String(body, UTF_8)).getBytes(UTF_8);
              }));

      // users: gRPC inbound, calls store over TChannel
      GrpcInbound usersInbound =
          GrpcTransport.create().inbound(new InetSocketAddress("127.0.0.1", 0));
      Dispatcher users =
          start(
              sdk,
              Dispatcher.builder("users")
                  .inbound(usersInbound)
                  .outbound(
                      "store",
                      Outbounds.unary(
                          TChannelTransport.of("users").singleOutbound(storeInbound.hostPort()))),
              started);
      RawClient store0 = RawClient.of(users.clientConfig("store"));
      users.register(
          Raw.procedure("lookup", body -> store0.call("get", body, CallOptions.DEFAULT).join()));

      // gateway: HTTP inbound, calls users over gRPC
      HttpInbound gatewayInbound = HttpTransport.create().inbound();
      Dispatcher gateway =
          start(
              sdk,
              Dispatcher.builder("gateway")
                  .inbound(gatewayInbound)
                  .outbound(
                      "users",
                      Outbounds.unary(
                          GrpcTransport.create()
                              .singleOutbound("127.0.0.1:" + usersInbound.port()))),
              started);
      RawClient users0 = RawClient.of(gateway.clientConfig("users"));
      gateway.register(
          Raw.procedure(
              "profile", body -> users0.call("lookup", body, CallOptions.DEFAULT).join()));

      // client: calls gateway over HTTP, with baggage in its context
      Dispatcher client =
          start(
              sdk,
              Dispatcher.builder("client")
                  .outbound(
                      "gateway",
                      Outbounds.unary(
                          HttpTransport.create().singleOutbound(gatewayInbound.hostPort()))),
              started);
      try (Scope ignored = Baggage.builder().put("tenant", "acme").build().makeCurrent()) {
        RawClient.of(client.clientConfig("gateway"))
            .call("profile", "ada".getBytes(UTF_8), CallOptions.timeout(Duration.ofSeconds(10)))
            .join();
      }
      // the client's span ends as its response arrives; give the exporter a moment
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (exporter.spans.size() < 6 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      return new Observed(List.copyOf(exporter.spans), storeSaw[0]);
    } finally {
      for (int i = started.size() - 1; i >= 0; i--) {
        started.get(i).stop();
      }
      sdk.close();
    }
  }

  private static Dispatcher start(
      OpenTelemetry otel, Dispatcher.Builder builder, List<Dispatcher> started) {
    YarpcTracing.create(otel).install(builder);
    Dispatcher d = builder.build();
    d.start();
    started.add(d);
    return d;
  }
}
