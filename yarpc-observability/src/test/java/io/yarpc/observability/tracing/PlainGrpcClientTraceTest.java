package io.yarpc.observability.tracing;

import static io.yarpc.observability.tracing.TracingTestSupport.span;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.opentelemetry.api.baggage.Baggage;
import io.opentelemetry.api.baggage.propagation.W3CBaggagePropagator;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.yarpc.Call;
import io.yarpc.Dispatcher;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcTransport;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A trace begun by a plain grpc-java client — no YARPC on its side, just an OpenTelemetry span and a
 * client interceptor that writes the W3C {@code traceparent} (and {@code baggage}) into the call's
 * metadata — is continued by the YARPC gRPC inbound.
 */
class PlainGrpcClientTraceTest {
  private static final MethodDescriptor.Marshaller<byte[]> BYTES =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
          return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
          try {
            return stream.readAllBytes();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        }
      };

  private static final MethodDescriptor<byte[], byte[]> ECHO =
      MethodDescriptor.<byte[], byte[]>newBuilder()
          .setType(MethodDescriptor.MethodType.UNARY)
          .setFullMethodName("echo.Echo/Echo")
          .setRequestMarshaller(BYTES)
          .setResponseMarshaller(BYTES)
          .build();

  /** What a plain client's OpenTelemetry instrumentation does: inject the current context. */
  private static final class W3cInjector implements ClientInterceptor {
    private final TextMapPropagator propagator =
        TextMapPropagator.composite(
            W3CTraceContextPropagator.getInstance(), W3CBaggagePropagator.getInstance());

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(
        MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
      return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
        @Override
        public void start(Listener<R> listener, Metadata headers) {
          propagator.inject(
              Context.current(),
              headers,
              (md, key, value) ->
                  md.put(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER), value));
          super.start(listener, headers);
        }
      };
    }
  }

  private final TracingTestSupport otel = new TracingTestSupport();
  private ManagedChannel channel;

  @AfterEach
  void stop() throws InterruptedException {
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    otel.close();
  }

  @Test
  void aW3cTraceFromAPlainGrpcJavaClientIsContinued() throws Exception {
    GrpcInbound inbound = GrpcTransport.create().inbound(new InetSocketAddress("127.0.0.1", 0));
    Dispatcher server = otel.start(Dispatcher.builder("echo").inbound(inbound));
    AtomicReference<RequestMeta> seen = new AtomicReference<>();
    AtomicReference<String> handlerSpan = new AtomicReference<>();
    AtomicReference<String> handlerBaggage = new AtomicReference<>();
    server.register(
        TracingTestSupport.bytes(
            "echo.Echo::Echo",
            body -> {
              seen.set(Call.current().meta());
              handlerSpan.set(Span.current().getSpanContext().getSpanId());
              handlerBaggage.set(Baggage.current().getEntryValue("user"));
              return body;
            }));

    channel = NettyChannelBuilder.forAddress("127.0.0.1", inbound.port()).usePlaintext().build();
    Channel traced = ClientInterceptors.intercept(channel, new W3cInjector());
    Span clientSpan =
        otel.sdk
            .getTracer("plain-grpc-client")
            .spanBuilder("echo.Echo/Echo")
            .setSpanKind(SpanKind.CLIENT)
            .startSpan();
    byte[] answer;
    try (Scope ignored =
        Context.current()
            .with(clientSpan)
            .with(Baggage.builder().put("user", "ada").build())
            .makeCurrent()) {
      answer =
          ClientCalls.blockingUnaryCall(
              traced,
              ECHO,
              CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS),
              "hi".getBytes(UTF_8));
    } finally {
      clientSpan.end();
    }
    assertThat(new String(answer, UTF_8)).isEqualTo("hi");

    List<SpanData> spans = otel.awaitSpans(2);
    SpanData serverSpan = span(spans, SpanKind.SERVER, "echo/echo.Echo::Echo");
    assertThat(serverSpan.getTraceId()).isEqualTo(clientSpan.getSpanContext().getTraceId());
    assertThat(serverSpan.getParentSpanId()).isEqualTo(clientSpan.getSpanContext().getSpanId());
    assertThat(serverSpan.getParentSpanContext().isRemote()).isTrue();
    assertThat(serverSpan.getAttributes().get(AttributeKey.stringKey("rpc.system.name")))
        .isEqualTo("grpc");
    assertThat(serverSpan.getAttributes().get(AttributeKey.stringKey("yarpc.caller")))
        .as("the product of grpc-java's user agent")
        .isEqualTo("grpc-java-netty");
    assertThat(serverSpan.getAttributes().get(AttributeKey.stringKey("rpc.status_code")))
        .isEqualTo("OK");
    assertThat(handlerSpan.get()).isEqualTo(serverSpan.getSpanId());
    assertThat(handlerBaggage.get()).isEqualTo("ada");
    assertThat(seen.get().headers().keys()).doesNotContain("traceparent", "baggage");
    assertThat(seen.get().propagationHeaders().keys()).contains("traceparent", "baggage");
  }
}
