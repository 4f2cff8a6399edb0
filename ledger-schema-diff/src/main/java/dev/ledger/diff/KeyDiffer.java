package dev.ledger.diff;

import dev.ledger.diff.Change.Action;
import dev.ledger.diff.Change.Kind;
import dev.ledger.diff.Plan.Pending;
import dev.ledger.diff.Plan.Phase;
import dev.ledger.diff.SchemaCatalog.Column;
import dev.ledger.diff.SchemaCatalog.Constraint;
import dev.ledger.diff.SchemaCatalog.ConstraintKind;
import dev.ledger.diff.SchemaCatalog.Index;
import dev.ledger.diff.SchemaCatalog.Table;
import java.util.List;
import java.util.Set;

/**
 * Compares the constraints (primary keys, unique, foreign keys, checks, exclusions) and indexes of
 * a table both catalogs hold, into a {@link Plan}.
 */
final class KeyDiffer {

  private final SchemaCatalog base;
  private final SchemaCatalog head;
  private final Plan plan;

  /** The indexes and checks an enum swap drops itself ({@link SwapDependents#movedKeys()}). */
  private Set<String> movedBySwap = Set.of();

  KeyDiffer(SchemaCatalog base, SchemaCatalog head, Plan plan) {
    this.base = base;
    this.head = head;
    this.plan = plan;
  }

  /**
   * The indexes and checks an enum swap drops before it runs: their changes here add the head's and
   * leave out the drop.
   *
   * @param keys {@link SwapDependents#movedKeys()} of every swap
   */
  void movedBySwap(Set<String> keys) {
    this.movedBySwap = Set.copyOf(keys);
  }

  private boolean moved(String what, Table t, String name) {
    return movedBySwap.contains(SwapDependents.movedKey(what, t.name(), name));
  }

  /**
   * Compares the constraints of a table both catalogs hold; those a parent gives (a partition's
   * copy of its key) are the parent's business.
   *
   * @param b the base's table
   * @param h the head's table
   */
  void constraints(Table b, Table h) {
    for (String name : Differ.union(b.constraints().keySet(), h.constraints().keySet())) {
      Constraint before = b.constraints().get(name);
      Constraint after = h.constraints().get(name);
      if ((before == null || before.inherited()) && (after == null || after.inherited())) {
        continue;
      }
      if (released(b, h)
          && before != null
          && after != null
          && before.inherited()
          && before.definition().equals(after.definition())) {
        continue; // DETACH PARTITION and NO INHERIT keep the copy as the table's own
      }
      if (before != null && before.inherited()) {
        before = null;
      }
      if (after != null && after.inherited()) {
        after = null;
      }
      if (before == null) {
        Pending p =
            plan.change(h.name(), Kind.CONSTRAINT, name, Action.ADDED, null, after.definition());
        addedConstraint(p, b, h, after);
      } else if (after == null) {
        Pending p =
            plan.change(h.name(), Kind.CONSTRAINT, name, Action.DROPPED, before.definition(), null)
                .because(
                    Risk.SAFE,
                    before.kind().isUniqueKey()
                        ? "unique key dropped: duplicates become possible"
                        : "constraint dropped: its rule no longer holds for new rows");
        if (!moved("constraint", b, name)) {
          p.sql(dropConstraintPhase(before), dropConstraint(h, before));
        }
      } else if (!before.equals(after)) {
        Pending p =
            plan.change(
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
          if (!moved("constraint", b, name)) {
            p.sql(dropConstraintPhase(before), dropConstraint(h, before));
          }
          addedConstraint(p, b, h, after);
        }
      }
    }
  }

  /** Whether the head's table leaves a parent the base's table had. */
  private static boolean released(Table b, Table h) {
    return !h.parents().containsAll(b.parents());
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

  private static final java.util.regex.Pattern PLAIN_KEY =
      java.util.regex.Pattern.compile("(UNIQUE|PRIMARY KEY) (\\([^()]*\\))");

  private void addedConstraint(Pending p, Table b, Table h, Constraint c) {
    boolean key = c.kind() == ConstraintKind.PRIMARY_KEY || c.kind() == ConstraintKind.UNIQUE;
    boolean concurrentOk = h.partitionKey() == null;
    String implied =
        key
            ? impliedBy(b, c.columns(), c.kind() == ConstraintKind.PRIMARY_KEY, c.definition())
            : null;
    java.util.regex.Matcher plainKey = PLAIN_KEY.matcher(c.definition());
    boolean keyOnline = key && concurrentOk && plainKey.matches();
    String keyPlan =
        "CREATE UNIQUE INDEX CONCURRENTLY, then ADD CONSTRAINT ... USING INDEX (SHARE UPDATE"
            + " EXCLUSIVE while it builds, then a brief ACCESS EXCLUSIVE)";
    if (key && keyOnline) {
      p.online = keyPlan;
    }
    boolean online = plan.online && keyOnline;
    String build =
        online
            ? "; builds its index CONCURRENTLY (reads and writes go on), then takes a brief"
                + " ACCESS EXCLUSIVE lock to attach it"
            : null;
    if (implied != null) {
      p.because(
          online ? Risk.SAFE : Risk.LOCKING,
          "unique key added on existing data, but the base's "
              + implied
              + " already keeps those rows unique, so it cannot fail"
              + (online ? build : "; builds its index under a lock that blocks writes"));
    } else if (c.kind().isUniqueKey()) {
      p.because(
          Risk.DESTRUCTIVE,
          "unique key added on existing data: fails when rows hold duplicates"
              + (c.kind() == ConstraintKind.PRIMARY_KEY ? " or NULLs" : "")
              + (online ? build : ", and builds its index under a lock that blocks writes"));
    } else if (!c.validated()) {
      p.because(Risk.SAFE, "added NOT VALID: existing rows are not checked");
    } else {
      p.online =
          "ADD CONSTRAINT ... NOT VALID (brief lock), then VALIDATE CONSTRAINT (SHARE UPDATE"
              + " EXCLUSIVE: reads and writes go on while it checks the rows)";
      String what =
          c.kind() == ConstraintKind.FOREIGN_KEY
              ? "foreign key added to an existing table: fails when a row has no match"
              : "check constraint added to an existing table: fails when a row breaks it";
      p.because(
          Risk.DESTRUCTIVE,
          what
              + (plan.online
                  ? "; added NOT VALID, then validated under SHARE UPDATE EXCLUSIVE, so reads and"
                      + " writes go on while it checks"
                  : c.kind() == ConstraintKind.FOREIGN_KEY
                      ? ", after checking every row under SHARE ROW EXCLUSIVE locks"
                      : ", after scanning every row under an ACCESS EXCLUSIVE lock"));
      if (plan.online) {
        p.sql(
            constraintPhase(c),
            "ALTER TABLE "
                + h.sqlName()
                + " ADD CONSTRAINT "
                + c.sqlName()
                + " "
                + c.definition()
                + " NOT VALID;");
        p.sql(
            constraintPhase(c),
            "ALTER TABLE " + h.sqlName() + " VALIDATE CONSTRAINT " + c.sqlName() + ";");
        return;
      }
    }
    if (online) {
      p.sql(
          Phase.ADD_CONSTRAINT,
          "CREATE UNIQUE INDEX CONCURRENTLY "
              + c.sqlName()
              + " ON "
              + h.sqlName()
              + " USING btree "
              + plainKey.group(2)
              + ";");
      p.sql(
          Phase.ADD_CONSTRAINT,
          "ALTER TABLE "
              + h.sqlName()
              + " ADD CONSTRAINT "
              + c.sqlName()
              + " "
              + plainKey.group(1)
              + " USING INDEX "
              + c.sqlName()
              + ";");
      return;
    }
    p.sql(constraintPhase(c), addConstraint(h, c));
  }

  /** Whether CREATE TABLE states the constraint itself (a validated, non-foreign-key one). */
  static boolean inline(Constraint c) {
    return c.kind() != ConstraintKind.FOREIGN_KEY && c.validated();
  }

  static Phase constraintPhase(Constraint c) {
    return c.kind() == ConstraintKind.FOREIGN_KEY ? Phase.ADD_FOREIGN_KEY : Phase.ADD_CONSTRAINT;
  }

  static Phase dropConstraintPhase(Constraint c) {
    return c.kind() == ConstraintKind.FOREIGN_KEY ? Phase.DROP_FOREIGN_KEY : Phase.DROP_CONSTRAINT;
  }

  static String addConstraint(Table t, Constraint c) {
    return "ALTER TABLE "
        + t.sqlName()
        + " ADD CONSTRAINT "
        + c.sqlName()
        + " "
        + c.definition()
        + ";";
  }

  static String dropConstraint(Table t, Constraint c) {
    return "ALTER TABLE " + t.sqlName() + " DROP CONSTRAINT " + c.sqlName() + ";";
  }

  /**
   * Compares the indexes of a table both catalogs hold; a partition's index attached to its
   * parent's is the parent's business.
   *
   * @param b the base's table
   * @param h the head's table
   */
  void indexes(Table b, Table h) {
    for (String name : Differ.union(b.indexes().keySet(), h.indexes().keySet())) {
      Index before = b.indexes().get(name);
      Index after = h.indexes().get(name);
      if ((before == null || before.inherited()) && (after == null || after.inherited())) {
        continue;
      }
      if (released(b, h)
          && before != null
          && after != null
          && before.inherited()
          && before.definition().equals(after.definition())) {
        continue; // DETACH PARTITION keeps the partition's index as its own
      }
      if (before != null
          && after != null
          && !before.inherited()
          && after.inherited()
          && before.definition().equals(after.definition())
          && parentIndexMade(h, after)) {
        continue; // the partition's own index is reused: the parent's new index attaches it
      }
      if (before != null && before.inherited()) {
        before = null;
      }
      if (after != null && after.inherited()) {
        after = null;
      }
      if (before == null) {
        addedIndex(
            plan.change(h.name(), Kind.INDEX, name, Action.ADDED, null, after.shape()),
            b,
            h,
            after);
      } else if (after == null) {
        droppedIndex(h, name, before, moved("index", b, name));
      } else if (!before.sameAs(after)) {
        Pending p =
            plan.change(h.name(), Kind.INDEX, name, Action.CHANGED, before.shape(), after.shape());
        if (!moved("index", b, name)) {
          p.sql(Phase.DROP_INDEX, "DROP INDEX " + before.sqlName() + ";");
        }
        addedIndex(p, b, h, after);
      }
    }
  }

  /**
   * A dropped index: a plain {@code DROP INDEX} holds an ACCESS EXCLUSIVE lock on the table, so
   * {@code --online} drops it {@code CONCURRENTLY}; an index on a partitioned table cannot be.
   */
  private void droppedIndex(Table h, String name, Index before, boolean movedBySwap) {
    Pending p = plan.change(h.name(), Kind.INDEX, name, Action.DROPPED, before.shape(), null);
    if (h.partitionKey() != null) {
      p.because(
          Risk.LOCKING,
          "index dropped: takes an ACCESS EXCLUSIVE lock on the table and its partitions (an"
              + " index of a partitioned table cannot be dropped CONCURRENTLY); queries that used"
              + " it may slow down");
    } else if (plan.online) {
      p.online = "DROP INDEX CONCURRENTLY, outside a transaction (SHARE UPDATE EXCLUSIVE)";
      p.because(
          Risk.SAFE,
          "index dropped CONCURRENTLY: reads and writes go on; queries that used it may slow down");
    } else {
      p.online = "DROP INDEX CONCURRENTLY, outside a transaction (SHARE UPDATE EXCLUSIVE)";
      p.because(
          Risk.LOCKING,
          "index dropped: DROP INDEX takes an ACCESS EXCLUSIVE lock on the table, waiting behind"
              + " running queries and blocking all others; use DROP INDEX CONCURRENTLY (--online);"
              + " queries that used it may slow down");
    }
    if (movedBySwap) {
      p.online = null;
      return; // dropped before the enum swap (SwapDependents)
    }
    p.sql(
        Phase.DROP_INDEX,
        "DROP INDEX "
            + (plan.online && h.partitionKey() == null ? "CONCURRENTLY " : "")
            + before.sqlName()
            + ";");
  }

  private void addedIndex(Pending p, Table b, Table h, Index i) {
    boolean partitioned = h.partitionKey() != null;
    // A partitioned parent's index cannot be built CONCURRENTLY; its partitions' indexes can.
    boolean concurrent = plan.online || (!partitioned && i.builtConcurrently());
    if (!concurrent) {
      p.online =
          partitioned
              ? "CREATE INDEX ON ONLY the parent, each partition's index CONCURRENTLY outside a"
                  + " transaction (SHARE UPDATE EXCLUSIVE), then ALTER INDEX ... ATTACH PARTITION"
              : "CREATE INDEX CONCURRENTLY, outside a transaction (SHARE UPDATE EXCLUSIVE)";
    }
    String implied = i.unique() ? impliedBy(b, i.keyColumns(), false, i.definition()) : null;
    String built =
        partitioned ? "built CONCURRENTLY on each partition, then attached" : "built CONCURRENTLY";
    if (implied != null) {
      p.because(
          concurrent ? Risk.SAFE : Risk.LOCKING,
          "unique key added on existing data, but the base's "
              + implied
              + " already keeps those rows unique, so it cannot fail"
              + (concurrent
                  ? "; " + built
                  : "; blocks writes to `" + h.name() + "` while it builds"));
    } else if (i.unique()) {
      p.because(
          Risk.DESTRUCTIVE,
          "unique key added on existing data: fails when rows hold duplicates"
              + (concurrent ? "" : ", and blocks writes to `" + h.name() + "` while it builds"));
    } else if (concurrent) {
      p.because(Risk.SAFE, built + ": reads and writes go on while it builds");
    } else {
      p.because(
          Risk.LOCKING,
          "CREATE INDEX without CONCURRENTLY on an existing table: blocks writes to `"
              + h.name()
              + "` while it builds"
              + (partitioned
                  ? "; use --online (each partition's index CONCURRENTLY, then attached)"
                  : "; use CREATE INDEX CONCURRENTLY"));
    }
    if (partitioned) {
      p.sql(Phase.CREATE_INDEX, i.definition() + ";");
      partitionIndexes(p, h, i, concurrent);
    } else {
      p.sql(Phase.CREATE_INDEX, (concurrent ? concurrently(i.definition()) : i.definition()) + ";");
    }
  }

  /**
   * Builds a new partitioned index on every partition and attaches it, which is what {@code CREATE
   * INDEX} on the parent does, spelled out: each partition's index gets the head's name, a
   * partition's own index of the same name and definition is attached instead of built (a plain
   * {@code CREATE INDEX} on the parent would attach whichever matching index it finds first), and
   * with {@code --online} each is built {@code CONCURRENTLY}. Once every partition's index is
   * attached, PostgreSQL marks the parent's index valid. Every partition the head has is a
   * partition by then: partitions are attached before indexes are made.
   *
   * @param p the parent index's change
   * @param h the head's partitioned table
   * @param i the head's index on it
   * @param concurrent whether to build the partitions' indexes concurrently
   */
  private void partitionIndexes(Pending p, Table h, Index i, boolean concurrent) {
    for (Table child : head.tables().values()) {
      if (!child.isPartition() || !child.parents().equals(List.of(h.name()))) {
        continue;
      }
      for (Index ci : child.indexes().values()) {
        if (!ci.inherited() || !i.name().equals(ci.parent())) {
          continue;
        }
        Table bc = base.tables().get(child.name());
        Index own = bc == null ? null : bc.indexes().get(ci.name());
        boolean reuse = own != null && !own.inherited() && own.definition().equals(ci.definition());
        if (!reuse && child.partitionKey() != null) {
          p.sql(Phase.CREATE_INDEX, ci.definition() + ";");
          partitionIndexes(p, child, ci, concurrent);
        } else if (!reuse) {
          p.sql(
              Phase.CREATE_INDEX,
              (concurrent ? concurrently(ci.definition()) : ci.definition()) + ";");
        }
        p.sql(
            Phase.CREATE_INDEX,
            "ALTER INDEX " + i.sqlName() + " ATTACH PARTITION " + ci.sqlName() + ";");
      }
    }
  }

  /**
   * Whether a partition's attached index hangs on a parent index that this plan makes (new, or
   * changed and so made again), so that {@link #partitionIndexes} attaches it.
   */
  private boolean parentIndexMade(Table h, Index attached) {
    if (!h.isPartition() || attached.parent() == null) {
      return false;
    }
    Table parent = head.tables().get(h.parents().get(0));
    Table baseParent = base.tables().get(h.parents().get(0));
    Index made = parent == null ? null : parent.indexes().get(attached.parent());
    if (made == null || made.inherited()) {
      return false;
    }
    Index was = baseParent == null ? null : baseParent.indexes().get(attached.parent());
    return was == null || was.inherited() || !was.sameAs(made);
  }

  /**
   * The statements of a new table's index: on a partitioned table, the index {@code ON ONLY} the
   * parent, then each partition's built and attached ({@link #partitionIndexes}); else the index.
   *
   * @param p the index's change
   * @param h the head's new table
   * @param i its index, not attached to a parent's
   */
  void newTableIndex(Pending p, Table h, Index i) {
    p.sql(Phase.CREATE_INDEX, i.definition() + ";");
    if (h.partitionKey() != null) {
      partitionIndexes(p, h, i, false);
    }
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
}
