package io.yarpc.peer.internal;

import io.yarpc.transport.RequestMeta;
import java.util.concurrent.ThreadLocalRandom;

/**
 * {@code two-random-choices}: two distinct members at random, and of those the one with fewer pending
 * requests (the first drawn on a tie). O(1); close to {@link FewestPendingStrategy} on large lists.
 */
public final class TwoRandomChoicesStrategy extends MemberArray {
  @Override
  public Member choose(RequestMeta meta) {
    int n = size();
    if (n == 1) {
      return get(0);
    }
    ThreadLocalRandom random = ThreadLocalRandom.current();
    int i = random.nextInt(n);
    int j = i + 1 + random.nextInt(n - 1); // any index but i
    if (j >= n) {
      j -= n;
    }
    Member a = get(i);
    Member b = get(j);
    return b.pendingRequests() < a.pendingRequests() ? b : a;
  }
}
