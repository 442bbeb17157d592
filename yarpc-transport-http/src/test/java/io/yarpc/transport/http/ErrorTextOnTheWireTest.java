package io.yarpc.transport.http;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.Dispatcher;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The bytes the HTTP inbound writes for an error message holding control characters and non-ASCII text,
 * read by a hand-written client on a plain socket: in {@code Rpc-Error-Message} the form Go's net/http
 * writes (line breaks and other controls as spaces, trimmed, UTF-8 bytes as they are); in the
 * {@code text/plain} body the message whole.
 */
class ErrorTextOnTheWireTest {
  private static final String MIXED = "tab\there, CR\rLF\n, NUL\u0000, DEL\u007f, é, €, 😀 and %41";
  private HttpTransport transport;
  private HttpInbound inbound;
  private Dispatcher dispatcher;

  @BeforeEach
  void start() {
    transport = HttpTransport.builder().eventLoopThreads(1).build();
    inbound = transport.inbound();
    dispatcher = Dispatcher.builder(YarpcTestService.NAME).inbound(inbound).build();
    dispatcher.register(
        Raw.procedure(
            "fail",
            body -> {
              throw YarpcException.of(Code.FAILED_PRECONDITION, new String(body, UTF_8));
            }));
    dispatcher.start();
  }

  @AfterEach
  void stop() {
    dispatcher.stop();
    transport.stop();
  }

  @Test
  void headerCarriesTheMessageAsGoWritesIt() throws Exception {
    List<String> head = failWith(MIXED, "Rpc-Accepts-Both-Response-Error: true");
    assertThat(head.get(0)).isEqualTo("HTTP/1.1 400 Bad Request");
    // the header's bytes, seen one per char: UTF-8 as it is, every control but tab a space
    String onTheWire =
        new String("tab\there, CR LF , NUL , DEL , é, €, 😀 and %41".getBytes(UTF_8), ISO_8859_1);
    assertThat(head)
        .contains("rpc-error-message: " + onTheWire, "rpc-error-code: failed-precondition");
  }

  @Test
  void headerDropsWhitespaceAtEitherEnd() throws Exception {
    List<String> head =
        failWith("\r\n  padded \t message\t \n", "Rpc-Accepts-Both-Response-Error: true");
    assertThat(head).contains("rpc-error-message: padded \t message");
  }

  @Test
  void textBodyCarriesTheMessageWhole() throws Exception {
    try (RawClient client = new RawClient(inbound.address().getPort())) {
      byte[] body = MIXED.getBytes(UTF_8);
      client.send(RawClient.request("fail", body.length)).send(body);
      RawClient.Res res = client.read();
      assertThat(res.status()).isEqualTo(400);
      assertThat(res.headers()).containsEntry("content-type", "text/plain; charset=utf8");
      assertThat(res.body()).isEqualTo(MIXED + "\n");
    }
  }

  /** The head of the answer to {@code fail} with {@code message}: status line, then lower-cased headers. */
  private List<String> failWith(String message, String... headers) throws Exception {
    try (RawClient client = new RawClient(inbound.address().getPort())) {
      byte[] body = message.getBytes(UTF_8);
      client.send(RawClient.request("fail", body.length, headers)).send(body);
      String head = client.readHead();
      assertThat(head).as("an answer").isNotNull();
      List<String> lines = new ArrayList<>();
      for (String line : head.split("\r\n", -1)) {
        int colon = line.indexOf(':');
        lines.add(
            lines.isEmpty()
                ? line
                : line.substring(0, colon).toLowerCase() + line.substring(colon));
      }
      return lines;
    }
  }
}
