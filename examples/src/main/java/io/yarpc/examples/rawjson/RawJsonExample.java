package io.yarpc.examples.rawjson;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.yarpc.Call;
import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.Reply;
import io.yarpc.encoding.json.Json;
import io.yarpc.encoding.json.JsonClient;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpTransport;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletionException;

/**
 * A raw and a JSON procedure, and a client calling both, over HTTP.
 *
 * <ul>
 *   <li>raw {@code shout}: bytes in, bytes out (upper-cased);
 *   <li>json {@code greet}: a {@link GreetRequest} in, a {@link GreetResponse} out; it sets a response
 *       header and fails with {@code invalid-argument} for an empty name.
 * </ul>
 *
 * Run: {@code java -cp examples/target/yarpc-examples.jar io.yarpc.examples.rawjson.RawJsonExample}
 */
public final class RawJsonExample {
  private RawJsonExample() {}

  /** The JSON request: Gson maps fields by name. */
  public static final class GreetRequest {
    /** Who to greet. */
    public String name;

    /** A request for {@code name}. */
    public GreetRequest(String name) {
      this.name = name;
    }
  }

  /** The JSON response. */
  public static final class GreetResponse {
    /** The greeting. */
    public String greeting;
  }

  /** Starts the service, calls it, prints what came back. */
  public static void main(String[] args) {
    run();
  }

  /** The example; returns the greeting (for tests). */
  public static String run() {
    // The service: a dispatcher named "greeter" with an HTTP inbound on a free loopback port.
    HttpTransport serverTransport = HttpTransport.create();
    HttpInbound inbound = serverTransport.inbound();
    Dispatcher server = Dispatcher.builder("greeter").inbound(inbound).build();
    server.register(
        Raw.procedure(
            "shout", body -> new String(body, UTF_8).toUpperCase(Locale.ROOT).getBytes(UTF_8)),
        Json.procedure(
            "greet",
            GreetRequest.class,
            request -> {
              if (request.name == null || request.name.isEmpty()) {
                throw YarpcException.of(Code.INVALID_ARGUMENT, "name must not be empty");
              }
              Call.current().setResponseHeader("greeted-by", Call.current().meta().service());
              GreetResponse response = new GreetResponse();
              response.greeting = "Hello, " + request.name + "!";
              return response;
            }));
    server.start();

    // The client: a dispatcher with an outbound for the service "greeter".
    HttpTransport clientTransport = HttpTransport.create();
    Dispatcher client =
        Dispatcher.builder("greeter-client")
            .outbound(
                "greeter", Outbounds.unary(clientTransport.singleOutbound(inbound.hostPort())))
            .build();
    client.start();
    try {
      CallOptions options =
          CallOptions.timeout(Duration.ofSeconds(1)); // every call needs a deadline
      RawClient raw = RawClient.of(client.clientConfig("greeter"));
      byte[] shouted = raw.call("shout", "hello".getBytes(UTF_8), options).join();
      System.out.println("raw shout       -> " + new String(shouted, UTF_8));

      JsonClient json = JsonClient.of(client.clientConfig("greeter"));
      Reply<GreetResponse> reply =
          json.callForReply("greet", new GreetRequest("Ada"), GreetResponse.class, options).join();
      System.out.println(
          "json greet      -> " + reply.value().greeting + "  headers " + reply.headers());

      try {
        json.call("greet", new GreetRequest(""), GreetResponse.class, options).join();
      } catch (CompletionException e) {
        YarpcException error = YarpcException.from(e); // the server's code and message
        System.out.println("json greet \"\"   -> " + error.code() + ": " + error.getMessage());
      }
      return reply.value().greeting;
    } finally {
      client.stop(); // stops its outbounds and transport
      server.stop(); // drains calls in flight, then stops the inbound and transport
    }
  }
}
