package io.yarpc.observability.admin.internal;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.yarpc.Dispatcher;
import io.yarpc.DispatcherStatus;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Locale;

/** What each path answers; knows nothing of Netty's channels (the handler writes the answer). */
final class AdminRoutes {
  static final String METRICS = "/metrics";
  static final String HEALTH = "/health";
  static final String DEBUG_PAGE = "/debug/yarpc";
  static final String DEBUG_JSON = "/debug/yarpc.json";

  static final String TEXT = "text/plain; charset=utf-8";
  static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";
  static final String OPENMETRICS_TEXT =
      "application/openmetrics-text; version=1.0.0; charset=utf-8";

  private final Dispatcher dispatcher;
  private final PrometheusMeterRegistry registry;

  AdminRoutes(Dispatcher dispatcher, PrometheusMeterRegistry registry) {
    this.dispatcher = dispatcher;
    this.registry = registry;
  }

  /** An answer: status, content type and body. */
  record Answer(HttpResponseStatus status, String contentType, byte[] body) {
    static Answer text(HttpResponseStatus status, String text) {
      return new Answer(status, TEXT, text.getBytes(StandardCharsets.UTF_8));
    }
  }

  /** Whether {@code path} is one of the endpoints. */
  static boolean known(String path) {
    return path.equals(METRICS)
        || path.equals(HEALTH)
        || path.equals(DEBUG_PAGE)
        || path.equals(DEBUG_JSON);
  }

  /** The answer to a GET (or HEAD) of the known {@code path}. */
  Answer get(String path, String accept) {
    switch (path) {
      case METRICS:
        return metrics(accept);
      case HEALTH:
        return dispatcher.isRunning()
            ? Answer.text(HttpResponseStatus.OK, "SERVING\n")
            : Answer.text(HttpResponseStatus.SERVICE_UNAVAILABLE, "NOT_SERVING\n");
      case DEBUG_PAGE:
        return new Answer(
            HttpResponseStatus.OK,
            "text/html; charset=utf-8",
            StatusHtml.render(dispatcher.introspect(), Instant.now(), registry != null)
                .getBytes(StandardCharsets.UTF_8));
      case DEBUG_JSON:
        DispatcherStatus status = dispatcher.introspect();
        return new Answer(
            HttpResponseStatus.OK,
            "application/json; charset=utf-8",
            StatusJson.render(status).getBytes(StandardCharsets.UTF_8));
      default:
        throw new IllegalArgumentException("not an endpoint: " + path);
    }
  }

  /** The answer to any request for an unknown path. */
  static Answer notFound() {
    return Answer.text(
        HttpResponseStatus.NOT_FOUND,
        "not found; the admin server answers GET "
            + METRICS
            + ", "
            + HEALTH
            + ", "
            + DEBUG_PAGE
            + " and "
            + DEBUG_JSON
            + "\n");
  }

  private Answer metrics(String accept) {
    if (registry == null) {
      return Answer.text(
          HttpResponseStatus.NOT_FOUND,
          "no metrics: this admin server was built without a meter registry"
              + " (AdminServer.Builder.meterRegistry)\n");
    }
    // Prometheus asks for OpenMetrics first and the 0.0.4 text format as a fallback; answer the
    // first
    // text format it accepts (never protobuf: a scraper that wants it also takes text).
    boolean openMetrics =
        accept != null && accept.toLowerCase(Locale.ROOT).contains("application/openmetrics-text");
    String contentType = openMetrics ? OPENMETRICS_TEXT : PROMETHEUS_TEXT;
    ByteArrayOutputStream out = new ByteArrayOutputStream(8192);
    try {
      registry.scrape(out, contentType);
    } catch (IOException e) { // a ByteArrayOutputStream does not throw
      throw new IllegalStateException(e);
    }
    return new Answer(HttpResponseStatus.OK, contentType, out.toByteArray());
  }
}
