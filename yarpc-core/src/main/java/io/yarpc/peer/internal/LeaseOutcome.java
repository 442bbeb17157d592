package io.yarpc.peer.internal;

import io.yarpc.errors.Code;
import io.yarpc.errors.FaultType;
import io.yarpc.errors.YarpcException;
import io.yarpc.internal.Futures;
import io.yarpc.transport.Deadline;
import java.util.concurrent.CancellationException;

/**
 * What a finished lease says about its peer, for outlier detection (see {@link
 * io.yarpc.peer.OutlierDetection}): the peer served the call, failed it, or the call says nothing.
 */
public enum LeaseOutcome {
  /** The peer answered: a response, an application error, or an error that is the caller's fault. */
  SUCCESS,
  /** The peer failed the call: an error that is the server's fault, or the deadline passed. */
  FAILURE,
  /** Nothing to learn: the caller cancelled, or the call was given up before it was sent. */
  NONE;

  /**
   * The outcome of a call that ended with {@code error} (null: success) and had {@code deadline} (null:
   * none). A {@link Code#CANCELLED} error or a cancelled future is a failure when the call was sent
   * (not {@linkplain YarpcException#unprocessed() unprocessed}) and its deadline has passed — the call
   * path cancels a call whose deadline passed — and nothing otherwise. Any other error is a failure when
   * its code is the server's fault ({@link Code#faultType()}); a throwable that is not a YARPC error
   * counts as {@link Code#UNKNOWN}, as {@link YarpcException#from} maps it.
   */
  public static LeaseOutcome of(Throwable error, Deadline deadline) {
    if (error == null) {
      return SUCCESS;
    }
    Code code = code(error);
    if (code == Code.CANCELLED) {
      return deadlinePassed(error, deadline) ? FAILURE : NONE;
    }
    return code.faultType() == FaultType.SERVER ? FAILURE : SUCCESS;
  }

  /** Whether {@code error} (a cancellation) ended a sent call whose deadline has passed. */
  static boolean deadlinePassed(Throwable error, Deadline deadline) {
    Throwable root = Futures.unwrap(error);
    boolean unprocessed = root instanceof YarpcException && ((YarpcException) root).unprocessed();
    return !unprocessed && deadline != null && deadline.isExpired();
  }

  /** The code {@code error} stands for: a YARPC error's, {@code cancelled} or {@code unknown}. */
  static Code code(Throwable error) {
    Throwable root = Futures.unwrap(error);
    if (root instanceof YarpcException) {
      return ((YarpcException) root).code();
    }
    return root instanceof CancellationException ? Code.CANCELLED : Code.UNKNOWN;
  }
}
