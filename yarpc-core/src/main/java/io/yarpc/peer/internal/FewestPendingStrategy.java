package io.yarpc.peer.internal;

import io.yarpc.transport.RequestMeta;

/**
 * {@code fewest-pending-requests}: the member with the fewest unfinished leases, read from the counts
 * the list keeps. Ties go to the first such member after the last one chosen, so members with equal
 * counts take turns (round-robin when calls do not overlap, as yarpc-go's heap). A scan: O(members) per
 * choice, stopping at the first idle member; for lists of thousands of peers {@link
 * TwoRandomChoicesStrategy} approximates it in O(1).
 */
public final class FewestPendingStrategy extends MemberArray {
  private int cursor; // where the next scan starts

  @Override
  public Member choose(RequestMeta meta) {
    int n = size();
    int i = cursor < n ? cursor : 0;
    Member best = null;
    int bestPending = Integer.MAX_VALUE;
    int bestIndex = i;
    for (int k = 0; k < n; k++, i = i + 1 == n ? 0 : i + 1) {
      Member m = get(i);
      int p = m.pendingRequests();
      if (p < bestPending) {
        best = m;
        bestPending = p;
        bestIndex = i;
        if (p == 0) {
          break;
        }
      }
    }
    cursor = bestIndex + 1;
    return best;
  }
}
