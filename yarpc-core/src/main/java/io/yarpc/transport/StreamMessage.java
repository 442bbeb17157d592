package io.yarpc.transport;

import static java.util.Objects.requireNonNull;

/**
 * One message of a stream. Its body follows {@link Body}'s ownership rules: a received message belongs to
 * the receiver, who releases it once consumed (encodings do so after decoding); a sent message belongs to
 * the stream, which releases it once written.
 */
public final class StreamMessage {
  private final Body body;

  private StreamMessage(Body body) {
    this.body = requireNonNull(body, "body");
  }

  /** A message carrying {@code body}. */
  public static StreamMessage of(Body body) {
    return new StreamMessage(body);
  }

  /** The payload. */
  public Body body() {
    return body;
  }

  /** Releases the body; see {@link Body#release()}. */
  public void release() {
    body.release();
  }
}
