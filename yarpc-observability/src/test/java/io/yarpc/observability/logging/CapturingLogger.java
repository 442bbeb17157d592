package io.yarpc.observability.logging;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Marker;
import org.slf4j.event.KeyValuePair;
import org.slf4j.event.Level;
import org.slf4j.event.LoggingEvent;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.spi.LoggingEventAware;

/**
 * An slf4j logger that keeps what it is given, key-value pairs included (it receives fluent-API events
 * whole, as logback does), with every level from {@code threshold} up enabled.
 */
public final class CapturingLogger extends LegacyAbstractLogger implements LoggingEventAware {
  private static final long serialVersionUID = 1L;

  /** One logged line. */
  public record Line(Level level, String message, Map<String, Object> fields) {
    public Object field(String key) {
      return fields.get(key);
    }
  }

  private final Level threshold;
  private final List<Line> lines = Collections.synchronizedList(new ArrayList<>());

  public CapturingLogger(String name, Level threshold) {
    this.name = name;
    this.threshold = threshold;
  }

  /** The lines so far. */
  public List<Line> lines() {
    synchronized (lines) {
      return List.copyOf(lines);
    }
  }

  /** The lines whose {@code procedure} field is {@code procedure}. */
  public List<Line> linesFor(String procedure) {
    return lines().stream().filter(l -> procedure.equals(l.field("procedure"))).toList();
  }

  @Override
  public void log(LoggingEvent event) {
    Map<String, Object> fields = new LinkedHashMap<>();
    List<KeyValuePair> pairs = event.getKeyValuePairs();
    if (pairs != null) {
      for (KeyValuePair p : pairs) {
        fields.put(p.key, p.value);
      }
    }
    lines.add(new Line(event.getLevel(), event.getMessage(), fields));
  }

  @Override
  protected void handleNormalizedLoggingCall(
      Level level, Marker marker, String message, Object[] args, Throwable throwable) {
    lines.add(new Line(level, message, Map.of()));
  }

  @Override
  protected String getFullyQualifiedCallerName() {
    return null;
  }

  private boolean enabled(Level level) {
    return level.toInt() >= threshold.toInt();
  }

  @Override
  public boolean isTraceEnabled() {
    return enabled(Level.TRACE);
  }

  @Override
  public boolean isDebugEnabled() {
    return enabled(Level.DEBUG);
  }

  @Override
  public boolean isInfoEnabled() {
    return enabled(Level.INFO);
  }

  @Override
  public boolean isWarnEnabled() {
    return enabled(Level.WARN);
  }

  @Override
  public boolean isErrorEnabled() {
    return enabled(Level.ERROR);
  }
}
