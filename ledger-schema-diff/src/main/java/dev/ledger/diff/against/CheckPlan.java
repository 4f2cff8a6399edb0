package dev.ledger.diff.against;

import dev.ledger.diff.Change;
import dev.ledger.diff.Change.Action;
import dev.ledger.diff.Change.Kind;
import dev.ledger.diff.SchemaCatalog;
import dev.ledger.diff.SchemaCatalog.Column;
import dev.ledger.diff.SchemaCatalog.Constraint;
import dev.ledger.diff.SchemaCatalog.ConstraintKind;
import dev.ledger.diff.SchemaCatalog.Index;
import dev.ledger.diff.SchemaCatalog.Table;
import dev.ledger.diff.SchemaDiff;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The queries of the data checks, derived from a diff and its two catalogs: for each change that
 * can fail on rows or lose them, one bounded count; for each table a change locks, its size. Every
 * identifier comes from the scratch catalogs (names as PostgreSQL's {@code quote_ident} writes
 * them, or quoted here), every expression from {@code pg_get_constraintdef}; nothing is taken from
 * the migrations' text.
 *
 * @param counts the counts to run, in the diff's order
 * @param sizes the tables whose size to read, with the change that locks each, in the diff's order
 */
record CheckPlan(List<Count> counts, List<TableSize> sizes) {

  /**
   * One count: {@code SELECT count(*) FROM (SELECT 1 FROM ... LIMIT limit + 1)}.
   *
   * @param kind what it checks
   * @param table the table's normalised name
   * @param object what it is about
   * @param sql the query, returning one row with one {@code bigint}; or null when it cannot be run,
   *     with {@code note} saying why
   * @param note why it is not run, or null
   */
  record Count(DataCheck.Kind kind, String table, String object, String sql, String note) {}

  private static final Pattern REFERENCES = Pattern.compile("\\) REFERENCES (.+?)\\((.+?)\\)( |$)");

  /**
   * Plans the checks of a diff.
   *
   * @param compared the diff and its catalogs
   * @param limit how many rows a count goes up to before it stops, at least 1
   * @return the plan
   */
  static CheckPlan of(SchemaDiff.Compared compared, long limit) {
    SchemaCatalog base = compared.base();
    SchemaCatalog head = compared.head();
    List<Count> counts = new ArrayList<>();
    Map<String, TableSize> sizes = new LinkedHashMap<>();
    for (Change c : compared.report().diff().changes()) {
      Table before = c.table() == null ? null : base.tables().get(c.table());
      Table after = c.table() == null ? null : head.tables().get(c.table());
      if (before == null) {
        continue; // a new table holds no rows; a change of no table checks none
      }
      if (c.lock() != null && after != null) {
        String change = c.kind().label() + " `" + c.name() + "` " + c.action().label();
        sizes.putIfAbsent(
            c.table() + "\n" + change,
            new TableSize(c.table(), verb(c), c.lock(), change, null, null, null));
      }
      Count count = count(c, before, after, head, limit);
      if (count != null) {
        counts.add(count);
      }
    }
    return new CheckPlan(List.copyOf(counts), List.copyOf(sizes.values()));
  }

  private static Count count(Change c, Table before, Table after, SchemaCatalog head, long limit) {
    String from = " FROM " + before.sqlName() + " AS t";
    if (c.kind() == Kind.TABLE && c.action() == Action.DROPPED && !c.name().equals(c.table())) {
      return null; // a partition of a table made again: its rows are copied, not lost
    }
    if (c.kind() == Kind.TABLE && c.action() == Action.DROPPED) {
      return new Count(
          DataCheck.Kind.DROPPED_TABLE,
          c.table(),
          "table `" + c.table() + "`",
          bounded("SELECT 1" + from, limit),
          null);
    }
    if (after == null) {
      return null; // the table's own drop counts its rows
    }
    if (c.kind() == Kind.COLUMN) {
      Column old = before.column(c.name()).orElse(null);
      Column now = after.column(c.name()).orElse(null);
      String object = "column `" + c.name() + "`";
      if (c.action() == Action.DROPPED && old != null && !old.inherited()) {
        return new Count(
            DataCheck.Kind.DROPPED_COLUMN,
            c.table(),
            object,
            bounded("SELECT 1" + from + " WHERE t." + old.sqlName() + " IS NOT NULL", limit),
            null);
      }
      if (now == null || !now.notNull() || now.inherited()) {
        return null;
      }
      if (old != null && !old.notNull()) {
        return new Count(
            DataCheck.Kind.NOT_NULL,
            c.table(),
            object,
            bounded("SELECT 1" + from + " WHERE t." + old.sqlName() + " IS NULL", limit),
            null);
      }
      if (old == null
          && now.defaultExpression() == null
          && now.identity() == null
          && now.generatedExpression() == null) {
        // A NOT NULL column without a default: every existing row holds NULL in it.
        return new Count(
            DataCheck.Kind.NOT_NULL, c.table(), object, bounded("SELECT 1" + from, limit), null);
      }
      return null;
    }
    if (c.kind() == Kind.CONSTRAINT && c.action() != Action.DROPPED) {
      Constraint k = after.constraints().get(c.name());
      if (k == null || k.inherited() || !k.validated()) {
        return null; // NOT VALID: the rows already there are not checked
      }
      String object = "constraint `" + c.name() + "`";
      String missing = missingColumns(before, k.columns());
      return switch (k.kind()) {
        case CHECK -> {
          if (missing != null) {
            yield notRun(DataCheck.Kind.CHECK, c, object, missing);
          }
          String expression = checkExpression(k.definition());
          yield expression == null
              ? notRun(DataCheck.Kind.CHECK, c, object, "its expression could not be read")
              : new Count(
                  DataCheck.Kind.CHECK,
                  c.table(),
                  object,
                  bounded("SELECT 1" + from + " WHERE NOT (" + expression + ")", limit),
                  null);
        }
        case PRIMARY_KEY, UNIQUE ->
            missing != null
                ? notRun(DataCheck.Kind.UNIQUE, c, object, missing)
                : new Count(
                    DataCheck.Kind.UNIQUE,
                    c.table(),
                    object,
                    unique(
                        before,
                        k.columns(),
                        k.kind() == ConstraintKind.PRIMARY_KEY,
                        k.definition().contains("NULLS NOT DISTINCT"),
                        limit),
                    null);
        case FOREIGN_KEY ->
            missing != null
                ? notRun(DataCheck.Kind.FOREIGN_KEY, c, object, missing)
                : foreignKey(c, object, before, k, head, limit);
        case EXCLUSION ->
            notRun(DataCheck.Kind.UNIQUE, c, object, "an exclusion constraint is not counted");
      };
    }
    if (c.kind() == Kind.INDEX && c.action() != Action.DROPPED) {
      Index index = after.indexes().get(c.name());
      if (index == null || !index.unique() || index.inherited()) {
        return null;
      }
      String object = "index `" + c.name() + "`";
      if (index.partial() || index.keyColumns().isEmpty()) {
        return notRun(
            DataCheck.Kind.UNIQUE, c, object, "a partial or expression index is not counted");
      }
      String missing = missingColumns(before, index.keyColumns());
      return missing != null
          ? notRun(DataCheck.Kind.UNIQUE, c, object, missing)
          : new Count(
              DataCheck.Kind.UNIQUE,
              c.table(),
              object,
              unique(
                  before,
                  index.keyColumns(),
                  false,
                  index.definition().contains("NULLS NOT DISTINCT"),
                  limit),
              null);
    }
    return null;
  }

  private static Count foreignKey(
      Change c, String object, Table before, Constraint k, SchemaCatalog head, long limit) {
    List<String> columns = k.columns().stream().map(n -> quote(before, n)).toList();
    String notNull =
        columns.stream().map(n -> "t." + n + " IS NOT NULL").collect(Collectors.joining(" AND "));
    Matcher m = REFERENCES.matcher(k.definition());
    Table parent = head.tables().get(k.referencedTable());
    if (!m.find() || parent == null) {
      return notRun(DataCheck.Kind.FOREIGN_KEY, c, object, "its referenced key could not be read");
    }
    String[] referenced = m.group(2).split(", ");
    if (referenced.length != columns.size()) {
      return notRun(DataCheck.Kind.FOREIGN_KEY, c, object, "its referenced key could not be read");
    }
    StringBuilder match = new StringBuilder();
    for (int i = 0; i < referenced.length; i++) {
      match
          .append(i == 0 ? "" : " AND ")
          .append("p.")
          .append(referenced[i])
          .append(" = t.")
          .append(columns.get(i));
    }
    // The referenced table's name as the head writes it; when the base lacks it (new in this
    // diff), it is empty when the key is added, and every non-null key is rejected.
    return new Count(
        DataCheck.Kind.FOREIGN_KEY,
        c.table(),
        object,
        bounded(
            "SELECT 1 FROM "
                + before.sqlName()
                + " AS t WHERE "
                + notNull
                + " AND NOT EXISTS (SELECT 1 FROM "
                + parent.sqlName()
                + " AS p WHERE "
                + match
                + ")",
            limit),
        null);
  }

  /** Rows beyond the first of each key value (and, for a primary key, rows with a NULL key). */
  private static String unique(
      Table t, List<String> names, boolean primary, boolean nullsNotDistinct, long limit) {
    List<String> columns = names.stream().map(n -> "t." + quote(t, n)).toList();
    String key = String.join(", ", columns);
    String anyNull = columns.stream().map(n -> n + " IS NULL").collect(Collectors.joining(" OR "));
    String inner =
        "SELECT ("
            + anyNull
            + ") AS has_null, row_number() OVER (PARTITION BY "
            + key
            + ") AS n FROM "
            + t.sqlName()
            + " AS t";
    String rejected =
        primary ? "has_null OR n > 1" : nullsNotDistinct ? "n > 1" : "NOT has_null AND n > 1";
    return bounded("SELECT 1 FROM (" + inner + ") AS k WHERE " + rejected, limit);
  }

  private static String bounded(String rows, long limit) {
    return "SELECT count(*) FROM (" + rows + " LIMIT " + (limit + 1) + ") AS bounded";
  }

  private static Count notRun(DataCheck.Kind kind, Change c, String object, String why) {
    return new Count(kind, c.table(), object, null, why);
  }

  /** Why a check cannot run on the base's table: a column only the head has; or null. */
  private static String missingColumns(Table before, List<String> columns) {
    List<String> missing = columns.stream().filter(n -> before.column(n).isEmpty()).toList();
    return missing.isEmpty()
        ? null
        : "it constrains "
            + missing.stream().map(n -> "`" + n + "`").collect(Collectors.joining(", "))
            + ", a column this diff adds";
  }

  /** A column's name as SQL writes it: from the catalog, or quoted here. */
  private static String quote(Table t, String name) {
    return t.column(name).map(Column::sqlName).orElse('"' + name.replace("\"", "\"\"") + '"');
  }

  /** The expression of {@code CHECK ((expr))} [{@code NO INHERIT}], or null. */
  static String checkExpression(String definition) {
    String d = definition.strip();
    if (d.endsWith(" NO INHERIT")) {
      d = d.substring(0, d.length() - " NO INHERIT".length());
    }
    if (!d.startsWith("CHECK (") || !d.endsWith(")")) {
      return null;
    }
    return d.substring("CHECK ".length());
  }

  private static String verb(Change c) {
    String reason = c.reason().toLowerCase(Locale.ROOT);
    return reason.contains("rewrit") && !reason.contains("no rewrite") ? "rewrites" : "locks";
  }
}
