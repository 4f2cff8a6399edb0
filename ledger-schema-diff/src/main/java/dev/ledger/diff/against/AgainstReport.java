package dev.ledger.diff.against;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What the data checks against a real database found ({@link AgainstDatabase}), and how each of the
 * diff's formats shows it: added to the report's own text, so the report itself is unchanged.
 *
 * @param database the database, as shown: host, port and database, never a parameter or password
 * @param timeout each query's {@code statement_timeout}
 * @param limit how many rows a count goes up to
 * @param unreachable why the database could not be used at all (every check then not run), or null
 * @param checks the row counts, in the diff's order
 * @param sizes the tables changes lock, with their sizes, in the diff's order
 */
public record AgainstReport(
    String database,
    Duration timeout,
    long limit,
    String unreachable,
    List<DataCheck> checks,
    List<TableSize> sizes) {

  /** Copies the lists. */
  public AgainstReport {
    checks = List.copyOf(checks);
    sizes = List.copyOf(sizes);
  }

  /**
   * Whether a check found rows a new constraint rejects: the SQL fails on that database.
   *
   * @return true when {@code schema-diff} exits with 3
   */
  public boolean rejects() {
    return checks.stream().anyMatch(c -> c.kind().rejects() && c.status() == DataCheck.Status.ROWS);
  }

  /**
   * Whether a check or a size could not be read because the database was unreachable or a query
   * timed out or failed (not: a check this tool does not count, such as an exclusion constraint).
   *
   * @return true when {@code schema-diff} reports an error (exit 2) after printing the report
   */
  public boolean incomplete() {
    return unreachable != null
        || checks.stream().anyMatch(c -> c.status() == DataCheck.Status.NOT_RUN)
        || sizes.stream().anyMatch(s -> s.size() == null);
  }

  /**
   * One line: what the checks found, e.g. {@code Against `db:5432/app`: 1 check finds rows the SQL
   * fails on, 2 clean.}
   *
   * @return the sentence, ending with a period
   */
  public String summary() {
    if (unreachable != null) {
      return "Data checks against `" + database + "` not run: " + unreachable + ".";
    }
    if (checks.isEmpty() && sizes.isEmpty()) {
      return "Against `"
          + database
          + "`: nothing to check (no change fails on rows, loses rows or"
          + " locks an existing table).";
    }
    List<String> parts = new ArrayList<>();
    long rejecting = count(true, DataCheck.Status.ROWS);
    long holding = count(false, DataCheck.Status.ROWS);
    long notRun = checks.stream().filter(c -> c.status() == DataCheck.Status.NOT_RUN).count();
    long notCounted =
        checks.stream().filter(c -> c.status() == DataCheck.Status.NOT_COUNTED).count();
    long clean = checks.stream().filter(c -> c.status() == DataCheck.Status.CLEAN).count();
    if (rejecting > 0) {
      parts.add(
          rejecting
              + (rejecting == 1 ? " check finds" : " checks find")
              + " rows the SQL fails on");
    }
    if (holding > 0) {
      parts.add(
          holding + (holding == 1 ? " dropped object holds" : " dropped objects hold") + " data");
    }
    if (notRun > 0) {
      parts.add(notRun + " not run");
    }
    if (notCounted > 0) {
      parts.add(notCounted + " not counted");
    }
    if (clean > 0) {
      parts.add(clean + " clean");
    }
    if (!sizes.isEmpty()) {
      parts.add(
          sizes.size()
              + (sizes.size() == 1 ? " locking change" : " locking changes")
              + " with its table's size");
    }
    return "Against `" + database + "`: " + String.join(", ", parts) + ".";
  }

  /**
   * The report's Markdown with the checks added: the summary after the verdict, a section before
   * the SQL (or at the end).
   *
   * @param reportMarkdown the diff's Markdown ({@code DiffReport.markdown()})
   * @return the Markdown with the checks
   */
  public String markdown(String reportMarkdown) {
    int verdictEnd = reportMarkdown.indexOf("\n\n");
    String summary =
        (rejects() ? "> **" + summary() + "** Do not run this SQL on it as it is." : summary())
            + "\n\n";
    String md =
        verdictEnd < 0
            ? reportMarkdown + "\n" + summary
            : reportMarkdown.substring(0, verdictEnd + 2)
                + summary
                + reportMarkdown.substring(verdictEnd + 2);
    String section = section();
    int sql = md.indexOf("\n### SQL from base to head");
    if (sql >= 0) {
      return md.substring(0, sql) + "\n" + section + md.substring(sql);
    }
    int marker = md.indexOf("\n<!-- ledger-schema-diff -->");
    return marker >= 0
        ? md.substring(0, marker) + "\n" + section + md.substring(marker)
        : md + "\n" + section;
  }

  /**
   * The report's SQL with the checks as comments after its header (the verdict and the base and
   * head lines).
   *
   * @param reportSql the diff's SQL ({@code DiffReport.sql()})
   * @return the SQL with the checks
   */
  public String sql(String reportSql) {
    StringBuilder lines = new StringBuilder("-- ").append(summary()).append('\n');
    for (DataCheck c : checks) {
      lines
          .append("-- against, ")
          .append(c.kind().label())
          .append(' ')
          .append(plain(c.object()))
          .append(" on ")
          .append(c.table())
          .append(": ")
          .append(plain(result(c)))
          .append('\n');
    }
    for (TableSize s : sizes) {
      lines
          .append("-- against: ")
          .append(plain(s.sentence()))
          .append(" (")
          .append(plain(s.change()))
          .append(")\n");
    }
    int at = 0;
    for (int i = 0; i < 2 && at >= 0; i++) {
      at = reportSql.indexOf('\n', at) + 1;
      if (at == 0) {
        return reportSql + lines;
      }
    }
    return reportSql.substring(0, at) + lines + reportSql.substring(at);
  }

  /**
   * The report's JSON with an {@code against} object: {@code database}, {@code timeoutMs}, {@code
   * limit}, {@code summary}, {@code unreachable}, {@code checks} (each with {@code kind}, {@code
   * table}, {@code object}, {@code status}, {@code rows}, {@code more}, {@code note}) and {@code
   * tables} (each with {@code table}, {@code verb}, {@code lock}, {@code change}, {@code size},
   * {@code rows}, {@code note}, {@code sentence}).
   *
   * @param reportJson the diff's JSON ({@code DiffReport.json()}), one object
   * @return the JSON on one line with the checks, ending with a line break
   */
  public String json(String reportJson) {
    ObjectMapper mapper = new ObjectMapper();
    try {
      ObjectNode root = (ObjectNode) mapper.readTree(reportJson);
      ObjectNode node = root.putObject("against");
      node.put("database", database);
      node.put("timeoutMs", timeout.toMillis());
      node.put("limit", limit);
      node.put("summary", summary());
      node.put("unreachable", unreachable);
      ArrayNode list = node.putArray("checks");
      for (DataCheck c : checks) {
        ObjectNode n = list.addObject();
        n.put("kind", c.kind().label());
        n.put("table", c.table());
        n.put("object", c.object());
        n.put("status", c.status().label());
        n.put("rows", c.rows());
        n.put("more", c.more());
        n.put("note", c.note());
      }
      ArrayNode tables = node.putArray("tables");
      for (TableSize s : sizes) {
        ObjectNode n = tables.addObject();
        n.put("table", s.table());
        n.put("verb", s.verb());
        n.put("lock", s.lock());
        n.put("change", s.change());
        n.put("size", s.size());
        n.put("rows", s.rows());
        n.put("note", s.note());
        n.put("sentence", s.sentence());
      }
      return mapper.writeValueAsString(root) + "\n";
    } catch (JsonProcessingException | ClassCastException e) {
      throw new IllegalArgumentException("not the diff's JSON report", e);
    }
  }

  /**
   * A JDBC URL as reports show it: host, port and database only, e.g. {@code db:5432/app}; no
   * parameter (and so no password) is kept.
   *
   * @param jdbcUrl a PostgreSQL JDBC URL
   * @return the part between {@code //} and {@code ?}, without any {@code user:password@}
   */
  static String displayName(String jdbcUrl) {
    String rest = jdbcUrl.substring("jdbc:postgresql:".length());
    int query = rest.indexOf('?');
    if (query >= 0) {
      rest = rest.substring(0, query);
    }
    if (rest.startsWith("//")) {
      rest = rest.substring(2);
    }
    int at = rest.lastIndexOf('@');
    if (at >= 0) {
      rest = rest.substring(at + 1);
    }
    return rest.isEmpty() ? "localhost" : rest;
  }

  /**
   * A duration as reports show it: {@code 30 s}, or {@code 500 ms} under a second.
   *
   * @param d the duration
   * @return the text
   */
  static String duration(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
  }

  private String section() {
    StringBuilder md =
        new StringBuilder("### Data checks against `").append(database).append("`\n\n");
    md.append(
            "Read-only: each query in a `READ ONLY` transaction, rolled back, bounded by `statement_timeout` ")
        .append(duration(timeout))
        .append("; counts stop after ")
        .append(String.format(Locale.ROOT, "%,d", limit))
        .append(" rows.\n");
    if (unreachable != null) {
      md.append("\n**Not run**: ")
          .append(unreachable)
          .append(". No data-dependent verdict was checked.\n");
    }
    if (!checks.isEmpty()) {
      md.append("\n| check | table | object | rows | result |\n| --- | --- | --- | --- | --- |\n");
      for (DataCheck c : checks) {
        md.append("| ")
            .append(c.kind().label())
            .append(" | `")
            .append(c.table())
            .append("` | ")
            .append(cell(c.object()))
            .append(" | ")
            .append(c.count())
            .append(" | ")
            .append(cell(result(c)))
            .append(" |\n");
      }
    }
    if (!sizes.isEmpty()) {
      md.append('\n');
      for (TableSize s : sizes) {
        md.append("- ")
            .append(cell(s.sentence()))
            .append(": ")
            .append(cell(s.change()))
            .append('\n');
      }
    }
    return md.toString();
  }

  private static String result(DataCheck c) {
    return switch (c.status()) {
      case CLEAN -> c.kind().rejects() ? "passes: no row rejected" : "empty: no data lost";
      case ROWS ->
          c.kind().rejects()
              ? "**fails**: " + c.count() + (c.rows() == 1 ? " row" : " rows") + " rejected"
              : "**loses data**: "
                  + c.count()
                  + (c.rows() == 1 ? " row holds" : " rows hold")
                  + " data";
      case NOT_RUN -> "**not run**: " + c.note();
      case NOT_COUNTED -> "not counted: " + c.note();
    };
  }

  private long count(boolean rejecting, DataCheck.Status status) {
    return checks.stream()
        .filter(c -> c.kind().rejects() == rejecting && c.status() == status)
        .count();
  }

  private static String cell(String text) {
    return text.replace("\n", " ").replace("|", "\\|");
  }

  private static String plain(String text) {
    return text.replace("\n", " ").replace("**", "").replace("`", "");
  }
}
