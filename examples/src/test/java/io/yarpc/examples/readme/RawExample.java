package io.yarpc.examples.readme;

// [START raw]
import static java.nio.charset.StandardCharsets.UTF_8;

import io.yarpc.Call;
import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.Reply;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpTransport;
import java.time.Duration;

public final class RawExample {
  public static void main(String[] args) {
    // Service: a dispatcher with an HTTP inbound and a raw procedure.
    HttpTransport http = HttpTransport.create();
    HttpInbound inbound = http.inboundBuilder().address("127.0.0.1", 0).build();  // 0: a free port
    Dispatcher server = Dispatcher.builder("hello").inbound(inbound).build();
    server.register(Raw.procedure("echo/raw", body -> {
      Call call = Call.current();                          // the inbound call: meta, headers, deadline
      call.setResponseHeader("caller", call.meta().caller());
      return body;                                         // the array becomes the response body, no copy
    }));
    server.start();

    // Client: a dispatcher with an outbound for the service "hello".
    HttpTransport clientHttp = HttpTransport.create();
    Dispatcher client = Dispatcher.builder("hello-client")
        .outbound("hello", Outbounds.unary(clientHttp.singleOutbound(inbound.hostPort())))
        .build();
    client.start();
    try {
      RawClient raw = RawClient.of(client.clientConfig("hello"));
      Reply<byte[]> reply = raw.callForReply("echo/raw", "hi".getBytes(UTF_8),
          CallOptions.builder().timeout(Duration.ofSeconds(10)).header("trace-id", "42").build()).join();
      // A failure completes the future with a YarpcException (YarpcException.from(e) unwraps it).
      System.out.println(new String(reply.value(), UTF_8) + ", caller " + reply.headers().get("caller"));
    } finally {
      client.stop();                                       // stops its transport too
      server.stop();
    }
  }
}
// [END raw]
