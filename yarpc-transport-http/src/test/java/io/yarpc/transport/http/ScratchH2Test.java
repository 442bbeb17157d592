package io.yarpc.transport.http;

import io.yarpc.*;
import io.yarpc.peer.*;
import io.yarpc.transport.*;
import java.time.Duration;
import java.util.concurrent.*;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ScratchH2Test {
  @Test
  void run() throws Exception {
    AtomicInteger handled = new AtomicInteger();
    HttpInbound in = HttpTransport.create().inbound();
    Dispatcher server = Dispatcher.builder("ss").inbound(in).build();
    server.register(java.util.List.of(Procedure.builder("echo").unary(r -> {
      System.err.println("DEBUG handler " + handled.incrementAndGet() + " " + r.meta().deadline());
      if (handled.get() == 1) { CompletableFuture<Response> never = new CompletableFuture<>(); Call c = Call.current(); c.onCancel(() -> never.completeExceptionally(c.cancellation())); return never; }
      return CompletableFuture.completedFuture(Response.of(Body.empty()));
    }).build()));
    server.start();
    for (int k = 0; k < 2; k++) {
    HttpTransport t = HttpTransport.create();
    HttpOutbound out = t.outboundBuilder(SinglePeerChooser.of(t, "127.0.0.1:" + in.listenAddress().getPort())).http2(true).build();
    Dispatcher client = Dispatcher.builder("cc").outbound("ss", Outbounds.unary(out)).build();
    client.start();
    for (int i = 0; i < 2; i++) {
      RequestMeta m = RequestMeta.builder().service("ss").procedure("echo").encoding("raw").deadline(Deadline.after(Duration.ofMillis(300))).build();
      try { client.clientConfig("ss").call(Request.of(m, Body.empty())).get(5, TimeUnit.SECONDS).body().release(); System.err.println("DEBUG ok " + i); }
      catch (Exception e) { System.err.println("DEBUG call " + i + " " + e); }
    }
    client.stop(); }
    server.stop();
  }
}
