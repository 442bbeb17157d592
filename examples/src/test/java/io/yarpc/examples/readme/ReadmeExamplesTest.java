package io.yarpc.examples.readme;

import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.Dispatcher;
import io.yarpc.encoding.protobuf.ProtobufProcedures;
import io.yarpc.examples.keyvalue.KeyValueService;
import io.yarpc.examples.repo.RepoRoot;
import io.yarpc.transport.grpc.GrpcInbound;
import io.yarpc.transport.grpc.GrpcTransport;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The README's whole-file snippets ({@code *Example.java} in this package) run as a user runs them: their
 * {@code main}, which starts its server on a free port, calls it, prints what came back and stops. Each
 * test checks the lines the README says it prints.
 */
@Timeout(120)
class ReadmeExamplesTest {
  /** The snippet classes run below; {@link #everyExampleIsRunHere} keeps the list complete. */
  private static final List<String> RUN =
      List.of(
          "RawExample",
          "JsonExample",
          "KeyValueExample",
          "PlainGrpcClientExample",
          "DeadlinePolicyExample");

  @Test
  void raw() throws Exception {
    assertThat(stdoutOf(() -> RawExample.main(new String[0])))
        .containsExactly("hi, caller hello-client");
  }

  @Test
  void json() throws Exception {
    assertThat(stdoutOf(() -> JsonExample.main(new String[0])))
        .containsExactly(
            "GetResponse[key=greeting, value=hello]", "not-found: no value for key \"nothing\"");
  }

  @Test
  void protobuf() throws Exception {
    assertThat(stdoutOf(() -> KeyValueExample.main(new String[0])))
        .containsExactly("k = v", "INVALID_ARGUMENT: key is required, key must not be empty");
  }

  @Test
  void plainGrpcClientAgainstAYarpcGrpcInbound() throws Exception {
    GrpcInbound inbound = GrpcTransport.create().inbound(new InetSocketAddress("127.0.0.1", 0));
    Dispatcher server = Dispatcher.builder("keyvalue").inbound(inbound).build();
    server.register(ProtobufProcedures.of(new KeyValueService()));
    server.start();
    try {
      String target = "127.0.0.1:" + inbound.port();
      assertThat(stdoutOf(() -> PlainGrpcClientExample.main(new String[] {target})))
          .containsExactly("k = v");
    } finally {
      server.stop();
    }
  }

  @Test
  void deadlinePolicy() throws Exception {
    assertThat(stdoutOf(() -> DeadlinePolicyExample.main(new String[0])))
        .containsExactly("k = v", "INVALID_ARGUMENT: missing TTL");
  }

  @Test
  void everyExampleIsRunHere() throws IOException {
    Path dir = RepoRoot.find().resolve("examples/src/test/java/io/yarpc/examples/readme");
    List<String> examples;
    try (Stream<Path> files = Files.list(dir)) {
      examples =
          files
              .map(p -> p.getFileName().toString())
              .filter(n -> n.endsWith("Example.java"))
              .map(n -> n.substring(0, n.length() - ".java".length()))
              .toList();
    }
    assertThat(examples).as("README snippet classes in %s", dir).hasSameElementsAs(RUN);
  }

  interface Main {
    void run() throws Exception;
  }

  /**
   * The lines {@code main} printed on {@code System.out} (also copied to the real one). The tests of this
   * class run one at a time, as surefire runs them here.
   */
  private static List<String> stdoutOf(Main main) throws Exception {
    PrintStream original = System.out;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    OutputStream tee =
        new OutputStream() {
          @Override
          public void write(int b) {
            captured.write(b);
            original.write(b);
          }

          @Override
          public void write(byte[] b, int off, int len) {
            captured.write(b, off, len);
            original.write(b, off, len);
          }
        };
    System.setOut(new PrintStream(tee, true, StandardCharsets.UTF_8));
    try {
      main.run();
    } finally {
      System.out.flush();
      System.setOut(original);
    }
    return captured.toString(StandardCharsets.UTF_8).lines().toList();
  }
}
