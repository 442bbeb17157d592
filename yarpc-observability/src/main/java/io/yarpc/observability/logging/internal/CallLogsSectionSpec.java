package io.yarpc.observability.logging.internal;

import io.yarpc.Dispatcher;
import io.yarpc.config.spi.ConfigContext;
import io.yarpc.config.spi.ConfigSection;
import io.yarpc.config.spi.SectionSpec;
import io.yarpc.observability.logging.CallOutcome;
import io.yarpc.observability.logging.YarpcCallLogs;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.event.Level;

/**
 * A configuration file's {@code logging.levels} section, as yarpc-go's: installs {@link YarpcCallLogs}
 * with these levels, writing to the slf4j {@link Logger} the program provided to the loader, else the
 * default logger. {@code success}, {@code clientError} and {@code serverError} set both directions;
 * {@code inbound} and {@code outbound} hold the same keys for one direction, which win. Found by
 * yarpc-config through {@link java.util.ServiceLoader}.
 */
public final class CallLogsSectionSpec implements SectionSpec {
  private static final String DEPRECATED =
      "yarpc-go's deprecated level, for which it logs application errors and other failures apart;"
          + " yarpc-java's call logs tell failures apart by fault: use clientError and serverError";

  /**
   * The level names a file may give: zap's (yarpc-go's), slf4j's {@code trace}, and {@code off}. slf4j
   * has nothing above ERROR: zap's {@code dpanic}, {@code panic} and {@code fatal} log at ERROR (and
   * yarpc-java never panics or exits for a call).
   */
  private enum LevelName {
    TRACE(Level.TRACE),
    DEBUG(Level.DEBUG),
    INFO(Level.INFO),
    WARN(Level.WARN),
    ERROR(Level.ERROR),
    DPANIC(Level.ERROR),
    PANIC(Level.ERROR),
    FATAL(Level.ERROR),
    OFF(null);

    final Level level;

    LevelName(Level level) {
      this.level = level;
    }
  }

  /** For {@link java.util.ServiceLoader}. */
  public CallLogsSectionSpec() {}

  @Override
  public String key() {
    return "logging.levels";
  }

  @Override
  public Consumer<Dispatcher.Builder> configure(ConfigSection section, ConfigContext context) {
    YarpcCallLogs.Builder logs = YarpcCallLogs.builder();
    Logger logger = context.provided(Logger.class);
    if (logger != null) {
      logs.logger(logger);
    }
    levels(section, logs::level);
    ConfigSection inbound = section.section("inbound");
    if (inbound != null) {
      levels(inbound, logs::inboundLevel);
    }
    ConfigSection outbound = section.section("outbound");
    if (outbound != null) {
      levels(outbound, logs::outboundLevel);
    }
    return section.hasProblems() ? null : logs.build()::install;
  }

  private static void levels(ConfigSection section, BiConsumer<CallOutcome, Level> set) {
    level(section, "success", CallOutcome.SUCCESS, set);
    level(section, "clientError", CallOutcome.CALLER_FAILURE, set);
    level(section, "serverError", CallOutcome.SERVER_FAILURE, set);
    section.unsupported("failure", DEPRECATED);
    section.unsupported("applicationError", DEPRECATED);
  }

  private static void level(
      ConfigSection section, String key, CallOutcome outcome, BiConsumer<CallOutcome, Level> set) {
    section.enumValue(key, LevelName.class, name -> set.accept(outcome, name.level));
  }
}
