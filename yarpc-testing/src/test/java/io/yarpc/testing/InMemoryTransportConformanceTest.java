package io.yarpc.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.yarpc.Outbounds;
import io.yarpc.transport.Inbound;
import java.util.List;

/** The whole conformance kit against {@link InMemoryTransport}, which must pass all of it. */
class InMemoryTransportConformanceTest extends TransportConformanceSuite {
  @Override
  protected TransportUnderTest newTransport() {
    InMemoryTransport transport = InMemoryTransport.create();
    return new TransportUnderTest() {
      @Override
      public List<Inbound> serverInbounds() {
        return List.of(transport.inbound());
      }

      @Override
      public Outbounds clientOutbounds() {
        return transport.outbounds();
      }

      @Override
      public boolean cutsLongErrorTexts() {
        return false;
      }

      @Override
      public String expectedResponseHeaderValue(String sent) {
        return sent; // headers are copied as they are
      }

      @Override
      public String expectedRequestHeaderValue(String sent) {
        return sent;
      }

      @Override
      public int maxBufferedStreamMessages() {
        return 1; // the default stream window
      }

      @Override
      public void assertNoLeaks() {
        transport.assertNoLeaks();
        BodyTracker tracker = transport.bodyTracker();
        assertThat(tracker.released()).as("bodies released").isEqualTo(tracker.allocated());
        assertThat(tracker.violations()).as("bodies used after release").isEmpty();
      }
    };
  }
}
