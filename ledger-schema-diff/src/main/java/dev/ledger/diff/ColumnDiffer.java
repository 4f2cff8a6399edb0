package dev.ledger.diff;

import dev.ledger.diff.Change.Action;
import dev.ledger.diff.Change.Kind;
import dev.ledger.diff.Plan.Pending;
import dev.ledger.diff.Plan.Phase;
import dev.ledger.diff.SchemaCatalog.Column;
import dev.ledger.diff.SchemaCatalog.Sequence;
import dev.ledger.diff.SchemaCatalog.Table;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/** Compares the columns of a table both catalogs hold, into a {@link Plan}. */
final class ColumnDiffer {

  private final SchemaCatalog base;
  private final SchemaCatalog head;
  private final Plan plan;

  ColumnDiffer(SchemaCatalog base, SchemaCatalog head, Plan plan) {
    this.base = base;
    this.head = head;
    this.plan = plan;
  }

  /**
   * Compares the columns of a table both catalogs hold. A column that only comes from a parent (a
   * partition's, an inheriting child's) in both is the parent's business and left out.
   *
   * @param b the base's table
   * @param h the head's table
   */
  void columns(Table b, Table h) {
    Map<String, Column> before = b.columnsByName();
    Map<String, Column> after = h.columnsByName();
    List<Column> added = new ArrayList<>();
    List<Column> dropped = new ArrayList<>();
    for (Column c : h.columns()) {
      Column old = before.get(c.name());
      if (old == null) {
        if (!c.inherited()) {
          added.add(c);
        }
      } else if (old.inherited() && c.inherited()) {
        continue;
      } else if (old.inherited()
          && !c.inherited()
          && sameExceptInheritance(old, c)
          && !h.parents().containsAll(b.parents())) {
        continue; // DETACH PARTITION and NO INHERIT keep the column as the table's own
      } else if (old.inherited() && !c.inherited() && sameExceptInheritance(old, c)) {
        plan.change(h.name(), Kind.COLUMN, c.name(), Action.CHANGED, "inherited", "local")
            .because(
                Risk.SAFE,
                "kept when the parent drops it: the parent's DROP COLUMN runs with ONLY, catalog"
                    + " only");
      } else if (!old.equals(c)) {
        changedColumn(h, old, c);
      }
    }
    for (Column c : b.columns()) {
      if (!after.containsKey(c.name()) && !c.inherited()) {
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
          plan.change(h.name(), Kind.COLUMN, c.name(), Action.DROPPED, c.definition(), null)
              .because(Risk.DESTRUCTIVE, "dropped column: its data is lost")
              .sql(
                  Phase.DROP_COLUMN,
                  "ALTER TABLE "
                      + (keptByAChild(b, c) ? "ONLY " : "")
                      + h.sqlName()
                      + " DROP COLUMN "
                      + c.sqlName()
                      + ";");
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

  private static boolean sameExceptInheritance(Column a, Column b) {
    return a.withInheritance(false).equals(b.withInheritance(false));
  }

  /** Whether a table of the head that inherits from this one keeps a column it drops. */
  private boolean keptByAChild(Table parent, Column c) {
    for (Table child : head.tables().values()) {
      Table was = base.tables().get(child.name());
      if (was != null
          && was.parents().contains(parent.name())
          && !was.isPartition()
          && child.column(c.name()).map(k -> !k.inherited()).orElse(false)) {
        return true;
      }
    }
    return false;
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
    return addedColumn(plan, h, c);
  }

  /**
   * Adds a column to an existing table, classified.
   *
   * @param plan where the change goes
   * @param h the head's table
   * @param c the new column
   * @return the change
   */
  static Pending addedColumn(Plan plan, Table h, Column c) {
    Pending p = plan.change(h.name(), Kind.COLUMN, c.name(), Action.ADDED, null, c.definition());
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
    } else if (c.volatileDefault()) {
      return volatileDefault(plan, h, c, p);
    } else if (c.notNull() && c.defaultExpression() == null) {
      p.because(
          Risk.DESTRUCTIVE,
          "NOT NULL added with no default: the change fails on a table that has rows");
    } else if (c.defaultExpression() != null) {
      p.because(
          Risk.SAFE,
          "column with a non-volatile default: catalog only since PostgreSQL 11, no rewrite");
    } else {
      p.because(Risk.SAFE, "nullable column without a default: catalog only");
    }
    return p.sql(
        Phase.ADD_COLUMN,
        "ALTER TABLE " + h.sqlName() + " ADD COLUMN " + c.sqlName() + " " + c.definition() + ";");
  }

  /** The online alternative to adding a column whose default is volatile. */
  static final String VOLATILE_DEFAULT_ALTERNATIVE =
      "ADD COLUMN without a default and SET DEFAULT (catalog only, new rows get it), then backfill"
          + " existing rows in batches";

  /**
   * A column whose default calls a volatile function: PostgreSQL computes it for every row, so the
   * table is rewritten under ACCESS EXCLUSIVE. With {@code --online} a nullable column is added
   * without the default and the default set after, leaving the existing rows to a batched backfill.
   */
  private static Pending volatileDefault(Plan plan, Table h, Column c, Pending p) {
    String reason =
        "column with a volatile default added ("
            + c.defaultExpression()
            + "): every row is filled, rewriting the table under an ACCESS EXCLUSIVE lock";
    String add = "ALTER TABLE " + h.sqlName() + " ADD COLUMN " + c.sqlName() + " ";
    if (c.notNull()) {
      return p.because(
              Risk.LOCKING,
              reason
                  + "; instead: add it nullable without a default, SET DEFAULT, backfill in"
                  + " batches, then SET NOT NULL")
          .sql(Phase.ADD_COLUMN, add + c.definition() + ";");
    }
    p.online = VOLATILE_DEFAULT_ALTERNATIVE;
    if (!plan.online) {
      return p.because(Risk.LOCKING, reason + "; use --online")
          .sql(Phase.ADD_COLUMN, add + c.definition() + ";");
    }
    return p.because(
            Risk.SAFE,
            "column with a volatile default ("
                + c.defaultExpression()
                + ") added without it, then SET DEFAULT: catalog only, no rewrite; existing rows"
                + " hold NULL until backfilled in batches")
        .sql(Phase.ADD_COLUMN, add + c.withGeneration(null, null).definition() + ";")
        .sql(
            Phase.ADD_COLUMN,
            "ALTER TABLE "
                + h.sqlName()
                + " ALTER COLUMN "
                + c.sqlName()
                + " SET DEFAULT "
                + c.defaultExpression()
                + ";");
  }

  private void changedColumn(Table h, Column before, Column a) {
    Column b = before;
    Pending p =
        plan.change(
            h.name(), Kind.COLUMN, a.name(), Action.CHANGED, b.definition(), a.definition());
    String alter = "ALTER TABLE " + h.sqlName() + " ALTER COLUMN " + a.sqlName();
    if (!Objects.equals(b.generatedExpression(), a.generatedExpression())) {
      if (a.generatedExpression() == null) {
        p.because(Risk.SAFE, "no longer generated: the stored values stay, catalog only")
            .sql(Phase.ALTER_COLUMN, alter + " DROP EXPRESSION;");
        b = b.withGeneration(null, null);
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
    String using = plan.using.get(h.name() + "." + a.name());
    if (retyped) {
      if (using != null) {
        p.because(
            Risk.SAFE,
            "converted with the author's expression (--using " + h.name() + "." + a.name() + ")");
      }
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
              + (using != null ? using : a.sqlName() + "::" + a.type())
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
        boolean online = plan.online && h.partitionKey() == null;
        p.online =
            "ADD CONSTRAINT ... CHECK (col IS NOT NULL) NOT VALID, VALIDATE CONSTRAINT (SHARE"
                + " UPDATE EXCLUSIVE), then SET NOT NULL without a scan and DROP CONSTRAINT";
        String check = Sql.quoteIdentifier(a.name() + "_not_null");
        String table = "ALTER TABLE " + h.sqlName();
        if (online) {
          p.sql(
              Phase.ALTER_COLUMN,
              table
                  + " ADD CONSTRAINT "
                  + check
                  + " CHECK ("
                  + a.sqlName()
                  + " IS NOT NULL) NOT VALID;");
          p.sql(Phase.ALTER_COLUMN, table + " VALIDATE CONSTRAINT " + check + ";");
        }
        p.sql(Phase.ALTER_COLUMN, alter + " SET NOT NULL;");
        if (online) {
          p.sql(Phase.ALTER_COLUMN, table + " DROP CONSTRAINT " + check + ";");
        }
        String scan =
            online
                ? "checked by a CHECK added NOT VALID and validated under SHARE UPDATE EXCLUSIVE"
                    + " (reads and writes go on), so SET NOT NULL does not scan"
                : "scans the table under an ACCESS EXCLUSIVE lock";
        if (a.defaultExpression() == null && a.identity() == null) {
          p.because(
              Risk.DESTRUCTIVE,
              online
                  ? "NOT NULL added with no default: fails when a row holds NULL; " + scan
                  : "NOT NULL added with no default: fails when a row holds NULL, after scanning"
                      + " the table under an ACCESS EXCLUSIVE lock");
        } else {
          p.because(
              online ? Risk.SAFE : Risk.LOCKING,
              "NOT NULL added: " + scan + " (the default fills only new rows)");
        }
      } else {
        p.sql(Phase.ALTER_COLUMN, alter + " DROP NOT NULL;");
        p.because(Risk.SAFE, "NOT NULL dropped: catalog only");
      }
    }
    if (b.identity() == null && a.identity() != null) {
      String options =
          a.identityOptions() == null || a.identityOptions().isEmpty()
              ? ""
              : " (" + a.identityOptions() + ")";
      p.sql(
          Phase.ALTER_COLUMN,
          alter + " ADD GENERATED " + a.identity() + " AS IDENTITY" + options + ";");
      p.because(Risk.SAFE, "identity added: catalog only; new rows draw from a new sequence");
    } else if (b.identitySequence() != null
        && a.identitySequence() != null
        && !b.identitySequence().sameOptions(a.identitySequence())) {
      Sequence s = a.identitySequence();
      p.sql(
          Phase.ALTER_COLUMN,
          alter
              + " SET INCREMENT BY "
              + s.increment()
              + " SET MINVALUE "
              + s.min()
              + " SET MAXVALUE "
              + s.max()
              + " SET START WITH "
              + s.start()
              + " SET CACHE "
              + s.cache()
              + (s.cycle() ? " SET CYCLE" : " SET NO CYCLE")
              + ";");
      p.because(Risk.SAFE, "identity options changed: catalog only; the current value is kept");
    }
    if (b.inherited() != a.inherited() && !p.steps.isEmpty()) {
      p.because(Risk.SAFE, "inheritance of the column changed");
    }
  }
}
