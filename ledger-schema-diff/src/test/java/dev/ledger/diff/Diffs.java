package dev.ledger.diff;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Writes migration sets and runs {@link SchemaDiff} on them, for the library's tests. */
final class Diffs {

  private Diffs() {}

  /**
   * Writes SQL scripts into a new directory.
   *
   * @param dir the directory to create
   * @param namesAndScripts file name, script, file name, script, ...
   * @return the directory
   */
  static Path migrations(Path dir, String... namesAndScripts) {
    try {
      Files.createDirectories(dir);
      for (int i = 0; i < namesAndScripts.length; i += 2) {
        Files.writeString(dir.resolve(namesAndScripts[i]), namesAndScripts[i + 1]);
      }
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * A request with no placeholders, the plain plan, and a rule that never fails.
   *
   * @param base the base set
   * @param head the head set
   * @param jdbcUrl the server, or null for an embedded one
   * @return the request
   */
  static SchemaDiff.Request request(Object base, Object head, String jdbcUrl) {
    return request(base, head, jdbcUrl, FailOn.NEVER, false);
  }

  /**
   * A request with no placeholders.
   *
   * @param base the base set
   * @param head the head set
   * @param jdbcUrl the server, or null for an embedded one
   * @param failOn the rule
   * @param online whether to plan online
   * @return the request
   */
  static SchemaDiff.Request request(
      Object base, Object head, String jdbcUrl, FailOn failOn, boolean online) {
    return new SchemaDiff.Request(
        base.toString(), head.toString(), Map.of(), Map.of(), Map.of(), jdbcUrl, failOn, online);
  }

  /**
   * The report's JSON document, parsed.
   *
   * @param report the report
   * @return its {@link DiffReport#json()}
   */
  static JsonNode json(DiffReport report) {
    try {
      return new ObjectMapper().readTree(report.json());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The changes of a report as {@code table kind name action class} lines ({@code -} for no table).
   *
   * @param report the report
   * @return one line per change, in the report's order
   */
  static List<String> changeLines(DiffReport report) {
    List<String> lines = new ArrayList<>();
    for (JsonNode c : json(report).get("changes")) {
      lines.add(
          c.get("table").asText("-")
              + " "
              + c.get("kind").asText()
              + " "
              + c.get("name").asText()
              + " "
              + c.get("action").asText()
              + " "
              + c.get("class").asText());
    }
    return lines;
  }

  /**
   * The one change of a report, as JSON; fails unless there is exactly one.
   *
   * @param report the report
   * @return the change
   */
  static JsonNode onlyChange(DiffReport report) {
    JsonNode changes = json(report).get("changes");
    if (changes.size() != 1) {
      throw new AssertionError("expected one change, got " + changes);
    }
    return changes.get(0);
  }
}
