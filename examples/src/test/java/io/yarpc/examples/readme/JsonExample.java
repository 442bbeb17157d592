package io.yarpc.examples.readme;

// [START json]
import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.encoding.json.Json;
import io.yarpc.encoding.json.JsonClient;
import io.yarpc.errors.Code;             // YARPC's codes: not io.grpc.Status.Code, not com.google.rpc.Code
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.tchannel.TChannelInbound;
import io.yarpc.transport.tchannel.TChannelTransport;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;

public final class JsonExample {
  record GetRequest(String key) {}
  record GetResponse(String key, String value) {}

  public static void main(String[] args) {
    Map<String, String> store = new ConcurrentHashMap<>(Map.of("greeting", "hello"));
    TChannelInbound inbound = TChannelTransport.of("store").inboundBuilder().port(0).build();  // or any other
    Dispatcher server = Dispatcher.builder("store").inbound(inbound).build();
    server.register(Json.procedure("get", GetRequest.class, request -> {
      String value = store.get(request.key());
      if (value == null) {
        throw YarpcException.of(Code.NOT_FOUND, "no value for key \"%s\"", request.key());  // code kept
      }
      return new GetResponse(request.key(), value);
    }));
    server.start();

    TChannelTransport tchannel = TChannelTransport.of("store-client");
    Dispatcher client = Dispatcher.builder("store-client")
        .outbound("store", Outbounds.unary(tchannel.singleOutbound(inbound.hostPort())))
        .build();
    client.start();
    try {
      JsonClient json = JsonClient.of(client.clientConfig("store"));
      CallOptions tenSeconds = CallOptions.timeout(Duration.ofSeconds(10));
      GetResponse got = json.call("get", new GetRequest("greeting"), GetResponse.class, tenSeconds).join();
      System.out.println(got);                   // GetResponse[key=greeting, value=hello]
      try {
        json.call("get", new GetRequest("nothing"), GetResponse.class, tenSeconds).join();
      } catch (CompletionException e) {
        YarpcException error = YarpcException.from(e);
        System.out.println(error.code() + ": " + error.getMessage());
      }
    } finally {
      client.stop();
      server.stop();
    }
  }
}
// [END json]
