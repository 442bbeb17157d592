package io.yarpc.transport.tchannel;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Error texts longer than a TChannel string can hold (two-byte lengths in arg2, docs/spec/wire-tchannel.md §10): they arrive cut
 * by core's rule, with the handler's code, instead of failing the response. The conformance kit covers
 * everything up to 10 KiB, which TChannel carries whole.
 */
class LongErrorTextTest {
  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final String TRUNCATED = " (truncated)";

  /** 100,000 characters, 200,000 UTF-8 bytes, with a line break and a tab on the way. */
  private static final String LONG = ("line\n\tnext é" + "x".repeat(87)).repeat(1000);

  private TChannelTransport serverTransport;
  private TChannelTransport clientTransport;
  private Dispatcher server;
  private Dispatcher client;

  @BeforeEach
  void start() {
    serverTransport = TChannelTransport.of("long-text-server");
    TChannelInbound inbound = serverTransport.inbound();
    server = Dispatcher.builder("long-text-server").inbound(inbound).build();
    server.register(
        Raw.procedure(
            "fail",
            body -> {
              throw YarpcException.of(Code.PERMISSION_DENIED, LONG).withName(LONG);
            }));
    server.start();
    clientTransport = TChannelTransport.of("long-text-client");
    client =
        Dispatcher.builder("long-text-client")
            .outbound(
                "long-text-server",
                Outbounds.unary(clientTransport.singleOutbound(inbound.hostPort())))
            .build();
    client.start();
  }

  @AfterEach
  void stop() {
    client.stop();
    server.stop();
    clientTransport.stop();
    serverTransport.stop();
  }

  @Test
  void longMessageAndNameArriveCutWithTheirCode() throws Exception {
    RawClient raw = RawClient.of(client.clientConfig("long-text-server"));
    YarpcException e;
    try {
      raw.call("fail", new byte[0], CallOptions.timeout(WAIT.multipliedBy(3)))
          .get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      throw new AssertionError("expected a failure");
    } catch (ExecutionException failed) {
      e = (YarpcException) failed.getCause();
    }
    assertThat(e.code()).isEqualTo(Code.PERMISSION_DENIED);
    assertCut(e.getMessage());
    assertCut(e.name());
  }

  private static void assertCut(String got) {
    assertThat(got).endsWith(TRUNCATED);
    assertThat(got.getBytes(UTF_8).length).isLessThanOrEqualTo(0xFFFF);
    String kept = got.substring(0, got.length() - TRUNCATED.length());
    assertThat(LONG.startsWith(kept)).as("what arrives is the start of the text").isTrue();
    assertThat(kept.getBytes(UTF_8).length).isGreaterThan(0xFFFF - 3 - TRUNCATED.length());
  }
}
