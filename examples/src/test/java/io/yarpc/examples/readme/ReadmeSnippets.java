package io.yarpc.examples.readme;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.google.rpc.BadRequest;
import io.grpc.ManagedChannel;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.yarpc.Call;
import io.yarpc.CallOptions;
import io.yarpc.Dispatcher;
import io.yarpc.Outbounds;
import io.yarpc.Reply;
import io.yarpc.encoding.json.Json;
import io.yarpc.encoding.json.JsonClient;
import io.yarpc.encoding.protobuf.ProtobufErrors;
import io.yarpc.encoding.protobuf.ProtobufProcedures;
import io.yarpc.encoding.protobuf.YarpcChannel;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.encoding.raw.RawClient;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.examples.keyvalue.GetValueRequest;
import io.yarpc.examples.keyvalue.GetValueResponse;
import io.yarpc.examples.keyvalue.KeyValueGrpc;
import io.yarpc.examples.keyvalue.SetValueRequest;
import io.yarpc.testing.TransportConformanceSuite;
import io.yarpc.testing.TransportUnderTest;
import io.yarpc.transport.Body;
import io.yarpc.transport.DeadlinePolicy;
import io.yarpc.transport.HandlerSpec;
import io.yarpc.transport.InboundCalls;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import io.yarpc.transport.Router;
import io.yarpc.transport.RpcType;
import io.yarpc.transport.grpc.GrpcOutbound;
import io.yarpc.transport.grpc.GrpcTransport;
import io.yarpc.transport.http.HttpInbound;
import io.yarpc.transport.http.HttpOutbound;
import io.yarpc.transport.http.HttpTransport;
import io.yarpc.transport.tchannel.TChannelTransport;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The Java snippets of the README, compiled. Each README {@code java} block is the text between a
 * {@code // [START name]} and {@code // [END name]} pair here, indentation removed; {@link
 * ReadmeSnippetsTest} fails when the two differ. Edit the code here, then copy the region into the README
 * (the test's message shows the expected text).
 *
 * <p>The snippets are compiled, not run: they bind the fixed ports the README shows.
 */
@SuppressWarnings({"unused", "UnusedVariable"})
final class ReadmeSnippets {
  private ReadmeSnippets() {}

  static void raw() {
    // [START raw]
    // Service: a dispatcher with an HTTP inbound and a raw procedure.
    HttpTransport http = HttpTransport.create();
    HttpInbound inbound = http.inboundBuilder().address("127.0.0.1", 8080).build();
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
        .outbound("hello", Outbounds.unary(clientHttp.singleOutbound("127.0.0.1:8080")))
        .build();
    client.start();
    RawClient raw = RawClient.of(client.clientConfig("hello"));
    Reply<byte[]> reply = raw.callForReply("echo/raw", "hi".getBytes(UTF_8),
        CallOptions.builder().timeout(Duration.ofSeconds(1)).header("trace-id", "42").build()).join();
    // reply.value() is the body, reply.headers() the response headers; failures complete the future with a
    // YarpcException (YarpcException.from(completionException) unwraps it). client.stop(); server.stop();
    // [END raw]
  }

  static void json() {
    // [START json]
    record GetRequest(String key) {}
    record GetResponse(String key, String value) {}

    Map<String, String> store = new ConcurrentHashMap<>(Map.of("greeting", "hello"));
    Dispatcher server = Dispatcher.builder("store")
        .inbound(TChannelTransport.of("store").inboundBuilder().port(4040).build())  // any transport
        .build();
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
        .outbound("store", Outbounds.unary(tchannel.singleOutbound("127.0.0.1:4040")))
        .build();
    client.start();
    GetResponse got = JsonClient.of(client.clientConfig("store"))
        .call("get", new GetRequest("greeting"), GetResponse.class, CallOptions.timeout(Duration.ofSeconds(1)))
        .join();
    // [END json]
  }

  static void protobuf() {
    // [START protobuf]
    class KeyValueImpl extends KeyValueGrpc.KeyValueImplBase {
      @Override
      public void getValue(GetValueRequest request, StreamObserver<GetValueResponse> response) {
        if (request.getKey().isEmpty()) {   // errors keep code, message and google.rpc.Status details
          response.onError(ProtobufErrors.newError(Code.INVALID_ARGUMENT, "key is required",
              BadRequest.newBuilder().addFieldViolations(BadRequest.FieldViolation.newBuilder()
                  .setField("key").setDescription("must not be empty")).build()));
          return;
        }
        response.onNext(GetValueResponse.newBuilder().setValue("v").build());
        response.onCompleted();
      }
    }

    GrpcTransport grpc = GrpcTransport.create();
    Dispatcher server = Dispatcher.builder("keyvalue")
        .inbound(grpc.inbound(new InetSocketAddress("127.0.0.1", 5435)), HttpTransport.create().inbound())
        .build();
    server.register(ProtobufProcedures.of(new KeyValueImpl()));  // unary methods on every inbound, streams on gRPC
    server.start();

    GrpcOutbound out = GrpcTransport.create().singleOutbound("127.0.0.1:5435");
    Dispatcher client = Dispatcher.builder("keyvalue-client")
        .outbound("keyvalue", Outbounds.builder().unary(out).stream(out).build())  // stream: for streaming methods
        .build();
    client.start();
    KeyValueGrpc.KeyValueBlockingStub kv =
        KeyValueGrpc.newBlockingStub(YarpcChannel.of(client.clientConfig("keyvalue")));  // or (config, "json")
    GetValueResponse r = kv.withDeadlineAfter(1, TimeUnit.SECONDS)
        .getValue(GetValueRequest.newBuilder().setKey("k").build());
    // Errors arrive as StatusRuntimeException; StatusProto.fromThrowable(e) gives the server's details.
    // [END protobuf]
  }

  static void plainGrpcClient() {
    // [START plain-grpc-client]
    ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", 8081).usePlaintext().build();
    KeyValueGrpc.KeyValueBlockingStub kv = KeyValueGrpc.newBlockingStub(channel);   // no interceptor, no deadline
    kv.setValue(SetValueRequest.newBuilder().setKey("k").setValue("v").build());
    // [END plain-grpc-client]
  }

  static void deadlinePolicy(GrpcTransport grpc, InetSocketAddress address) {
    // [START deadline-policy]
    grpc.inboundBuilder(address)
        .deadlinePolicy(DeadlinePolicy.builder()
            .defaultTimeout(Duration.ofSeconds(60))   // unary calls without grpc-timeout get this (the default)
            .maxTimeout(Duration.ofMinutes(5))        // any deadline further away is brought in (default: no cap)
            .build())
        .build();
    grpc.inboundBuilder(address).deadlinePolicy(DeadlinePolicy.strict()).build();  // yarpc-go: missing TTL
    // [END deadline-policy]
  }

  /** What an inbound does per call, once it has decoded the metadata and the body. */
  abstract static class InboundSketch {
    abstract String transportName();

    void serve(Router router, RequestMeta meta, DeadlinePolicy deadlinePolicy, Body body) {
      // [START inbound-job]
      InboundCalls.Routed routed = InboundCalls.route(router, meta, "mywire", EnumSet.of(RpcType.UNARY),
          deadlinePolicy);                              // throws YarpcException: invalid-argument, unimplemented
      CompletableFuture<Response> result = InboundCalls.handle(routed.spec().unary(),
          Request.of(routed.meta(), body), body::release); // never null, never throws; releases only if the
                                                           // handler never took the body
      // [END inbound-job]
    }
  }

  // [START conformance]
  class HttpConformanceTest extends TransportConformanceSuite {
    @Override
    protected TransportUnderTest newTransport() {
      HttpTransport serverTransport = HttpTransport.create();   // two transports, as two processes would have
      HttpTransport clientTransport = HttpTransport.create();
      HttpInbound inbound = serverTransport.inbound();
      return new TransportUnderTest() {
        @Override public List<Inbound> serverInbounds() { return List.of(inbound); }
        @Override public Outbounds clientOutbounds() {           // called once the server listens
          HttpOutbound out = clientTransport.singleOutbound(inbound.hostPort());
          return Outbounds.builder().unary(out).oneway(out).build();
        }
        @Override public boolean supportsStreaming() { return false; }
        @Override public void close() { clientTransport.stop(); serverTransport.stop(); }
      };
    }
  }
  // [END conformance]
}
