package io.yarpc.examples;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.encoding.json.Json;
import io.yarpc.encoding.json.JsonClient;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.testing.InMemoryTransport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletionException;

/**
 * Starts a small keyvalue service, calls it through a client dispatcher, and prints what happened. Each
 * step is one row of the table; the exit code is non-zero when a step did not behave as expected.
 */
final class Demo {
  private Demo() {}

  /** A JSON request of the keyvalue example. */
  static final class KeyValue {
    String key;
    String value;

    KeyValue(String key, String value) {
      this.key = key;
      this.value = value;
    }
  }

  private record Row(String transport, String step, String outcome, Duration latency, boolean ok) {}

  static int run(String[] args) {
    Map<String, String> store = new ConcurrentHashMap<>();
    InMemoryTransport transport = InMemoryTransport.create();
    Dispatcher server = Dispatcher.builder("keyvalue").inbound(transport.inbound()).build();
    server.register(
        Json.procedure("set", KeyValue.class, kv -> {
          store.put(kv.key, kv.value);
          return kv;
        }),
        Json.procedure("get", KeyValue.class, kv -> {
          String value = store.get(kv.key);
          if (value == null) {
            throw YarpcException.of(Code.NOT_FOUND, "no value for key \"%s\"", kv.key);
          }
          return new KeyValue(kv.key, value);
        }),
        Raw.procedure("sleep/raw", body -> {
          Thread.sleep(Long.parseLong(new String(body, UTF_8).trim()));
          return body;
        }));
    Dispatcher client = Dispatcher.builder("keyvalue-client")
        .outbound("keyvalue", transport.outbounds()).build();
    server.start();
    client.start();
    List<Row> rows = new ArrayList<>();
    try {
      JsonClient json = JsonClient.of(client.clientConfig("keyvalue"));
      RawClient raw = RawClient.of(client.clientConfig("keyvalue"));
      CallOptions second = CallOptions.timeout(Duration.ofSeconds(1));
      String name = "in-memory";
      rows.add(step(name, "set greeting=hello", () -> {
        json.call("set", new KeyValue("greeting", "hello"), KeyValue.class, second).join();
        return "ok";
      }, null));
      rows.add(step(name, "get greeting", () ->
          json.call("get", new KeyValue("greeting", null), KeyValue.class, second).join().value, null));
      rows.add(step(name, "get missing", () ->
          json.call("get", new KeyValue("missing", null), KeyValue.class, second).join().value,
          Code.NOT_FOUND));
      rows.add(step(name, "sleep 500ms, 100ms deadline", () -> new String(
          raw.call("sleep/raw", "500".getBytes(UTF_8), CallOptions.timeout(Duration.ofMillis(100))).join(),
          UTF_8), Code.DEADLINE_EXCEEDED));
    } finally {
      client.stop();
      server.stop();
    }
    print(rows);
    return rows.stream().allMatch(Row::ok) ? 0 : 1;
  }

  private interface Step {
    String run() throws Exception;
  }

  private static Row step(String transport, String name, Step step, Code expectedError) {
    long start = System.nanoTime();
    String outcome;
    boolean ok;
    try {
      outcome = step.run();
      ok = expectedError == null;
    } catch (Exception e) {
      Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
      YarpcException y = YarpcException.from(cause);
      outcome = y.code().wireName() + ": " + y.getMessage();
      ok = y.code() == expectedError;
    }
    return new Row(transport, name, outcome, Duration.ofNanos(System.nanoTime() - start), ok);
  }

  private static void print(List<Row> rows) {
    String format = "| %-10s | %-30s | %-70s | %9s | %-4s |%n";
    System.out.printf(format, "transport", "step", "outcome", "latency", "ok");
    System.out.printf(format, "-".repeat(10), "-".repeat(30), "-".repeat(70), "-".repeat(9), "-".repeat(4));
    for (Row r : rows) {
      String outcome = r.outcome().length() > 70 ? r.outcome().substring(0, 67) + "..." : r.outcome();
      System.out.printf(format, r.transport(), r.step(), outcome,
          String.format("%.1f ms", r.latency().toNanos() / 1e6), r.ok() ? "yes" : "NO");
    }
  }
}
