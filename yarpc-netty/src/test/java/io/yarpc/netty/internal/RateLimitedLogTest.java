package io.yarpc.netty.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.AbstractLogger;
import org.slf4j.helpers.MessageFormatter;

class RateLimitedLogTest {
  /** A logger that keeps the lines it is given. */
  static final class Lines extends AbstractLogger {
    private static final long serialVersionUID = 1L;
    final List<String> lines = new ArrayList<>();

    @Override
    protected String getFullyQualifiedCallerName() {
      return null;
    }

    @Override
    protected void handleNormalizedLoggingCall(
        Level level, Marker marker, String format, Object[] args, Throwable t) {
      lines.add(level + " " + MessageFormatter.basicArrayFormat(format, args));
    }

    // every level is enabled
    @Override
    public boolean isTraceEnabled() {
      return true;
    }

    @Override
    public boolean isTraceEnabled(Marker m) {
      return true;
    }

    @Override
    public boolean isDebugEnabled() {
      return true;
    }

    @Override
    public boolean isDebugEnabled(Marker m) {
      return true;
    }

    @Override
    public boolean isInfoEnabled() {
      return true;
    }

    @Override
    public boolean isInfoEnabled(Marker m) {
      return true;
    }

    @Override
    public boolean isWarnEnabled() {
      return true;
    }

    @Override
    public boolean isWarnEnabled(Marker m) {
      return true;
    }

    @Override
    public boolean isErrorEnabled() {
      return true;
    }

    @Override
    public boolean isErrorEnabled(Marker m) {
      return true;
    }
  }

  @Test
  void oneLineASecondAndTheNextCountsTheDroppedOnes() throws Exception {
    Lines lines = new Lines();
    RateLimitedLog log = new RateLimitedLog(lines);
    for (int i = 0; i < 5; i++) {
      log.info("{}: handshake {} failed", "inbound", i);
    }
    assertThat(lines.lines).containsExactly("INFO inbound: handshake 0 failed");
    Thread.sleep(
        1_100); // the interval is one second; nothing is asserted about how long anything took
    log.info("{}: handshake {} failed", "inbound", 5);
    log.info("{}: handshake {} failed", "inbound", 6);
    assertThat(lines.lines)
        .containsExactly(
            "INFO inbound: handshake 0 failed",
            "INFO inbound: handshake 5 failed (4 more like it since the last line)");
  }
}
