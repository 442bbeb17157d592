package io.yarpc.transport.http;

import com.google.gson.Gson;
import com.google.gson.JsonElement;
import io.yarpc.Call;
import io.yarpc.Dispatcher;
import io.yarpc.encoding.EncodingErrors;
import io.yarpc.encoding.json.Json;
import io.yarpc.encoding.raw.Raw;
import io.yarpc.errors.YarpcException;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Procedure;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;

/**
 * The crossdock test subject of docs/spec/model.md §8.9 ({@code yarpc-test}) on an HTTP inbound:
 * {@code echo} (json), {@code echo/raw}, {@code unexpected-error}, {@code bad-response}, {@code phone}
 * (a JSON proxy calling another procedure over a fresh HTTP outbound), {@code sleep},
 * {@code waitfortimeout/raw}, and {@code Echo::echo} standing in for the Thrift echo (registered for
 * encoding {@code thrift} only, so a JSON request gets the thrift encoding-mismatch error).
 */
final class YarpcTestService implements AutoCloseable {
  static final String NAME = "yarpc-test";
  private static final Gson GSON = new Gson();

  final HttpTransport transport;
  final HttpInbound inbound;
  final Dispatcher dispatcher;

  static final class Token {
    String token;
  }

  static final class HttpAddress {
    String host;
    int port;
  }

  static final class TransportConfig {
    HttpAddress http;
  }

  static final class PhoneRequest {
    String service;
    String procedure;
    TransportConfig transport;
    JsonElement body;
  }

  static final class PhoneResponse {
    String service;
    String procedure;
    JsonElement body;
  }

  YarpcTestService(Consumer<HttpInbound.Builder> inboundConfig) {
    transport = HttpTransport.builder().build();
    HttpInbound.Builder ib = transport.inboundBuilder();
    inboundConfig.accept(ib);
    inbound = ib.build();
    dispatcher = Dispatcher.builder(NAME).inbound(inbound).build();
    dispatcher.register(
        Json.procedure("echo", Token.class, t -> t),
        Raw.procedure("echo/raw", body -> body),
        Json.procedure(
            "unexpected-error",
            Token.class,
            t -> {
              throw new RuntimeException("error");
            }),
        Json.procedure("bad-response", Token.class, t -> Map.of("foo", Double.NaN)),
        Json.procedure(
            "sleep",
            JsonElement.class,
            t -> {
              Thread.sleep(1000);
              return null;
            }),
        Raw.procedure(
            "waitfortimeout/raw",
            body -> {
              CountDownLatch done = new CountDownLatch(1);
              Call.current().onCancel(done::countDown);
              done.await();
              return null;
            }),
        Procedure.builder("Echo::echo")
            .encoding("thrift")
            .unary(
                request -> {
                  EncodingErrors.expectEncoding(request.meta(), "thrift");
                  return CompletableFuture.completedFuture(Response.of(Body.empty()));
                })
            .build(),
        Json.procedure("phone", PhoneRequest.class, this::phone),
        // test helpers: echo the request's metadata, echo application headers back
        Procedure.builder("meta")
            .unary(
                request -> {
                  RequestMeta m = request.meta();
                  Map<String, Object> out = new java.util.LinkedHashMap<>();
                  out.put("caller", m.caller());
                  out.put("service", m.service());
                  out.put("procedure", m.procedure());
                  out.put("encoding", m.encoding());
                  out.put("transport", m.transport());
                  out.put("shardKey", m.shardKey());
                  out.put("routingKey", m.routingKey());
                  out.put("routingDelegate", m.routingDelegate());
                  out.put("callerProcedure", m.callerProcedure());
                  out.put("hasDeadline", m.deadline() != null);
                  out.put("headers", m.headers().asMap());
                  out.put("propagationHeaders", m.propagationHeaders().asMap());
                  return CompletableFuture.completedFuture(
                      Response.of(Body.of(GSON.toJson(out).getBytes(StandardCharsets.UTF_8))));
                })
            .build(),
        Procedure.builder("echo/headers")
            .unary(
                request ->
                    CompletableFuture.completedFuture(
                        Response.builder()
                            .headers(request.headers())
                            .body(Body.of(request.body().toByteArray()))
                            .build()))
            .build());
    dispatcher.start();
  }

  YarpcTestService() {
    this(b -> {});
  }

  String hostPort() {
    return inbound.hostPort();
  }

  int port() {
    return inbound.address().getPort();
  }

  private PhoneResponse phone(PhoneRequest req) throws Exception {
    HttpOutbound out =
        transport.singleOutbound(req.transport.http.host + ":" + req.transport.http.port);
    out.start();
    try {
      // As yarpc-go's phone: the callee gets 500 ms, and the call ends with the handler's own call
      // (here through cancellation), so a proxy that runs out of time reports its own timeout.
      Call call = Call.current();
      RequestMeta meta =
          RequestMeta.builder()
              .caller(NAME)
              .service(req.service)
              .procedure(req.procedure)
              .encoding("json")
              .deadline(Deadline.after(Duration.ofMillis(500)))
              .build();
      byte[] body = GSON.toJson(req.body).getBytes(StandardCharsets.UTF_8);
      Response res;
      CompletableFuture<Response> pending = out.call(Request.of(meta, Body.of(body)));
      AutoCloseable onCancel = call.onCancel(() -> pending.cancel(false));
      try {
        res = pending.get();
      } catch (ExecutionException e) {
        YarpcException ye = YarpcException.from(e.getCause());
        if (ye.response() != null) {
          ye.response().body().release();
        }
        throw ye.withResponse(null);
      } finally {
        onCancel.close();
      }
      try {
        PhoneResponse pr = new PhoneResponse();
        pr.service = NAME;
        pr.procedure = call.meta().procedure();
        pr.body =
            GSON.fromJson(
                new String(res.body().toByteArray(), StandardCharsets.UTF_8), JsonElement.class);
        return pr;
      } finally {
        res.body().release();
      }
    } finally {
      out.stop();
    }
  }

  @Override
  public void close() {
    dispatcher.stop();
    transport.stop();
  }
}
