package io.yarpc.observability.logging.internal;

import static java.util.Objects.requireNonNull;

import io.yarpc.internal.GoDurations;
import io.yarpc.observability.observer.internal.CallObserver;
import io.yarpc.observability.observer.internal.Direction;
import io.yarpc.observability.observer.internal.ObservedCall;
import io.yarpc.observability.observer.internal.Outcome;
import io.yarpc.transport.RequestMeta;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.event.Level;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * Writes one line per call with slf4j's key-value pairs, as yarpc-go's observability middleware writes one
 * zap entry per call ({@code internal/observability/call.go}, {@code endLogs}): its messages, its field
 * names, and a level chosen by direction and outcome. A disabled level costs one check. For streams: one
 * line when the stream ends (or fails to open), not one per message.
 */
public final class CallLogObserver implements CallObserver {
  /** yarpc-go's messages. */
  static final String HANDLED_INBOUND = "Handled inbound request.";

  static final String MADE_OUTBOUND = "Made outbound call.";
  static final String ERROR_INBOUND = "Error handling inbound request.";
  static final String ERROR_OUTBOUND = "Error making outbound call.";
  static final String STREAM_OPEN_ERROR = "Error creating stream";
  static final String STREAM_CLOSED = "Successfully closed stream";
  static final String STREAM_CLOSE_ERROR = "Error closing stream";

  private final Logger logger;
  // [direction][outcome: success, caller failure, server failure]; null: not logged
  private final Level[][] levels;

  /**
   * Lines to {@code logger} at {@code levels[direction.ordinal()][outcome]}, outcome 0 for success, 1 for
   * a caller failure, 2 for a server failure; a null level logs nothing.
   */
  public CallLogObserver(Logger logger, Level[][] levels) {
    this.logger = requireNonNull(logger, "logger");
    this.levels = new Level[][] {levels[0].clone(), levels[1].clone()};
  }

  private LoggingEventBuilder line(ObservedCall call, Outcome outcome) {
    int o = outcome.isSuccess() ? 0 : outcome.isCallerFailure() ? 1 : 2;
    Level level = levels[call.direction().ordinal()][o];
    if (level == null || !logger.isEnabledForLevel(level)) {
      return null;
    }
    RequestMeta m = call.meta();
    return logger
        .atLevel(level)
        .addKeyValue("source", m.caller())
        .addKeyValue("dest", m.service())
        .addKeyValue("transport", m.transport().isEmpty() ? "unknown" : m.transport())
        .addKeyValue("procedure", m.procedure())
        .addKeyValue("encoding", m.encoding())
        .addKeyValue("routingKey", m.routingKey())
        .addKeyValue("routingDelegate", m.routingDelegate())
        .addKeyValue("direction", call.direction().value())
        .addKeyValue("rpcType", call.rpcType().toString());
  }

  private static void result(LoggingEventBuilder b, ObservedCall call, Outcome outcome) {
    b.addKeyValue("successful", outcome.isSuccess());
    if (call.hasDeadline()) {
      b.addKeyValue("timeout", GoDurations.format(Duration.ofNanos(call.ttlNanos())));
    }
    if (outcome.isSuccess()) {
      return;
    }
    b.addKeyValue(
        "error", outcome.isApplicationError() ? Outcome.APPLICATION_ERROR : outcome.message());
    if (outcome.code() != null) {
      b.addKeyValue("errorCode", outcome.code().wireName());
    }
    if (outcome.errorName() != null) {
      b.addKeyValue("errorName", outcome.errorName());
    }
    if (outcome.details() != null) {
      b.addKeyValue("errorDetails", outcome.details());
    }
  }

  @Override
  public void begin(ObservedCall call) {}

  @Override
  public void end(ObservedCall call, Outcome outcome) {
    LoggingEventBuilder b = line(call, outcome);
    if (b == null) {
      return;
    }
    b.addKeyValue("latency", GoDurations.format(Duration.ofNanos(call.elapsedNanos())));
    result(b, call, outcome);
    boolean inbound = call.direction() == Direction.INBOUND;
    b.log(
        outcome.isSuccess()
            ? (inbound ? HANDLED_INBOUND : MADE_OUTBOUND)
            : (inbound ? ERROR_INBOUND : ERROR_OUTBOUND));
  }

  @Override
  public void streamOpened(ObservedCall call, Outcome outcome) {
    if (outcome.isSuccess()) {
      return; // the stream's line comes when it closes
    }
    LoggingEventBuilder b = line(call, outcome);
    if (b != null) {
      b.addKeyValue("latency", GoDurations.format(Duration.ofNanos(call.elapsedNanos())));
      result(b, call, outcome);
      b.log(STREAM_OPEN_ERROR);
    }
  }

  @Override
  public void streamMessage(ObservedCall call, boolean sent, long bytes, String error) {}

  @Override
  public void streamClosed(ObservedCall call, Outcome outcome) {
    LoggingEventBuilder b = line(call, outcome);
    if (b == null) {
      return;
    }
    b.addKeyValue("duration", GoDurations.format(Duration.ofNanos(call.elapsedNanos())))
        .addKeyValue("messagesSent", call.messagesSent())
        .addKeyValue("messagesReceived", call.messagesReceived());
    result(b, call, outcome);
    b.log(outcome.isSuccess() ? STREAM_CLOSED : STREAM_CLOSE_ERROR);
  }

  @Override
  public String toString() {
    return "CallLogObserver{" + logger.getName() + "}";
  }
}
