package io.yarpc.config.spi;

import io.yarpc.Dispatcher;
import java.util.function.Consumer;

/**
 * How a section that configures the dispatcher itself, rather than a transport, is read: the section at
 * {@link #key()}, owned by a module the configuration module does not depend on. yarpc-observability
 * reads yarpc-go's {@code metrics} and {@code logging.levels} this way:
 *
 * <pre>
 * metrics:
 *   tagsBlocklist: [routing_delegate]
 * logging:
 *   levels:
 *     clientError: info
 * </pre>
 *
 * <p>Implementations are found with {@link java.util.ServiceLoader} ({@code
 * META-INF/services/io.yarpc.config.spi.SectionSpec}; a public no-argument constructor) or registered
 * with the loader, which replaces one found for the same key. The contract of {@link TransportSpec}
 * about problems and state applies: read the section with its getters, report what is wrong with {@link
 * ConfigSection#problem(String, String)}, keep no state between calls, start nothing.
 */
public interface SectionSpec {
  /**
   * The key path of the section: a top-level key other than the loader's own ({@code inbounds}, {@code
   * outbounds}, {@code transports}, {@code logging}), e.g. {@code metrics}, or a key of {@code logging}
   * other than {@code lifecycle}, e.g. {@code logging.levels}.
   */
  String key();

  /**
   * Reads {@code section} (an empty one when the key is present with no value) and returns what it does
   * to the dispatcher, or {@code null} for nothing; called once per load that has the key. The loader
   * applies the result to the {@link Dispatcher.Builder} it returns (adding middleware, say) only once
   * the whole document was read without a problem, in document order with the other sections' and before
   * any middleware the program adds to the builder. What it throws then is reported as a problem at the
   * section's path.
   */
  Consumer<Dispatcher.Builder> configure(ConfigSection section, ConfigContext context);
}
