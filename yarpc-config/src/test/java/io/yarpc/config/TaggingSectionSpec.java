package io.yarpc.config;

import io.yarpc.Dispatcher;
import io.yarpc.config.spi.ConfigContext;
import io.yarpc.config.spi.ConfigSection;
import io.yarpc.config.spi.SectionSpec;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A third-party section, as a module would ship one: {@code {label: L, procedures: [...]}} installs a
 * unary inbound middleware that writes {@code "L procedure"} to the {@link Seen} the program provided
 * for every call (of the listed procedures, when listed). The label {@code throw} makes applying it
 * fail. Registered under {@code tagging} in {@code src/test/resources/plugin/META-INF/services}, and by
 * hand under other keys.
 */
public final class TaggingSectionSpec implements SectionSpec {
  /** What the middleware saw, and how often a section was applied. */
  public static class Seen {
    final List<String> lines = new CopyOnWriteArrayList<>();
    final AtomicInteger applied = new AtomicInteger();
  }

  private final String key;

  /** For {@link java.util.ServiceLoader}: the key {@code tagging}. */
  public TaggingSectionSpec() {
    this("tagging");
  }

  TaggingSectionSpec(String key) {
    this.key = key;
  }

  @Override
  public String key() {
    return key;
  }

  @Override
  public Consumer<Dispatcher.Builder> configure(ConfigSection section, ConfigContext context) {
    String label = section.requireString("label");
    List<String> procedures = section.strings("procedures");
    Seen seen = context.provided(Seen.class);
    if (seen == null) {
      section.problem(null, "needs a Seen: YarpcConfig.loader().provide(Seen.class, ...)");
    }
    if (section.hasProblems()) {
      return null;
    }
    return builder -> {
      if (label.equals("throw")) {
        throw new IllegalStateException("cannot apply \"throw\"");
      }
      seen.applied.incrementAndGet();
      builder.unaryInboundMiddleware(
          (request, next) -> {
            String procedure = request.meta().procedure();
            if (procedures == null || procedures.contains(procedure)) {
              seen.lines.add(label + " " + procedure);
            }
            return next.handle(request);
          });
    };
  }
}
