package dev.ledger.diff;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

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
   * The first change of a report with this name, as JSON; fails when there is none.
   *
   * @param report the report
   * @param name the change's {@code name}
   * @return the change
   */
  static JsonNode change(DiffReport report, String name) {
    for (JsonNode c : json(report).get("changes")) {
      if (c.get("name").asText().equals(name)) {
        return c;
      }
    }
    throw new AssertionError("no change named " + name + " in " + json(report).get("changes"));
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

  /**
   * Runs the base's DDL, then a script, on a new schema, and reads a query's rows; the schema is
   * dropped after.
   *
   * @param dataSource the server
   * @param schema the new schema's name
   * @param baseDdl the base's DDL
   * @param script the statements to run after it, in order
   * @param query a query over the schema
   * @return each row as its values' text joined by a space ({@code null} for SQL NULL)
   * @throws SQLException when a statement fails
   */
  static List<String> applyAndRead(
      DataSource dataSource, String schema, String baseDdl, List<String> script, String query)
      throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE SCHEMA " + schema);
      try {
        s.execute("SET search_path TO " + schema);
        s.execute(baseDdl);
        for (String statement : script) {
          s.execute(statement);
        }
        List<String> rows = new ArrayList<>();
        try (ResultSet r = s.executeQuery(query)) {
          while (r.next()) {
            List<String> values = new ArrayList<>();
            for (int i = 1; i <= r.getMetaData().getColumnCount(); i++) {
              values.add(String.valueOf(r.getString(i)));
            }
            rows.add(String.join(" ", values));
          }
        }
        return rows;
      } finally {
        s.execute("RESET search_path");
        s.execute("DROP SCHEMA " + schema + " CASCADE");
      }
    }
  }
}
