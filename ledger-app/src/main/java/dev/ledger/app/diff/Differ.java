package dev.ledger.app.diff;

import dev.ledger.app.diff.Catalog.Column;
import dev.ledger.app.diff.Catalog.Constraint;
import dev.ledger.app.diff.Catalog.ConstraintKind;
import dev.ledger.app.diff.Catalog.Index;
import dev.ledger.app.diff.Catalog.Sequence;
import dev.ledger.app.diff.Catalog.Table;
import dev.ledger.app.diff.Change.Action;
import dev.ledger.app.diff.Change.Kind;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/** Compares two catalogs into a {@link CatalogDiff}: the changes, their risks, the script. */
final class Differ {

  /** When a statement runs in the script; see {@link CatalogDiff}. */
  private enum Phase {
    CREATE_SCHEMA,
    DROP_IDENTITY,
    CREATE_SEQUENCE,
    ALTER_SEQUENCE,
    DROP_FOREIGN_KEY,
    DROP_CONSTRAINT,
    DROP_INDEX,
    DROP_TABLE,
    CREATE_TABLE,
    ADD_COLUMN,
    ALTER_COLUMN,
    ADD_CONSTRAINT,
    CREATE_INDEX,
    ADD_FOREIGN_KEY,
    OWN_SEQUENCE,
    DROP_COLUMN,
    DROP_SEQUENCE,
    DROP_SCHEMA
  }

  private static final String PART_OF_NEW_TABLE = "part of a new table";

  private record Step(Phase phase, int rank, int order, String sql, Pending owner) {}

  private static final Comparator<Step> SCRIPT_ORDER =
      Comparator.comparing(Step::phase).thenComparingInt(Step::rank).thenComparingInt(Step::order);

  /** A change being built, and its statements. */
  private final class Pending {
    final String table;
    final Kind kind;
    final String name;
    final Action action;
    final String before;
    final String after;
    Risk risk = Risk.SAFE;
    final List<String> reasons = new ArrayList<>();
    String hint;
    final List<Step> steps = new ArrayList<>();

    Pending(String table, Kind kind, String name, Action action, String before, String after) {
      this.table = table;
      this.kind = kind;
      this.name = name;
      this.action = action;
      this.before = before;
      this.after = after;
      changes.add(this);
    }

    Pending because(Risk r, String reason) {
      risk = risk.max(r);
      reasons.add(reason);
      return this;
    }

    Pending sql(Phase phase, String statement) {
      return sql(phase, 0, statement);
    }

    Pending sql(Phase phase, int rank, String statement) {
      steps.add(new Step(phase, rank, nextOrder++, statement, this));
      return this;
    }

    Change build() {
      return new Change(
          table,
          kind,
          name,
          action,
          before,
          after,
          risk,
          String.join("; ", reasons),
          hint,
          steps.stream().sorted(SCRIPT_ORDER).map(Step::sql).toList());
    }
  }

  private final Catalog base;
  private final Catalog head;
  private final List<Pending> changes = new ArrayList<>();
  private int nextOrder;

  Differ(Catalog base, Catalog head) {
    this.base = base;
    this.head = head;
  }

  CatalogDiff diff() {
    Map<String, List<String>> sequencesByTable = new HashMap<>();
    List<String> unownedSequences = new ArrayList<>();
    for (String name : union(base.sequences().keySet(), head.sequences().keySet())) {
      String owner = sequenceOwner(name);
      if (owner == null) {
        unownedSequences.add(name);
      } else {
        sequencesByTable.computeIfAbsent(owner, k -> new ArrayList<>()).add(name);
      }
    }
    Map<String, Integer> dropRanks = dropRanks();
    for (String name : union(base.tables().keySet(), head.tables().keySet())) {
      Table b = base.tables().get(name);
      Table h = head.tables().get(name);
      if (b == null) {
        addedTable(h);
      } else if (h == null) {
        droppedTable(b, dropRanks.get(name));
      } else {
        changedTable(b, h);
      }
      sequencesByTable.getOrDefault(name, List.of()).forEach(this::sequence);
    }
    unownedSequences.forEach(this::sequence);
    for (String name : union(base.schemas().keySet(), head.schemas().keySet())) {
      schema(name);
    }
    Map<Pending, Change> built = new IdentityHashMap<>();
    changes.forEach(p -> built.put(p, p.build()));
    List<CatalogDiff.Statement> script =
        changes.stream()
            .flatMap(p -> p.steps.stream())
            .sorted(SCRIPT_ORDER)
            .map(step -> new CatalogDiff.Statement(step.sql(), built.get(step.owner())))
            .toList();
    return new CatalogDiff(changes.stream().map(built::get).toList(), script);
  }

  // ---- tables

  private void addedTable(Table h) {
    new Pending(h.name(), Kind.TABLE, h.name(), Action.ADDED, null, columnCount(h))
        .because(Risk.SAFE, "new table")
        .sql(Phase.CREATE_TABLE, createTable(h));
    for (Column c : h.columns()) {
      new Pending(h.name(), Kind.COLUMN, c.name(), Action.ADDED, null, c.definition())
          .because(Risk.SAFE, PART_OF_NEW_TABLE);
    }
    for (Constraint c : h.constraints().values()) {
      Pending p =
          new Pending(h.name(), Kind.CONSTRAINT, c.name(), Action.ADDED, null, c.definition())
              .because(Risk.SAFE, PART_OF_NEW_TABLE);
      if (!inline(c)) {
        p.sql(constraintPhase(c), addConstraint(h, c));
      }
    }
    for (Index i : h.indexes().values()) {
      new Pending(h.name(), Kind.INDEX, i.name(), Action.ADDED, null, i.shape())
          .because(Risk.SAFE, PART_OF_NEW_TABLE)
          .sql(Phase.CREATE_INDEX, i.definition() + ";");
    }
  }

  private void droppedTable(Table b, int rank) {
    Pending p =
        new Pending(b.name(), Kind.TABLE, b.name(), Action.DROPPED, columnCount(b), null)
            .because(Risk.DESTRUCTIVE, "dropped table: its rows are lost")
            .sql(Phase.DROP_TABLE, rank, "DROP TABLE " + b.sqlName() + ";");
    head.tables().values().stream()
        .filter(h -> !base.tables().containsKey(h.name()))
        .filter(h -> signature(h).equals(signature(b)))
        .findFirst()
        .ifPresent(
            h ->
                p.hint =
                    "`"
                        + h.name()
                        + "` was added with the same columns: if this renames the table, `ALTER"
                        + " TABLE "
                        + b.sqlName()
                        + " RENAME TO "
                        + h.sqlName()
                        + "` keeps its rows");
  }

  private void changedTable(Table b, Table h) {
    columns(b, h);
    constraints(b, h);
    indexes(b, h);
  }

  // ---- columns

  private void columns(Table b, Table h) {
    Map<String, Column> before = b.columnsByName();
    Map<String, Column> after = h.columnsByName();
    List<Column> added = new ArrayList<>();
    List<Column> dropped = new ArrayList<>();
    for (Column c : h.columns()) {
      Column old = before.get(c.name());
      if (old == null) {
        added.add(c);
      } else if (!old.equals(c)) {
        changedColumn(h, old, c);
      }
    }
    for (Column c : b.columns()) {
      if (!after.containsKey(c.name())) {
        dropped.add(c);
      }
    }
    Map<Column, Column> renames = renames(dropped, added);
    for (Column c : added) {
      Pending p = addedColumn(h, c);
      renames.entrySet().stream()
          .filter(e -> e.getValue().equals(c))
          .findFirst()
          .ifPresent(e -> p.hint = "looks like `" + e.getKey().name() + "` renamed: see its drop");
    }
    for (Column c : dropped) {
      Pending p =
          new Pending(h.name(), Kind.COLUMN, c.name(), Action.DROPPED, c.definition(), null)
              .because(Risk.DESTRUCTIVE, "dropped column: its data is lost")
              .sql(
                  Phase.DROP_COLUMN,
                  "ALTER TABLE " + h.sqlName() + " DROP COLUMN " + c.sqlName() + ";");
      Column renamed = renames.get(c);
      if (renamed != null) {
        p.hint =
            "`"
                + renamed.name()
                + "` was added with the same type: if this is a rename, `ALTER TABLE "
                + h.sqlName()
                + " RENAME COLUMN "
                + c.sqlName()
                + " TO "
                + renamed.sqlName()
                + "` keeps the data (code that reads `"
                + c.name()
                + "` breaks either way)";
      }
    }
  }

  /** Pairs each dropped column with the first unpaired added column of the same type. */
  private static Map<Column, Column> renames(List<Column> dropped, List<Column> added) {
    Map<Column, Column> pairs = new HashMap<>();
    Set<Column> taken = new HashSet<>();
    for (Column d : dropped) {
      for (Column a : added) {
        if (!taken.contains(a)
            && a.type().equals(d.type())
            && Objects.equals(a.collation(), d.collation())) {
          pairs.put(d, a);
          taken.add(a);
          break;
        }
      }
    }
    return pairs;
  }

  private Pending addedColumn(Table h, Column c) {
    Pending p = new Pending(h.name(), Kind.COLUMN, c.name(), Action.ADDED, null, c.definition());
    if (c.generatedExpression() != null) {
      p.because(
          Risk.LOCKING,
          "stored generated column added: computes every row, rewriting the table under an"
              + " ACCESS EXCLUSIVE lock");
    } else if (c.identity() != null) {
      p.because(
          Risk.LOCKING,
          "identity column added: fills every row, rewriting the table under an ACCESS EXCLUSIVE"
              + " lock");
    } else if (c.defaultExpression() != null && c.defaultExpression().contains("nextval(")) {
      p.because(
          Risk.LOCKING,
          "column with a sequence default added: nextval() is volatile, so every row is filled"
              + " and the table rewritten under an ACCESS EXCLUSIVE lock");
    } else if (c.notNull() && c.defaultExpression() == null) {
      p.because(
          Risk.DESTRUCTIVE,
          "NOT NULL added with no default: the change fails on a table that has rows");
    } else if (c.defaultExpression() != null) {
      p.because(
          Risk.SAFE,
          "column with a default: catalog only since PostgreSQL 11, no rewrite (volatile defaults"
              + " aside)");
    } else {
      p.because(Risk.SAFE, "nullable column without a default: catalog only");
    }
    return p.sql(
        Phase.ADD_COLUMN,
        "ALTER TABLE " + h.sqlName() + " ADD COLUMN " + c.sqlName() + " " + c.definition() + ";");
  }

  private void changedColumn(Table h, Column before, Column a) {
    Column b = before;
    Pending p =
        new Pending(
            h.name(), Kind.COLUMN, a.name(), Action.CHANGED, b.definition(), a.definition());
    String alter = "ALTER TABLE " + h.sqlName() + " ALTER COLUMN " + a.sqlName();
    if (!Objects.equals(b.generatedExpression(), a.generatedExpression())) {
      if (a.generatedExpression() == null) {
        p.because(Risk.SAFE, "no longer generated: the stored values stay, catalog only")
            .sql(Phase.ALTER_COLUMN, alter + " DROP EXPRESSION;");
        b =
            new Column(
                b.name(),
                b.sqlName(),
                b.type(),
                b.collation(),
                b.notNull(),
                null,
                b.identity(),
                null);
      } else {
        Risk risk = b.generatedExpression() == null ? Risk.DESTRUCTIVE : Risk.LOCKING;
        String reason =
            b.generatedExpression() == null
                ? "column becomes generated: it is dropped and added again, so its values are lost"
                : "generation expression changed: the column is dropped and added again, rewriting"
                    + " the table under an ACCESS EXCLUSIVE lock";
        p.because(risk, reason)
            .sql(
                Phase.ALTER_COLUMN,
                "ALTER TABLE " + h.sqlName() + " DROP COLUMN " + a.sqlName() + ";")
            .sql(
                Phase.ALTER_COLUMN,
                "ALTER TABLE "
                    + h.sqlName()
                    + " ADD COLUMN "
                    + a.sqlName()
                    + " "
                    + a.definition()
                    + ";");
        return;
      }
    }
    // An identity column takes no default, and its sequence may hold the name a new sequence
    // wants: drop an identity before sequences are made and defaults change; add one after.
    if (b.identity() != null && a.identity() == null) {
      p.sql(Phase.DROP_IDENTITY, alter + " DROP IDENTITY;");
      p.because(Risk.SAFE, "identity dropped: catalog only");
    } else if (b.identity() != null && !b.identity().equals(a.identity())) {
      p.sql(Phase.ALTER_COLUMN, alter + " SET GENERATED " + a.identity() + ";");
      p.because(Risk.SAFE, "identity changed: catalog only");
    }
    boolean retyped = !b.type().equals(a.type()) || !Objects.equals(b.collation(), a.collation());
    boolean defaultChanged = !Objects.equals(b.defaultExpression(), a.defaultExpression());
    if (retyped && b.defaultExpression() != null) {
      p.sql(Phase.ALTER_COLUMN, alter + " DROP DEFAULT;");
    }
    if (retyped) {
      if (b.type().equals(a.type())) {
        p.because(
            Risk.LOCKING,
            "collation changed: indexes on the column are rebuilt under an ACCESS EXCLUSIVE lock");
      } else {
        TypeChange.Verdict verdict = TypeChange.classify(b.type(), a.type());
        p.because(verdict.risk(), verdict.reason());
      }
      p.sql(
          Phase.ALTER_COLUMN,
          alter
              + " TYPE "
              + a.type()
              + (a.collation() == null ? "" : " COLLATE " + a.collation())
              + " USING "
              + a.sqlName()
              + "::"
              + a.type()
              + ";");
    }
    if (defaultChanged || (retyped && b.defaultExpression() != null)) {
      if (a.defaultExpression() != null) {
        p.sql(Phase.ALTER_COLUMN, alter + " SET DEFAULT " + a.defaultExpression() + ";");
      } else if (!retyped) {
        p.sql(Phase.ALTER_COLUMN, alter + " DROP DEFAULT;");
      }
    }
    if (defaultChanged) {
      p.because(
          Risk.SAFE,
          a.defaultExpression() == null
              ? "default dropped: catalog only"
              : "default changed: applies to rows inserted from now on");
    }
    if (b.notNull() != a.notNull()) {
      if (a.notNull()) {
        p.sql(Phase.ALTER_COLUMN, alter + " SET NOT NULL;");
        if (a.defaultExpression() == null && a.identity() == null) {
          p.because(
              Risk.DESTRUCTIVE,
              "NOT NULL added with no default: fails when a row holds NULL, after scanning the"
                  + " table under an ACCESS EXCLUSIVE lock");
        } else {
          p.because(
              Risk.LOCKING,
              "NOT NULL added: scans the table under an ACCESS EXCLUSIVE lock (the default fills"
                  + " only new rows)");
        }
      } else {
        p.sql(Phase.ALTER_COLUMN, alter + " DROP NOT NULL;");
        p.because(Risk.SAFE, "NOT NULL dropped: catalog only");
      }
    }
    if (b.identity() == null && a.identity() != null) {
      p.sql(Phase.ALTER_COLUMN, alter + " ADD GENERATED " + a.identity() + " AS IDENTITY;");
      p.because(Risk.SAFE, "identity added: catalog only; new rows draw from a new sequence");
    }
  }

  // ---- constraints

  private void constraints(Table b, Table h) {
    for (String name : union(b.constraints().keySet(), h.constraints().keySet())) {
      Constraint before = b.constraints().get(name);
      Constraint after = h.constraints().get(name);
      if (before == null) {
        Pending p =
            new Pending(h.name(), Kind.CONSTRAINT, name, Action.ADDED, null, after.definition());
        addedConstraint(p, b, h, after);
      } else if (after == null) {
        new Pending(h.name(), Kind.CONSTRAINT, name, Action.DROPPED, before.definition(), null)
            .because(
                Risk.SAFE,
                before.kind().isUniqueKey()
                    ? "unique key dropped: duplicates become possible"
                    : "constraint dropped: its rule no longer holds for new rows")
            .sql(dropConstraintPhase(before), dropConstraint(h, before));
      } else if (!before.equals(after)) {
        Pending p =
            new Pending(
                h.name(),
                Kind.CONSTRAINT,
                name,
                Action.CHANGED,
                before.definition(),
                after.definition());
        if (!before.validated() && after.validated() && sameRule(before, after)) {
          p.because(
                  Risk.SAFE,
                  "constraint validated: scans the table under a SHARE UPDATE EXCLUSIVE lock,"
                      + " which blocks neither reads nor writes")
              .sql(
                  Phase.ADD_CONSTRAINT,
                  "ALTER TABLE " + h.sqlName() + " VALIDATE CONSTRAINT " + after.sqlName() + ";");
        } else {
          p.sql(dropConstraintPhase(before), dropConstraint(h, before));
          addedConstraint(p, b, h, after);
        }
      }
    }
  }

  private static boolean sameRule(Constraint a, Constraint b) {
    return stripNotValid(a.definition()).equals(stripNotValid(b.definition()))
        && a.kind() == b.kind();
  }

  private static String stripNotValid(String definition) {
    return definition.endsWith(" NOT VALID")
        ? definition.substring(0, definition.length() - " NOT VALID".length())
        : definition;
  }

  private void addedConstraint(Pending p, Table b, Table h, Constraint c) {
    String implied =
        c.kind() == ConstraintKind.EXCLUSION
            ? null
            : impliedBy(b, c.columns(), c.kind() == ConstraintKind.PRIMARY_KEY, c.definition());
    if (implied != null) {
      p.because(
          Risk.LOCKING,
          "unique key added on existing data, but the base's "
              + implied
              + " already keeps those rows unique, so it cannot fail; builds its index under a"
              + " lock that blocks writes");
    } else if (c.kind().isUniqueKey()) {
      p.because(
          Risk.DESTRUCTIVE,
          "unique key added on existing data: fails when rows hold duplicates"
              + (c.kind() == ConstraintKind.PRIMARY_KEY ? " or NULLs" : "")
              + ", and builds its index under a lock that blocks writes");
    } else if (!c.validated()) {
      p.because(Risk.SAFE, "added NOT VALID: existing rows are not checked");
    } else if (c.kind() == ConstraintKind.FOREIGN_KEY) {
      p.because(
          Risk.LOCKING,
          "foreign key added to an existing table: checks every row under SHARE ROW EXCLUSIVE"
              + " locks; add it NOT VALID, then VALIDATE CONSTRAINT");
    } else {
      p.because(
          Risk.LOCKING,
          "check constraint added to an existing table: scans every row under an ACCESS EXCLUSIVE"
              + " lock; add it NOT VALID, then VALIDATE CONSTRAINT");
    }
    p.sql(constraintPhase(c), addConstraint(h, c));
  }

  /** Whether CREATE TABLE states the constraint itself (a validated, non-foreign-key one). */
  private static boolean inline(Constraint c) {
    return c.kind() != ConstraintKind.FOREIGN_KEY && c.validated();
  }

  private static Phase constraintPhase(Constraint c) {
    return c.kind() == ConstraintKind.FOREIGN_KEY ? Phase.ADD_FOREIGN_KEY : Phase.ADD_CONSTRAINT;
  }

  private static Phase dropConstraintPhase(Constraint c) {
    return c.kind() == ConstraintKind.FOREIGN_KEY ? Phase.DROP_FOREIGN_KEY : Phase.DROP_CONSTRAINT;
  }

  private static String addConstraint(Table t, Constraint c) {
    return "ALTER TABLE "
        + t.sqlName()
        + " ADD CONSTRAINT "
        + c.sqlName()
        + " "
        + c.definition()
        + ";";
  }

  private static String dropConstraint(Table t, Constraint c) {
    return "ALTER TABLE " + t.sqlName() + " DROP CONSTRAINT " + c.sqlName() + ";";
  }

  // ---- indexes

  private void indexes(Table b, Table h) {
    for (String name : union(b.indexes().keySet(), h.indexes().keySet())) {
      Index before = b.indexes().get(name);
      Index after = h.indexes().get(name);
      if (before == null) {
        addedIndex(
            new Pending(h.name(), Kind.INDEX, name, Action.ADDED, null, after.shape()),
            b,
            h,
            after);
      } else if (after == null) {
        new Pending(h.name(), Kind.INDEX, name, Action.DROPPED, before.shape(), null)
            .because(Risk.SAFE, "index dropped: queries that used it may slow down")
            .sql(Phase.DROP_INDEX, "DROP INDEX " + before.sqlName() + ";");
      } else if (!before.sameAs(after)) {
        Pending p =
            new Pending(h.name(), Kind.INDEX, name, Action.CHANGED, before.shape(), after.shape())
                .sql(Phase.DROP_INDEX, "DROP INDEX " + before.sqlName() + ";");
        addedIndex(p, b, h, after);
      }
    }
  }

  private void addedIndex(Pending p, Table b, Table h, Index i) {
    String implied = i.unique() ? impliedBy(b, i.keyColumns(), false, i.definition()) : null;
    if (implied != null) {
      p.because(
          i.builtConcurrently() ? Risk.SAFE : Risk.LOCKING,
          "unique key added on existing data, but the base's "
              + implied
              + " already keeps those rows unique, so it cannot fail"
              + (i.builtConcurrently()
                  ? "; built CONCURRENTLY"
                  : "; blocks writes to `" + h.name() + "` while it builds"));
    } else if (i.unique()) {
      p.because(
          Risk.DESTRUCTIVE,
          "unique key added on existing data: fails when rows hold duplicates"
              + (i.builtConcurrently()
                  ? ""
                  : ", and blocks writes to `" + h.name() + "` while it builds"));
    } else if (i.builtConcurrently()) {
      p.because(Risk.SAFE, "built CONCURRENTLY: reads and writes go on while it builds");
    } else {
      p.because(
          Risk.LOCKING,
          "CREATE INDEX without CONCURRENTLY on an existing table: blocks writes to `"
              + h.name()
              + "` while it builds; use CREATE INDEX CONCURRENTLY");
    }
    p.sql(
        Phase.CREATE_INDEX,
        (i.builtConcurrently() ? concurrently(i.definition()) : i.definition()) + ";");
  }

  /**
   * Names the base's unique key that makes a new unique key unable to fail on the base's rows: one
   * with no predicate, without {@code NULLS NOT DISTINCT}, on a subset of the new key's columns.
   * Rows unique on fewer columns are unique on more, and NULLs stay distinct in both. A new primary
   * key also needs its columns {@code NOT NULL} already.
   *
   * @param b the base's table
   * @param columns the new key's columns; empty when a key is an expression
   * @param primaryKey whether the new key is a primary key
   * @param definition the new key's definition
   * @return e.g. {@code unique key `promotions_version` (entry, tier, digest)}, or null when no
   *     base key implies it
   */
  private static String impliedBy(
      Table b, List<String> columns, boolean primaryKey, String definition) {
    if (columns.isEmpty() || definition.contains("NULLS NOT DISTINCT")) {
      return null;
    }
    if (primaryKey
        && !columns.stream().allMatch(c -> b.column(c).map(Column::notNull).orElse(false))) {
      return null;
    }
    for (Index i : b.indexes().values()) {
      if (i.unique()
          && !i.partial()
          && !i.keyColumns().isEmpty()
          && !i.definition().contains("NULLS NOT DISTINCT")
          && columns.containsAll(i.keyColumns())) {
        return "unique index `" + i.name() + "` (" + String.join(", ", i.keyColumns()) + ")";
      }
    }
    for (Constraint c : b.constraints().values()) {
      if ((c.kind() == ConstraintKind.PRIMARY_KEY || c.kind() == ConstraintKind.UNIQUE)
          && !c.columns().isEmpty()
          && !c.definition().contains("NULLS NOT DISTINCT")
          && columns.containsAll(c.columns())) {
        return (c.kind() == ConstraintKind.PRIMARY_KEY ? "primary key `" : "unique constraint `")
            + c.name()
            + "` ("
            + String.join(", ", c.columns())
            + ")";
      }
    }
    return null;
  }

  private static String concurrently(String definition) {
    String unique = "CREATE UNIQUE INDEX ";
    String plain = "CREATE INDEX ";
    if (definition.startsWith(unique)) {
      return unique + "CONCURRENTLY " + definition.substring(unique.length());
    }
    return plain + "CONCURRENTLY " + definition.substring(plain.length());
  }

  // ---- sequences

  private String sequenceOwner(String name) {
    Sequence h = head.sequences().get(name);
    if (h != null && h.ownedByTable() != null) {
      return h.ownedByTable();
    }
    Sequence b = base.sequences().get(name);
    return b == null ? null : b.ownedByTable();
  }

  private void sequence(String name) {
    Sequence b = base.sequences().get(name);
    Sequence h = head.sequences().get(name);
    String table = sequenceOwner(name);
    if (b == null) {
      boolean newTable = h.ownedByTable() != null && !base.tables().containsKey(h.ownedByTable());
      Pending p =
          new Pending(table, Kind.SEQUENCE, name, Action.ADDED, null, describe(h))
              .because(Risk.SAFE, newTable ? PART_OF_NEW_TABLE : "new sequence")
              .sql(
                  Phase.CREATE_SEQUENCE,
                  "CREATE SEQUENCE " + h.sqlName() + " " + h.options() + ";");
      if (h.ownedBySql() != null) {
        p.sql(
            Phase.OWN_SEQUENCE,
            "ALTER SEQUENCE " + h.sqlName() + " OWNED BY " + h.ownedBySql() + ";");
      }
    } else if (h == null) {
      Pending p = new Pending(table, Kind.SEQUENCE, name, Action.DROPPED, describe(b), null);
      if (b.ownedByTable() != null && ownerDropped(b)) {
        p.because(Risk.SAFE, "dropped with the column that owns it");
      } else {
        p.because(Risk.DESTRUCTIVE, "dropped sequence: its current value is lost")
            .sql(Phase.DROP_SEQUENCE, "DROP SEQUENCE " + b.sqlName() + ";");
      }
    } else if (!b.equals(h)) {
      Pending p = new Pending(table, Kind.SEQUENCE, name, Action.CHANGED, describe(b), describe(h));
      if (!b.sameOptions(h)) {
        p.because(Risk.SAFE, "sequence options changed: catalog only")
            .sql(Phase.ALTER_SEQUENCE, "ALTER SEQUENCE " + h.sqlName() + " " + h.options() + ";");
      }
      if (!Objects.equals(b.ownedBySql(), h.ownedBySql())) {
        p.because(Risk.SAFE, "owner changed: catalog only");
        if (h.ownedBySql() == null) {
          p.sql(Phase.ALTER_SEQUENCE, "ALTER SEQUENCE " + h.sqlName() + " OWNED BY NONE;");
        } else {
          p.sql(
              Phase.OWN_SEQUENCE,
              "ALTER SEQUENCE " + h.sqlName() + " OWNED BY " + h.ownedBySql() + ";");
        }
      }
    }
  }

  private boolean ownerDropped(Sequence b) {
    Table owner = head.tables().get(b.ownedByTable());
    return owner == null || owner.column(b.ownedByColumn()).isEmpty();
  }

  private static String describe(Sequence s) {
    return s.options() + (s.ownedBySql() == null ? "" : " OWNED BY " + s.ownedBySql());
  }

  // ---- schemas

  private void schema(String name) {
    String before = base.schemas().get(name);
    String after = head.schemas().get(name);
    if (before == null) {
      new Pending(null, Kind.SCHEMA, name, Action.ADDED, null, "schema")
          .because(Risk.SAFE, "new schema")
          .sql(Phase.CREATE_SCHEMA, "CREATE SCHEMA " + after + ";");
    } else if (after == null) {
      new Pending(null, Kind.SCHEMA, name, Action.DROPPED, "schema", null)
          .because(Risk.DESTRUCTIVE, "dropped schema: everything in it is lost")
          .sql(Phase.DROP_SCHEMA, "DROP SCHEMA " + before + " CASCADE;");
    }
  }

  // ---- helpers

  /**
   * The order to drop the base's dropped tables in: a table that references another dropped table
   * goes before it.
   */
  private Map<String, Integer> dropRanks() {
    Set<String> dropped = new TreeSet<>(base.tables().keySet());
    dropped.removeAll(head.tables().keySet());
    Map<String, Set<String>> referencedBy = new TreeMap<>();
    for (String name : dropped) {
      for (Constraint c : base.tables().get(name).constraints().values()) {
        if (c.referencedTable() != null
            && dropped.contains(c.referencedTable())
            && !c.referencedTable().equals(name)) {
          referencedBy.computeIfAbsent(c.referencedTable(), k -> new TreeSet<>()).add(name);
        }
      }
    }
    LinkedHashSet<String> order = new LinkedHashSet<>();
    Set<String> visiting = new HashSet<>();
    for (String name : dropped) {
      visit(name, referencedBy, order, visiting);
    }
    Map<String, Integer> ranks = new HashMap<>();
    int rank = 0;
    for (String name : order) {
      ranks.put(name, rank++);
    }
    return ranks;
  }

  private static void visit(
      String name,
      Map<String, Set<String>> referencedBy,
      LinkedHashSet<String> order,
      Set<String> visiting) {
    if (order.contains(name) || !visiting.add(name)) {
      return;
    }
    for (String referrer : referencedBy.getOrDefault(name, Set.of())) {
      visit(referrer, referencedBy, order, visiting);
    }
    order.add(name);
  }

  private static String createTable(Table t) {
    List<String> items = new ArrayList<>();
    for (Column c : t.columns()) {
      items.add(c.sqlName() + " " + c.definition());
    }
    for (Constraint c : t.constraints().values()) {
      if (inline(c)) {
        items.add("CONSTRAINT " + c.sqlName() + " " + c.definition());
      }
    }
    if (items.isEmpty()) {
      return "CREATE TABLE " + t.sqlName() + " ();";
    }
    return "CREATE TABLE "
        + t.sqlName()
        + " (\n"
        + items.stream().map(i -> "    " + i).collect(Collectors.joining(",\n"))
        + "\n);";
  }

  private static String columnCount(Table t) {
    return t.columns().size() + (t.columns().size() == 1 ? " column" : " columns");
  }

  private static List<String> signature(Table t) {
    return t.columns().stream().map(c -> c.name() + " " + c.type()).toList();
  }

  private static List<String> union(Set<String> a, Set<String> b) {
    TreeSet<String> all = new TreeSet<>(a);
    all.addAll(b);
    return new ArrayList<>(all);
  }
}
