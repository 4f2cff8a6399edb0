package dev.ledger.diff.review;

import dev.ledger.diff.Finding;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Runs the pull request's new statements one at a time on a scratch schema that holds the base's
 * migrations, each in a transaction of its own, and measures each before it commits: the locks its
 * backend holds ({@code pg_locks}), the {@code relfilenode} and sequential scan count ({@code
 * pg_stat_get_xact_numscans}) of every relation, and every object by OID ({@link CatalogSnapshot},
 * read before and after it). A statement PostgreSQL refuses inside a transaction block (SQL state
 * {@code 25001}) is rolled back and run on its own. Placeholders are filled in as Flyway does; the
 * session is reset ({@code RESET ALL}, the search path on the scratch schema) before each script.
 *
 * <p>Costs a scan count query before each statement, a catalog query after it and one {@code
 * pg_locks} read; the base's migrations themselves are applied by the caller. Not thread-safe: one
 * connection.
 */
public final class StatementRunner {

  private static final String LOCKS =
      "SELECT relation::bigint, mode FROM pg_locks"
          + " WHERE pid = pg_backend_pid() AND locktype = 'relation' AND granted";

  private StatementRunner() {}

  /**
   * Runs and measures the head's new scripts.
   *
   * @param c a connection whose session may be changed; left in auto-commit
   * @param schema the scratch schema holding the base's migrations (Flyway's default schema)
   * @param otherSchemas the schemas that existed before the base's migrations ran
   * @param placeholders the head's Flyway placeholders, besides Flyway's own
   * @param historyTable Flyway's history table, for {@code ${flyway:table}}
   * @param scripts the new scripts in the order Flyway runs them ({@link MigrationHistory#added()})
   * @return the review: {@link Review.Status#MEASURED}, or {@link Review.Status#FAILED} naming the
   *     statement that failed
   * @throws SQLException when the catalog cannot be read
   */
  public static Review run(
      Connection c,
      String schema,
      Collection<String> otherSchemas,
      Map<String, String> placeholders,
      String historyTable,
      List<MigrationHistory.Script> scripts)
      throws SQLException {
    Naming naming = new Naming(schema);
    c.setAutoCommit(true);
    CatalogSnapshot base = CatalogSnapshot.read(c, otherSchemas);
    CatalogSnapshot current = base;
    List<Measured> measured = new ArrayList<>();
    for (MigrationHistory.Script script : scripts) {
      String text;
      try {
        text = Files.readString(script.file(), StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      Map<String, String> values = new HashMap<>(placeholders);
      values.put("flyway:defaultSchema", schema);
      values.put("flyway:table", historyTable);
      values.put("flyway:filename", script.name());
      try (Statement s = c.createStatement()) {
        s.execute("RESET ALL");
        s.execute("SET search_path = " + quote(schema));
      }
      for (ScriptStatements.Piece piece : ScriptStatements.split(text)) {
        String sql = ScriptStatements.fill(piece.sql(), values);
        try {
          Step step = measure(c, script.name(), piece, sql, otherSchemas, current, naming);
          measured.add(step.measured());
          current = step.after();
        } catch (SQLException e) {
          return new Review(
              Review.Status.FAILED,
              "`"
                  + script.name()
                  + "` line "
                  + piece.line()
                  + " failed when run on its own on top of the base ("
                  + naming.clean(oneLine(e.getMessage()))
                  + "): its statements are not measured, and the changes are the catalog diff",
              List.of(),
              List.of(),
              List.of());
        }
      }
    }
    CatalogSnapshot end = current;
    List<ReviewedStatement> statements = new ArrayList<>();
    for (Measured m : measured) {
      statements.add(reviewed(m, base, end, naming));
    }
    int n = statements.size();
    return new Review(
        Review.Status.MEASURED,
        "the head appends "
            + scripts.size()
            + (scripts.size() == 1 ? " migration" : " migrations")
            + " to the base's; "
            + (n == 1 ? "its statement was" : "their " + n + " statements were")
            + " run one at a time on top of the base and measured",
        statements,
        List.of(),
        RenamePlan.between(base, end, naming));
  }

  /** One statement measured, and the catalog it left (the next statement's before). */
  private record Step(Measured measured, CatalogSnapshot after) {}

  private static Step measure(
      Connection c,
      String migration,
      ScriptStatements.Piece piece,
      String sql,
      Collection<String> otherSchemas,
      CatalogSnapshot before,
      Naming naming)
      throws SQLException {
    c.setAutoCommit(false);
    boolean transactional = true;
    Map<Long, String> locks = new HashMap<>();
    List<ReviewedStatement.Lock> documented = List.of();
    Map<Long, Long> scansBefore;
    CatalogSnapshot after;
    try {
      // The objects are as the previous statement left them; only the scan counts must be read
      // in this statement's own transaction.
      scansBefore = CatalogSnapshot.scans(c, otherSchemas);
      try (Statement s = c.createStatement()) {
        s.execute(sql);
      } catch (SQLException e) {
        c.rollback();
        if (!"25001".equals(e.getSQLState())) {
          throw e;
        }
        transactional = false;
      }
      if (transactional) {
        try (Statement s = c.createStatement();
            ResultSet r = s.executeQuery(LOCKS)) {
          while (r.next()) {
            long oid = r.getLong(1);
            if (before.relation(oid) != null) {
              locks.merge(oid, r.getString(2), StatementRunner::stronger);
            }
          }
        }
        after = CatalogSnapshot.read(c, otherSchemas);
        c.commit();
      } else {
        c.setAutoCommit(true);
        // Its own pg_locks cannot be read inside its transaction: report the locks its kind takes,
        // as documented (DocumentedLocks), marked as not measured.
        documented = documentedLocks(c, piece.sql(), sql, before, naming);
        try (Statement s = c.createStatement()) {
          s.execute(sql);
        }
        after = CatalogSnapshot.read(c, otherSchemas);
      }
    } catch (SQLException e) {
      if (!c.getAutoCommit()) {
        c.rollback();
      }
      throw e;
    } finally {
      c.setAutoCommit(true);
    }
    List<CatalogSnapshot.Entry> rewrites = new ArrayList<>();
    List<CatalogSnapshot.Entry> scans = new ArrayList<>();
    List<CatalogSnapshot.Entry[]> renames = new ArrayList<>();
    List<CatalogSnapshot.Entry> drops = new ArrayList<>();
    Map<Long, CatalogSnapshot.Entry> tables = new HashMap<>();
    for (CatalogSnapshot.Entry was : before.entries().values()) {
      CatalogSnapshot.Entry now = after.get(was.key());
      if (was.category() == 'r') {
        tables.put(was.oid(), was);
      }
      if (now == null) {
        if (was.category() == 'r' || was.category() == 'a' || was.category() == 'f') {
          drops.add(was);
        }
        continue;
      }
      if (!now.name().equals(was.name()) || !now.schema().equals(was.schema())) {
        renames.add(new CatalogSnapshot.Entry[] {was, now});
      }
      if (was.category() == 'r') {
        if ((was.kind().equals("r") || was.kind().equals("m"))
            && now.filenode() != was.filenode()) {
          rewrites.add(now);
        }
        if (transactional && now.scans() > scansBefore.getOrDefault(was.oid(), now.scans())) {
          scans.add(now);
        }
      }
    }
    return new Step(
        new Measured(
            migration,
            piece.line(),
            piece.sql(),
            transactional,
            locks,
            documented,
            rewrites,
            scans,
            renames,
            drops,
            tables),
        after);
  }

  /**
   * The documented locks of a statement about to run outside a transaction; a {@code DROP INDEX
   * CONCURRENTLY}'s table is looked up before the index is gone. Relations are named as the report
   * names them (the default schema left out).
   */
  private static List<ReviewedStatement.Lock> documentedLocks(
      Connection c, String written, String filled, CatalogSnapshot before, Naming naming)
      throws SQLException {
    String indexTable = null;
    String index = DocumentedLocks.droppedIndex(filled);
    if (index != null) {
      try (PreparedStatement ps =
          c.prepareStatement(
              "SELECT indrelid::bigint FROM pg_index WHERE indexrelid = to_regclass(?)")) {
        ps.setString(1, index);
        try (ResultSet r = ps.executeQuery()) {
          if (r.next() && before.relation(r.getLong(1)) != null) {
            indexTable = naming.display(before.relation(r.getLong(1)));
          }
        }
      }
    }
    List<ReviewedStatement.Lock> locks = new ArrayList<>();
    for (ReviewedStatement.Lock l : DocumentedLocks.of(written, indexTable)) {
      String relation = l.relation();
      String prefix = Naming.DEFAULT_SCHEMA + ".";
      locks.add(
          new ReviewedStatement.Lock(
              relation.startsWith(prefix) ? relation.substring(prefix.length()) : relation,
              l.mode()));
    }
    return locks;
  }

  private static ReviewedStatement reviewed(
      Measured m, CatalogSnapshot base, CatalogSnapshot end, Naming naming) {
    Map<String, String> byName = new TreeMap<>();
    m.locks().forEach((oid, mode) -> byName.put(naming.display(m.tables().get(oid)), mode));
    List<ReviewedStatement.Lock> locks = new ArrayList<>();
    byName.forEach((rel, mode) -> locks.add(new ReviewedStatement.Lock(rel, mode)));
    List<ReviewedStatement.Rename> renames = new ArrayList<>();
    for (CatalogSnapshot.Entry[] pair : m.renames()) {
      ReviewedStatement.Rename r = rename(pair[0], pair[1], m.tables(), naming);
      if (r != null) {
        renames.add(r);
      }
    }
    List<Finding> findings = ReviewRules.of(m, base, end, naming);
    return new ReviewedStatement(
        m.migration(),
        m.line(),
        m.sql(),
        m.transactional(),
        locks,
        m.documentedLocks(),
        m.rewrites().stream().map(naming::display).toList(),
        m.scans().stream().map(naming::display).toList(),
        renames,
        findings);
  }

  private static ReviewedStatement.Rename rename(
      CatalogSnapshot.Entry was,
      CatalogSnapshot.Entry now,
      Map<Long, CatalogSnapshot.Entry> tables,
      Naming naming) {
    if (was.inherited() > 0) {
      return null;
    }
    return switch (was.category()) {
      case 'r' -> {
        String kind = RenamePlan.relationKind(was.kind());
        yield kind == null
            ? null
            : new ReviewedStatement.Rename(
                kind.equals("partitioned table") ? "table" : kind,
                naming.display(was),
                naming.display(now));
      }
      case 'a', 'c', 'g' -> {
        CatalogSnapshot.Entry t = tables.get(was.owner());
        String kind =
            was.category() == 'a' ? "column" : was.category() == 'c' ? "constraint" : "trigger";
        String table = t == null ? "" : naming.display(t) + ".";
        yield new ReviewedStatement.Rename(kind, table + was.name(), table + now.name());
      }
      case 'f' -> {
        String args = "(" + naming.clean(was.args()) + ")";
        yield new ReviewedStatement.Rename(
            was.kind().equals("p") ? "procedure" : "function",
            naming.display(was) + args,
            naming.display(now) + args);
      }
      case 'y' ->
          new ReviewedStatement.Rename(
              was.kind().equals("e") ? "enum" : was.kind().equals("d") ? "domain" : "type",
              naming.display(was),
              naming.display(now));
      default -> null;
    };
  }

  private static String stronger(String a, String b) {
    return ReviewRules.MODES.indexOf(a) >= ReviewRules.MODES.indexOf(b) ? a : b;
  }

  private static String quote(String identifier) {
    return '"' + identifier.replace("\"", "\"\"") + '"';
  }

  private static String oneLine(String message) {
    return message == null ? "unknown error" : message.replaceAll("\\s*\\R\\s*", " ").strip();
  }
}
