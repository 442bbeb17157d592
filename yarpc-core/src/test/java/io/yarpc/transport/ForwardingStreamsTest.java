package io.yarpc.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The forwarding streams hand every call on, including the methods the interfaces give defaults. */
class ForwardingStreamsTest {
  private static final RequestMeta META = RequestMeta.builder().procedure("p").build();

  @Test
  void aClientStreamForwardsEveryCall() {
    List<String> calls = new ArrayList<>();
    Headers trailers = Headers.of("t", "1");
    ClientStream inner =
        new ClientStream() {
          @Override
          public RequestMeta meta() {
            return META;
          }

          @Override
          public CompletableFuture<Void> send(StreamMessage m) {
            calls.add("send");
            return CompletableFuture.completedFuture(null);
          }

          @Override
          public CompletableFuture<StreamMessage> receive() {
            calls.add("receive");
            return CompletableFuture.completedFuture(null);
          }

          @Override
          public CompletableFuture<Headers> headers() {
            calls.add("headers");
            return CompletableFuture.completedFuture(Headers.empty());
          }

          @Override
          public CompletableFuture<Headers> trailers() {
            calls.add("trailers");
            return CompletableFuture.completedFuture(trailers);
          }

          @Override
          public void halfClose() {
            calls.add("halfClose");
          }

          @Override
          public void cancel() {
            calls.add("cancel");
          }
        };
    ClientStream outer = new ForwardingClientStream(inner) {};
    assertThat(outer.meta()).isSameAs(META);
    outer.send(StreamMessage.of(Body.empty()));
    outer.receive();
    outer.headers();
    assertThat(outer.trailers().join()).isSameAs(trailers);
    outer.halfClose();
    outer.cancel();
    assertThat(calls)
        .containsExactly("send", "receive", "headers", "trailers", "halfClose", "cancel");
  }

  @Test
  void aServerStreamForwardsEveryCall() {
    List<String> calls = new ArrayList<>();
    ServerStream inner =
        new ServerStream() {
          @Override
          public RequestMeta meta() {
            return META;
          }

          @Override
          public CompletableFuture<Void> send(StreamMessage m) {
            calls.add("send");
            return CompletableFuture.completedFuture(null);
          }

          @Override
          public CompletableFuture<StreamMessage> receive() {
            calls.add("receive");
            return CompletableFuture.completedFuture(null);
          }

          @Override
          public void sendHeaders(Headers headers) {
            calls.add("sendHeaders");
          }

          @Override
          public void setCompression(String compressor) {
            calls.add("setCompression " + compressor);
          }

          @Override
          public void setTrailers(Headers trailers) {
            calls.add("setTrailers");
          }
        };
    ServerStream outer = new ForwardingServerStream(inner) {};
    assertThat(outer.meta()).isSameAs(META);
    outer.send(StreamMessage.of(Body.empty()));
    outer.receive();
    outer.sendHeaders(Headers.empty());
    outer.setCompression("gzip");
    outer.setTrailers(Headers.empty());
    assertThat(calls)
        .containsExactly("send", "receive", "sendHeaders", "setCompression gzip", "setTrailers");
  }
}
