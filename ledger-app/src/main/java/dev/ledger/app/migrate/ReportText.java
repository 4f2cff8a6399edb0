package dev.ledger.app.migrate;

import dev.ledger.migrate.MigrationReport;
import dev.ledger.migrate.SchemaReport;
import dev.ledger.migrate.SchemaState;
import dev.ledger.migrate.SharedTablesReport;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The human summary of a {@link MigrationReport}: a table of the schemas worth a line (all of them
 * for {@code status}; for {@code migrate} and {@code plan}, those not current), the shared-tables
 * move, the errors in full, warnings, and one totals line.
 */
public final class ReportText {

  private ReportText() {}

  /**
   * Prints the summary.
   *
   * @param out where to
   * @param where the database, without credentials
   * @param report the report
   * @param allRows true to list current schemas too
   */
  public static void print(PrintWriter out, String where, MigrationReport report, boolean allRows) {
    out.println(
        report.operation().name().toLowerCase(Locale.ROOT)
            + " "
            + where
            + " (directory schema "
            + report.directorySchema()
            + ")");
    List<String[]> rows = new ArrayList<>();
    rows.add(
        new String[] {"SCHEMA", "DOMAIN", "STATE", "FROM", "TO", "APPLIED", "PENDING", "NOTE"});
    for (SchemaReport s : report.schemas()) {
      if (!allRows && s.state() == SchemaState.CURRENT && s.catalogExtras().isEmpty()) {
        continue;
      }
      rows.add(
          new String[] {
            s.schema(),
            s.domain() == null ? "(directory)" : s.domain(),
            s.state().name().toLowerCase(Locale.ROOT),
            dash(s.versionBefore()),
            dash(s.versionAfter()),
            list(s.applied()),
            list(s.pending()),
            note(s)
          });
    }
    if (rows.size() > 1) {
      table(out, rows);
    } else {
      out.println("every schema is current");
    }
    SharedTablesReport shared = report.sharedTables();
    if (shared != null) {
      long tasks = shared.domains().stream().mapToLong(SharedTablesReport.MovedDomain::tasks).sum();
      long events =
          shared.domains().stream().mapToLong(SharedTablesReport.MovedDomain::events).sum();
      out.println(
          "shared tables: "
              + (shared.moved() ? "moved " : shared.error() == null ? "would move " : "not moved: ")
              + shared.domains().size()
              + " domains ("
              + tasks
              + " tasks, "
              + events
              + " events) into their own schemas"
              + (shared.moved()
                  ? "; kept as " + shared.tasksKeptAs() + ", " + shared.eventsKeptAs()
                  : "")
              + (shared.eventsLeftBehind() > 0
                  ? "; " + shared.eventsLeftBehind() + " events of no task stay in the kept table"
                  : ""));
      if (shared.error() != null) {
        out.println("  error: " + shared.error());
      }
    }
    for (SchemaReport s : report.schemas()) {
      if (s.error() != null) {
        out.println("FAILED " + s.schema() + ": " + s.error());
      }
    }
    for (String w : report.warnings()) {
      out.println("warning: " + w);
    }
    MigrationReport.Counts c = report.counts();
    out.println(
        c.schemas()
            + " schemas: "
            + c.current()
            + " current, "
            + c.created()
            + " created, "
            + c.migrated()
            + " migrated, "
            + c.adopted()
            + " adopted, "
            + c.pending()
            + " pending, "
            + c.failed()
            + " failed | "
            + c.appliedMigrations()
            + " migrations applied, "
            + c.flywayRuns()
            + " Flyway runs, "
            + c.installs()
            + " installs, "
            + c.catalogQueries()
            + " catalog queries, "
            + c.checked()
            + " schemas checked, "
            + c.recorded()
            + " recorded | "
            + seconds(report.elapsed()));
    out.flush();
  }

  /**
   * Prints rows as a left-aligned table, columns two spaces apart.
   *
   * @param out where to
   * @param rows the header first
   */
  public static void table(PrintWriter out, List<String[]> rows) {
    int[] width = new int[rows.get(0).length];
    for (String[] r : rows) {
      for (int i = 0; i < r.length - 1; i++) {
        width[i] = Math.max(width[i], r[i].length());
      }
    }
    for (String[] r : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < r.length; i++) {
        line.append(r[i]);
        if (i < r.length - 1) {
          line.append(" ".repeat(width[i] - r[i].length() + 2));
        }
      }
      out.println(line.toString().stripTrailing());
    }
  }

  /**
   * A duration in seconds with one decimal.
   *
   * @param d the duration
   * @return e.g. {@code 1.2 s}
   */
  public static String seconds(Duration d) {
    return String.format(Locale.ROOT, "%.1f s", d.toMillis() / 1000.0);
  }

  private static String note(SchemaReport s) {
    List<String> notes = new ArrayList<>();
    if (s.adoptedShape() != null) {
      notes.add(
          "reference shape "
              + s.adoptedShape().name().toLowerCase(Locale.ROOT)
              + ", baseline "
              + s.adoptedShape().baselineVersion());
    }
    if (!s.catalogExtras().isEmpty()) {
      notes.add("extra: " + String.join("; ", s.catalogExtras()));
    }
    if (s.error() != null) {
      notes.add("see below");
    }
    switch (s.checksums()) {
      case MISMATCH -> notes.add("checksum mismatch");
      case UNKNOWN_MIGRATION -> notes.add("unknown migration");
      default -> {}
    }
    return String.join("; ", notes);
  }

  private static String dash(String v) {
    return v == null ? "-" : v;
  }

  private static String list(List<String> versions) {
    return versions.isEmpty() ? "-" : String.join(",", versions);
  }
}
