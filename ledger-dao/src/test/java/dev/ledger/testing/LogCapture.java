package dev.ledger.testing;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.filter.ThresholdFilter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.AppenderBase;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * Captures every log line of the JVM while started: root at INFO and above as configured, plus
 * Flyway's INFO and HikariCP's and the ledger's DEBUG lines (captured only: the console's appenders
 * get an INFO threshold meanwhile), each with its exception's whole stack trace text. For tests
 * that a secret never reaches a log.
 *
 * <pre>{@code
 * LogCapture logs = LogCapture.begin();
 * ... assertThat(logs.text()).doesNotContain(password);
 * logs.stop();
 * }</pre>
 */
public final class LogCapture extends AppenderBase<ILoggingEvent> {

  private static final String[] LOGGERS = {"com.zaxxer.hikari", "dev.ledger", "org.flywaydb"};
  private static final Level[] LEVELS = {Level.DEBUG, Level.DEBUG, Level.INFO};

  private final List<String> lines = new ArrayList<>();
  private final List<Level> before = new ArrayList<>();
  private final List<Appender<ILoggingEvent>> filters = new ArrayList<>();

  private LogCapture() {}

  /**
   * Starts capturing.
   *
   * @return the capture, started; {@link #stop()} it
   */
  public static LogCapture begin() {
    LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
    LogCapture capture = new LogCapture();
    capture.setContext(ctx);
    capture.setName("log-capture");
    capture.start();
    Logger root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.iteratorForAppenders()
        .forEachRemaining(
            a -> {
              ThresholdFilter f = new ThresholdFilter();
              f.setLevel("INFO");
              f.start();
              a.addFilter(f);
              capture.filters.add(a);
            });
    root.addAppender(capture);
    for (int i = 0; i < LOGGERS.length; i++) {
      Logger l = ctx.getLogger(LOGGERS[i]);
      capture.before.add(l.getLevel());
      l.setLevel(LEVELS[i]);
    }
    return capture;
  }

  @Override
  protected synchronized void append(ILoggingEvent e) {
    {
      StringBuilder b =
          new StringBuilder(e.getLoggerName()).append(' ').append(e.getFormattedMessage());
      if (e.getThrowableProxy() != null) {
        b.append('\n').append(ThrowableProxyUtil.asString(e.getThrowableProxy()));
      }
      lines.add(b.toString());
    }
  }

  /**
   * Everything captured so far.
   *
   * @return the lines, one per event, with stack traces
   */
  public synchronized String text() {
    return String.join("\n", lines);
  }

  /**
   * How many events were captured.
   *
   * @return the count
   */
  public synchronized int size() {
    return lines.size();
  }

  /** Stops capturing and restores the levels. */
  @Override
  public void stop() {
    LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
    ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).detachAppender(this);
    for (Appender<ILoggingEvent> a : filters) {
      a.clearAllFilters();
    }
    for (int i = 0; i < before.size(); i++) {
      ctx.getLogger(LOGGERS[i]).setLevel(before.get(i));
    }
    super.stop();
  }
}
