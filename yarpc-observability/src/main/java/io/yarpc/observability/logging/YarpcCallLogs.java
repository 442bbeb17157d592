package io.yarpc.observability.logging;

import static java.util.Objects.requireNonNull;

import io.yarpc.Dispatcher;
import io.yarpc.observability.logging.internal.CallLogObserver;
import io.yarpc.observability.observer.internal.ObservingMiddleware;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * One structured slf4j line per call of a dispatcher, as yarpc-go's observability middleware logs them:
 * the same messages, fields and default levels.
 *
 * <pre>{@code
 * Dispatcher dispatcher = YarpcCallLogs.builder()
 *     .level(CallOutcome.SUCCESS, Level.INFO)       // both directions
 *     .build()
 *     .install(Dispatcher.builder("keyvalue"))
 *     .inbound(inbound)
 *     .build();
 * }</pre>
 *
 * <p><b>The line.</b> Message {@code Handled inbound request.}, {@code Made outbound call.}, {@code Error
 * handling inbound request.} or {@code Error making outbound call.}; for streams one line when the stream
 * ends, {@code Successfully closed stream} or {@code Error closing stream} (or {@code Error creating stream}
 * when it never opened). The fields are slf4j key-value pairs (a JSON encoder writes them as fields,
 * logback's pattern layout shows them with {@code %kvp}, slf4j-simple prints them before the message):
 * {@code source}, {@code dest}, {@code transport}, {@code procedure}, {@code encoding}, {@code routingKey},
 * {@code routingDelegate}, {@code direction} ({@code inbound}, {@code outbound}), {@code rpcType} ({@code
 * Unary}, {@code Oneway}, {@code Streaming}), {@code latency} (streams: {@code duration}, {@code
 * messagesSent}, {@code messagesReceived}), {@code successful}, {@code timeout} (the time the call had,
 * when it had a deadline), and for failures {@code error} (the message, or {@code application_error} for a
 * response flagged as an application error), {@code errorCode}, {@code errorName} and {@code
 * errorDetails} when known. Durations are written as Go writes them ({@code 1.5ms}). Header values and
 * bodies are never logged.
 *
 * <p><b>Levels</b> by {@link CallOutcome} and direction; defaults are yarpc-go's: successes at DEBUG, caller
 * failures at WARN inbound and ERROR outbound, server failures at ERROR. {@link Builder#level} sets both
 * directions, {@link Builder#inboundLevel} and {@link Builder#outboundLevel} one, and a direction's own
 * setting wins over {@code level} whatever the order of the calls (as yarpc-go's {@code Levels.Inbound}
 * over {@code Levels.Default}). Which codes are the caller's fault: {@link CallOutcome}.
 *
 * <p><b>From a configuration file.</b> With yarpc-config, a file's {@code logging.levels} section
 * (yarpc-go's) installs call logs on the dispatcher builder it loads, with these levels: {@code success},
 * {@code clientError} ({@link CallOutcome#CALLER_FAILURE}) and {@code serverError} for both directions
 * ({@link Builder#level}), and the same keys under {@code inbound} and {@code outbound} for one ({@link
 * Builder#inboundLevel}, {@link Builder#outboundLevel}). A level is zap's name, as yarpc-go writes it:
 * {@code debug}, {@code info}, {@code warn}, {@code error}, and {@code dpanic}, {@code panic}, {@code
 * fatal}, which log at ERROR; also {@code trace}, and {@code off} for no line. yarpc-go's deprecated
 * {@code failure} and {@code applicationError} are refused (use {@code clientError} and {@code
 * serverError}). The lines go to the slf4j {@link Logger} given with {@code
 * YarpcConfig.loader().provide(Logger.class, logger)}, else to {@value #DEFAULT_LOGGER_NAME}. Do not
 * install call logs in code as well on that builder: {@link #install} refuses it.
 *
 * <p><b>Cost.</b> A call whose level is off or disabled in the logger costs one level check. Thread-safe.
 */
public final class YarpcCallLogs {
  /** The default logger's name. */
  public static final String DEFAULT_LOGGER_NAME = "io.yarpc.calls";

  private final CallLogObserver observer;

  private YarpcCallLogs(Builder b) {
    Level[][] levels = {
      {Level.DEBUG, Level.WARN, Level.ERROR}, // yarpc-go's inbound defaults
      {Level.DEBUG, Level.ERROR, Level.ERROR} // and outbound
    };
    for (int i = 0; i < 3; i++) {
      if (b.bothSet[i]) {
        levels[0][i] = levels[1][i] = b.both[i];
      }
      if (b.inboundSet[i]) {
        levels[0][i] = b.inbound[i];
      }
      if (b.outboundSet[i]) {
        levels[1][i] = b.outbound[i];
      }
    }
    this.observer = new CallLogObserver(b.logger, levels);
  }

  /** A builder with yarpc-go's defaults (see the class comment). */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Adds the call-log middleware to the end of each of {@code dispatcher}'s six middleware chains, and
   * returns it: the lines then describe inbound calls as the inbound middleware added before it passed them
   * on, and outbound calls as the outbound middleware added after it will see them. When metrics were
   * installed on this builder before, the call logs join their middleware instead (one layer watches for
   * both, at the first install's place).
   *
   * @throws IllegalStateException when call logs are installed on {@code dispatcher} already, by this
   *     method or by the {@code logging.levels} section of the configuration file it was loaded from
   *     (every call would be logged twice)
   */
  public Dispatcher.Builder install(Dispatcher.Builder dispatcher) {
    ObservingMiddleware.install(
        requireNonNull(dispatcher, "dispatcher"), observer, "call logs", "logging.levels");
    return dispatcher;
  }

  @Override
  public String toString() {
    return "YarpcCallLogs{" + observer + "}";
  }

  /** Builds {@link YarpcCallLogs}; not thread-safe. */
  public static final class Builder {
    private Logger logger = LoggerFactory.getLogger(DEFAULT_LOGGER_NAME);
    // what the user set, by CallOutcome ordinal: for both directions, and for each
    private final Level[] both = new Level[3];
    private final boolean[] bothSet = new boolean[3];
    private final Level[] inbound = new Level[3];
    private final boolean[] inboundSet = new boolean[3];
    private final Level[] outbound = new Level[3];
    private final boolean[] outboundSet = new boolean[3];

    private Builder() {}

    /** The logger to write to; default the logger named {@value #DEFAULT_LOGGER_NAME}. */
    public Builder logger(Logger logger) {
      this.logger = requireNonNull(logger, "logger");
      return this;
    }

    /**
     * The level of the lines of calls that end with {@code outcome}, inbound and outbound, unless a
     * direction sets its own; {@code null} logs none of them. Defaults: see the class comment.
     */
    public Builder level(CallOutcome outcome, Level level) {
      int i = requireNonNull(outcome, "outcome").ordinal();
      both[i] = level;
      bothSet[i] = true;
      return this;
    }

    /** As {@link #level}, for inbound calls only (calls this dispatcher serves). */
    public Builder inboundLevel(CallOutcome outcome, Level level) {
      int i = requireNonNull(outcome, "outcome").ordinal();
      inbound[i] = level;
      inboundSet[i] = true;
      return this;
    }

    /** As {@link #level}, for outbound calls only (calls this dispatcher makes). */
    public Builder outboundLevel(CallOutcome outcome, Level level) {
      int i = requireNonNull(outcome, "outcome").ordinal();
      outbound[i] = level;
      outboundSet[i] = true;
      return this;
    }

    /** The call logs. */
    public YarpcCallLogs build() {
      return new YarpcCallLogs(this);
    }
  }
}
