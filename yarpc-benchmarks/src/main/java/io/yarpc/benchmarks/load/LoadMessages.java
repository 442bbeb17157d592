package io.yarpc.benchmarks.load;

import com.google.protobuf.ByteString;
import io.yarpc.benchmarks.proto.EchoMessage;
import java.util.Random;

/** The messages the harness and the micro-benchmarks send. */
public final class LoadMessages {
  /** The token every message carries. */
  public static final String TOKEN = "bench";

  private LoadMessages() {}

  /** An {@link EchoMessage} with {@code size} random (seeded, so repeatable) payload bytes and the token. */
  public static EchoMessage message(int size) {
    byte[] payload = new byte[size];
    new Random(size).nextBytes(payload);
    return EchoMessage.newBuilder()
        .setPayload(ByteString.copyFrom(payload))
        .setToken(TOKEN)
        .build();
  }
}
