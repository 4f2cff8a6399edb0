package dev.ledger.app.fleet;

import java.io.PrintWriter;
import java.io.StringWriter;

/** Text printed into memory first, so it can be redacted before it reaches stdout. */
final class StringBuilderWriter {

  private final StringWriter buffer = new StringWriter();
  private final PrintWriter writer = new PrintWriter(buffer);

  PrintWriter writer() {
    return writer;
  }

  @Override
  public String toString() {
    writer.flush();
    return buffer.toString();
  }
}
