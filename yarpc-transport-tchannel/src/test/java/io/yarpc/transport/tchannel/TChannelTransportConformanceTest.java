package io.yarpc.transport.tchannel;

import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.Outbounds;
import io.yarpc.errors.Code;
import io.yarpc.errors.YarpcException;
import io.yarpc.testing.TransportConformanceSuite;
import io.yarpc.testing.TransportUnderTest;
import io.yarpc.transport.Body;
import io.yarpc.transport.Deadline;
import io.yarpc.transport.Inbound;
import io.yarpc.transport.Request;
import io.yarpc.transport.RequestMeta;
import io.yarpc.transport.Response;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The conformance kit over TChannel: a server transport with one inbound, a client transport with a
 * single-peer outbound to it. Oneway and streaming are not part of TChannel as yarpc-go uses it.
 *
 * <p>Handler errors travel as application errors ({@code $rpc$-error-code}), so every code survives the
 * round trip. Routing errors (unknown service or procedure: {@code unimplemented}) travel as error frames,
 * where yarpc-go's table folds {@code unimplemented} into bad request, which a client reads back as {@code
 * invalid-argument}: those two checks are replaced by TChannel's version below.
 */
class TChannelTransportConformanceTest extends TransportConformanceSuite {
  @Override
  protected TransportUnderTest newTransport() {
    TChannelTransport server = TChannelTransport.of(SERVER);
    TChannelInbound inbound = configureInbound(server.inboundBuilder()).build();
    TChannelTransport client =
        configureClient(TChannelTransport.builder().serviceName(CLIENT)).build();
    return new TransportUnderTest() {
      @Override
      public List<Inbound> serverInbounds() {
        return List.of(inbound);
      }

      @Override
      public Outbounds clientOutbounds() {
        return Outbounds.unary(client.singleOutbound(inbound.hostPort()));
      }

      @Override
      public boolean cutsLongErrorTexts() {
        return false;
      }

      @Override
      public String expectedResponseHeaderValue(String sent) {
        return sent; // TChannel strings are length-prefixed UTF-8: any text travels whole
      }

      @Override
      public String expectedRequestHeaderValue(String sent) {
        return sent;
      }

      @Override
      public String errorDetailsLimitation() {
        return "an error travels as an error frame (a code byte and a message) or, with an"
            + " application-error response attached, as $rpc$-error-code/-name/-message headers:"
            + " neither has a place for details bytes";
      }

      @Override
      public boolean supportsOneway() {
        return false;
      }

      @Override
      public boolean supportsStreaming() {
        return false;
      }

      @Override
      public void close() {
        client.stop();
        server.stop();
      }
    };
  }

  /** The server's inbound; subclasses add TLS. */
  protected TChannelInbound.Builder configureInbound(TChannelInbound.Builder b) {
    return b;
  }

  /** The client's transport; subclasses add TLS. */
  protected TChannelTransport.Builder configureClient(TChannelTransport.Builder b) {
    return b;
  }

  /** Unknown service: a bad-request error frame with yarpc-go's message, read as invalid-argument. */
  @Test
  @Override
  public void unknownService() throws Exception {
    RequestMeta meta = meta("body-echo").toBuilder().service("x").build();
    YarpcException e = failure(clientConfig().call(Request.of(meta, Body.of(new byte[] {1}))));
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage())
        .isEqualTo("unrecognized service name \"x\", available services: \"conformance-server\"");
  }

  /** Unknown procedure: a bad-request error frame with yarpc-go's message, read as invalid-argument. */
  @Test
  @Override
  public void unknownProcedure() throws Exception {
    YarpcException e =
        failure(clientConfig().call(Request.of(meta("nope"), Body.of(new byte[] {1}))));
    assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
    assertThat(e.getMessage())
        .isEqualTo("unrecognized procedure \"nope\" for service \"conformance-server\"");
  }

  private static RequestMeta meta(String procedure) {
    return RequestMeta.builder()
        .procedure(procedure)
        .encoding("raw")
        .deadline(Deadline.after(WAIT))
        .build();
  }

  private static YarpcException failure(CompletableFuture<Response> future) throws Exception {
    try {
      Response r = future.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      r.body().release();
      throw new AssertionError("expected a failure, got " + r);
    } catch (ExecutionException e) {
      assertThat(e.getCause()).isInstanceOf(YarpcException.class);
      return (YarpcException) e.getCause();
    }
  }
}
