package io.yarpc.peer.internal;

import io.yarpc.transport.RequestMeta;
import java.util.concurrent.ThreadLocalRandom;

/** {@code random}: a member chosen uniformly at random. O(1). */
public final class RandomStrategy extends MemberArray {
  @Override
  public Member choose(RequestMeta meta) {
    return get(ThreadLocalRandom.current().nextInt(size()));
  }
}
