package io.yarpc.encoding.protobuf;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import io.yarpc.Dispatcher;
import io.yarpc.encoding.protobuf.internal.DecodeStats;
import io.yarpc.encoding.protobuf.testing.EchoGrpc;
import io.yarpc.encoding.protobuf.testing.EchoRequest;
import io.yarpc.encoding.protobuf.testing.EchoResponse;
import io.yarpc.encoding.protobuf.unsafe.UnsafeAliasing;
import io.yarpc.testing.InMemoryTransport;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Handler;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.io.ByteArrayOutputStream;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The opt-in aliasing decode of unary requests: when the pooled array goes back, and end to end. */
class UnsafeAliasingTest {
  private static EchoRequest bigRequest(int seed) {
    byte[] payload = new byte[1 << 20];
    new Random(seed).nextBytes(payload);
    return EchoRequest.newBuilder()
        .setMessage("m" + seed)
        .setPayload(ByteString.copyFrom(payload))
        .build();
  }

  @Test
  void arrayGoesBackOnlyAfterTheResponseBodyWasReleased() throws Exception {
    UnsafeAliasing pool = UnsafeAliasing.create();
    Handler<Request, Response> h =
        ProtobufProcedures.builder(new EchoService()).unsafeAliasing(pool).build().stream()
            .filter(
                p ->
                    p.name().equals("yarpc.test.protobuf.Echo::Unary")
                        && p.encoding().equals("proto"))
            .findFirst()
            .orElseThrow()
            .handlerSpec()
            .unary();
    EchoRequest req = bigRequest(1);
    RequestMeta meta =
        RequestMeta.builder()
            .caller("c")
            .service("echo")
            .procedure("yarpc.test.protobuf.Echo::Unary")
            .encoding("proto")
            .deadline(Deadline.after(5, SECONDS))
            .build();
    DecodeStats.reset();

    Response r = h.handle(Request.of(meta, Body.of(req.toByteArray()))).get(5, SECONDS);

    assertThat(DecodeStats.ALIASED.sum()).isEqualTo(1);
    assertThat(pool.pooledBytes()).as("the echoed payload still points into the array").isZero();
    ByteArrayOutputStream written = new ByteArrayOutputStream();
    r.body().writeTo(written);
    assertThat(EchoResponse.parseFrom(written.toByteArray()).getPayload())
        .isEqualTo(req.getPayload());
    r.body().release();
    assertThat(pool.pooledBytes())
        .as("back in the pool once the transport released the response")
        .isGreaterThanOrEqualTo(req.getSerializedSize());
  }

  @Test
  void endToEndEchoesStayIntactAndArraysAreReused() {
    UnsafeAliasing pool = UnsafeAliasing.create();
    InMemoryTransport transport = InMemoryTransport.create();
    Dispatcher server = Dispatcher.builder("echo").inbound(transport.inbound()).build();
    server.register(ProtobufProcedures.builder(new EchoService()).unsafeAliasing(pool).build());
    server.start();
    Dispatcher client =
        Dispatcher.builder("client").outbound("echo", transport.outbounds()).build();
    client.start();
    try {
      EchoGrpc.EchoBlockingStub stub =
          EchoGrpc.newBlockingStub(YarpcChannel.of(client.clientConfig("echo")));
      for (int i = 0; i < 20; i++) {
        EchoRequest req = bigRequest(i);
        EchoResponse res = stub.withDeadlineAfter(10, SECONDS).unary(req);
        assertThat(res.getPayload()).isEqualTo(req.getPayload());
      }
      assertThat(pool.borrowedArrays()).isEqualTo(20);
      assertThat(pool.allocatedArrays())
          .as("pooled arrays are reused across calls")
          .isLessThanOrEqualTo(2);
    } finally {
      client.stop();
      server.stop();
    }
    transport.assertNoLeaks();
  }
}
