package io.yarpc.transport.tchannel;

import io.yarpc.errors.Code;
import io.yarpc.testing.RetrySuite;

/**
 * Retries over TChannel: a call the server refuses before its handler is answered with a {@code busy} or
 * {@code declined} error frame, which the TChannel protocol makes always safe to retry
 * (docs/spec/wire-tchannel.md §8). A handler's own {@code unavailable} travels as {@code declined} too
 * (yarpc-go's mapping), so the suite's handler fails with {@code internal} to show a call that reached
 * its handler is not retried.
 */
class TChannelRetryTest extends RetrySuite {
  TChannelRetryTest() {
    super(new TChannelUnderTest());
  }

  @Override
  protected Code handlerFailureCode() {
    return Code.INTERNAL;
  }
}
