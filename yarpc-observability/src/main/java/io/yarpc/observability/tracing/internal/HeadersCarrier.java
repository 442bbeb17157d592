package io.yarpc.observability.tracing.internal;

import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapSetter;
import io.yarpc.transport.Headers;

/** Propagation headers as OpenTelemetry's carrier: read from {@link Headers}, written to a builder. */
final class HeadersCarrier {
  private HeadersCarrier() {}

  /** Reads keys in any casing; lists canonical (lower-case) keys, as the propagators expect. */
  static final TextMapGetter<Headers> GETTER =
      new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Headers carrier) {
          return carrier.keys();
        }

        @Override
        public String get(Headers carrier, String key) {
          return carrier == null ? null : carrier.get(key);
        }
      };

  /** Sets a header; a later value for the same key wins. */
  static final TextMapSetter<Headers.Builder> SETTER =
      (carrier, key, value) -> {
        if (carrier != null) {
          carrier.add(key, value);
        }
      };
}
