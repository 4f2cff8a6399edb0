package dev.ledger.diff;

import dev.ledger.diff.Change.Action;
import dev.ledger.diff.Change.Kind;
import dev.ledger.diff.Plan.Pending;
import dev.ledger.diff.Plan.Phase;
import dev.ledger.diff.SchemaCatalog.Column;
import dev.ledger.diff.SchemaCatalog.Constraint;
import dev.ledger.diff.SchemaCatalog.ConstraintKind;
import dev.ledger.diff.SchemaCatalog.Index;
import dev.ledger.diff.SchemaCatalog.Sequence;
import dev.ledger.diff.SchemaCatalog.Table;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * A table whose partitioning changes (a plain table becoming partitioned, a partition key changing,
 * a partitioned table becoming plain), which PostgreSQL cannot do in place, made again with its
 * rows: the old table (and its partitions and indexes) renamed aside, the head's table made under
 * the real name with its partitions, constraints and indexes, every row copied into it, the old
 * table dropped. Views, triggers, policies, comments and grants on it are dropped and made again
 * ({@link ItemDiffer}); foreign keys of other tables pointing at it are dropped before and added
 * again after; sequences its columns own are released and owned again; an identity column's
 * sequence keeps its position. The script must run in one transaction, so that no one sees the
 * table half made.
 *
 * <p>Each rebuild also gives a {@link RowCheck}: sample rows written into the base's table on the
 * scratch schema before the script runs, and found again afterwards, each in the partition its key
 * belongs to. Not thread-safe; one per {@link Differ}.
 */
final class PartitionRebuild {

  /** The suffix of the names the old table, its partitions and indexes are renamed to. */
  static final String OLD = "__ledger_old";

  private static final String NEW_SEQUENCE = "__ledger_new";
  private static final int NAME_BYTES = 63;
  private static final int SAMPLE_ROWS = 4;

  private final SchemaCatalog base;
  private final SchemaCatalog head;
  private final Plan plan;
  private final KeyDiffer keys;

  /** The rebuilt tables (roots) to the tables of both trees, root first. */
  private final Map<String, Set<String>> trees = new TreeMap<>();

  private final List<RowCheck> rowChecks = new ArrayList<>();

  /**
   * Sample rows that check a rebuild's copy on the scratch schema.
   *
   * @param table the rebuilt table's normalised name
   * @param sqlName its name as SQL writes it (the same before and after the script)
   * @param inserts the statements that write the sample rows into the base's table, before the
   *     script; empty when no row can be made that the head's partitions accept
   * @param columns the columns compared before and after, as SQL writes them: those both sides have
   *     with the same type
   * @param placements where rows must be found after the script
   * @param note why there are no sample rows, or null
   */
  record RowCheck(
      String table,
      String sqlName,
      List<String> inserts,
      List<String> columns,
      List<Placement> placements,
      String note) {

    /** Copies the lists. */
    RowCheck {
      inserts = List.copyOf(inserts);
      columns = List.copyOf(columns);
      placements = List.copyOf(placements);
    }
  }

  /**
   * A partition every row matching a condition must be in after the copy.
   *
   * @param partition the partition's normalised name
   * @param sqlName as SQL writes it
   * @param condition a condition on the rebuilt table's columns, e.g. {@code "at" = '2025-01-01'}
   */
  record Placement(String partition, String sqlName, String condition) {}

  PartitionRebuild(SchemaCatalog base, SchemaCatalog head, Plan plan, KeyDiffer keys) {
    this.base = base;
    this.head = head;
    this.plan = plan;
    this.keys = keys;
    for (Table b : base.tables().values()) {
      Table h = head.tables().get(b.name());
      if (h != null && !Objects.equals(b.partitionKey(), h.partitionKey())) {
        Set<String> tree = tree(b, h);
        if (tree != null) {
          trees.put(b.name(), tree);
        }
      }
    }
  }

  /**
   * Whether a table is rebuilt here: the root, or a table of its base's or head's tree.
   *
   * @param name a table's normalised name
   * @return true when the table is not the table differ's business
   */
  boolean handles(String name) {
    return trees.values().stream().anyMatch(t -> t.contains(name));
  }

  /**
   * Whether a table is the root of a rebuild.
   *
   * @param name a table's normalised name
   * @return true when its partitioning changes and this plan makes it again
   */
  boolean isRoot(String name) {
    return trees.containsKey(name);
  }

  /**
   * The tables of every rebuild: what the items on them (triggers, comments, grants...) and using
   * them (views) are made again around.
   *
   * @return the normalised names
   */
  Set<String> tables() {
    Set<String> all = new TreeSet<>();
    trees.values().forEach(all::addAll);
    return all;
  }

  /**
   * The row checks of every rebuild planned so far.
   *
   * @return the checks
   */
  List<RowCheck> rowChecks() {
    return List.copyOf(rowChecks);
  }

  /**
   * The tables a rebuild of {@code b} into {@code h} makes again, or null when this plan cannot
   * make it (the table stays refused): a partition or an inheritance child itself, in another
   * schema than the default, with inheritance children, or whose trees share tables with other
   * tables.
   */
  private Set<String> tree(Table b, Table h) {
    if (b.isPartition()
        || h.isPartition()
        || !b.parents().isEmpty()
        || !h.parents().isEmpty()
        || b.name().contains(".")
        || tooLong(b.name() + OLD)) {
      return null;
    }
    List<Table> inBase = descendants(base, b.name());
    List<Table> inHead = descendants(head, h.name());
    if (inBase == null || inHead == null) {
      return null;
    }
    Set<String> baseNames =
        inBase.stream().map(Table::name).collect(Collectors.toCollection(TreeSet::new));
    Set<String> headNames =
        inHead.stream().map(Table::name).collect(Collectors.toCollection(TreeSet::new));
    for (Table t : inHead) {
      Table was = base.tables().get(t.name());
      if (was != null && !baseNames.contains(t.name())) {
        return null; // an existing table of its own becomes a partition of the new one
      }
    }
    for (Table t : inBase) {
      Table is = head.tables().get(t.name());
      if (is != null && !headNames.contains(t.name())) {
        return null; // a partition leaves the tree and stays as a table of its own
      }
      if (tooLong(t.name() + OLD)) {
        return null;
      }
    }
    for (Column c : h.columns()) {
      Column was = b.column(c.name()).orElse(null);
      if (c.identity() != null
          && was != null
          && was.identity() != null
          && tooLong(identitySequence(h, c) + NEW_SEQUENCE)) {
        return null;
      }
    }
    Set<String> tree = new LinkedHashSet<>();
    tree.add(b.name());
    tree.addAll(baseNames);
    tree.addAll(headNames);
    return tree;
  }

  /**
   * The table and every table below it (partitions, children), parents first; null with a child.
   */
  private static List<Table> descendants(SchemaCatalog catalog, String root) {
    List<Table> found = new ArrayList<>();
    found.add(catalog.tables().get(root));
    for (int i = 0; i < found.size(); i++) {
      String parent = found.get(i).name();
      for (Table t : catalog.tables().values()) {
        if (t.parents().contains(parent)) {
          if (!t.isPartition() || t.name().contains(".")) {
            return null;
          }
          found.add(t);
        }
      }
    }
    return found;
  }

  private static boolean tooLong(String name) {
    return name.getBytes(StandardCharsets.UTF_8).length > NAME_BYTES;
  }

  /** The name PostgreSQL gives an identity column's sequence on a new table: table_column_seq. */
  private static String identitySequence(Table t, Column c) {
    return t.name() + "_" + c.name() + "_seq";
  }

  /**
   * Plans the rebuild of one table.
   *
   * @param name the root's normalised name ({@link #isRoot})
   */
  void rebuild(String name) {
    Table b = base.tables().get(name);
    Table h = head.tables().get(name);
    Set<String> tree = trees.get(name);
    Pending p =
        plan.change(
            name,
            Kind.TABLE,
            name,
            Action.CHANGED,
            partitioning(b.partitionKey()),
            partitioning(h.partitionKey()));
    RebuildRisk.classify(p, b, h, head, plan.online);
    List<Table> baseTree = tree.stream().map(base.tables()::get).filter(Objects::nonNull).toList();
    List<Table> headTree = tree.stream().map(head.tables()::get).filter(Objects::nonNull).toList();
    moveAside(p, baseTree);
    Table made = withIdentitySequences(b, h);
    p.sql(Phase.CREATE_TABLE, 0, Differ.createTable(made));
    for (Table t : headTree) {
      if (t.name().equals(name)) {
        continue;
      }
      Pending q =
          plan.change(
                  name,
                  Kind.TABLE,
                  t.name(),
                  base.tables().containsKey(t.name()) ? Action.CHANGED : Action.ADDED,
                  base.tables().containsKey(t.name())
                      ? parentage(base.tables().get(t.name()))
                      : null,
                  parentage(t))
              .because(
                  Risk.SAFE, "partition of the rebuilt table `" + name + "`: made with it, empty");
      q.sql(Phase.CREATE_TABLE, depth(t), Differ.createTable(t));
      if (Differ.attachesAfterCreate(t)) {
        q.sql(Phase.CREATE_TABLE, depth(t), Differ.attach(t));
      }
      partsOf(q, t);
    }
    for (Table t : baseTree) {
      if (!t.name().equals(name) && !head.tables().containsKey(t.name())) {
        plan.change(name, Kind.TABLE, t.name(), Action.DROPPED, parentage(t), null)
            .because(
                Risk.SAFE,
                "partition of the rebuilt table `"
                    + name
                    + "`: its rows are copied into the new table, then it is dropped with the old");
      }
    }
    partsOf(p, h);
    copy(p, b, h);
    foreignKeysPointingAt(name, tree);
    sequences(p, tree);
    rowChecks.add(RowChecks.of(b, h, base, head, SAMPLE_ROWS));
  }

  private static String partitioning(String key) {
    return key == null ? "not partitioned" : "PARTITION BY " + key;
  }

  private static String parentage(Table t) {
    return t.isPartition() ? "PARTITION OF " + t.parents().get(0) + " " + t.partitionBound() : null;
  }

  private int depth(Table t) {
    int depth = 0;
    Table at = t;
    while (at != null && !at.parents().isEmpty() && depth < 100) {
      depth++;
      at = head.tables().get(at.parents().get(0));
    }
    return depth;
  }

  /** The constraints a table's CREATE TABLE does not state, and its indexes. */
  private void partsOf(Pending p, Table t) {
    for (Constraint c : t.constraints().values()) {
      if (!c.inherited() && !KeyDiffer.inline(c)) {
        p.sql(KeyDiffer.constraintPhase(c), KeyDiffer.addConstraint(t, c));
      }
    }
    for (Index i : t.indexes().values()) {
      if (!i.inherited()) {
        keys.newTableIndex(p, t, i);
      }
    }
  }

  /**
   * Renames the base's table, its partitions and the indexes of all of them aside, so that the
   * head's can be made under their names. Index names are schema-wide; a table's constraint and
   * trigger names are its own and go with it.
   */
  private void moveAside(Pending p, List<Table> baseTree) {
    int n = 0;
    for (Table t : baseTree) {
      p.sql(
          Phase.MOVE_ASIDE,
          n++,
          "ALTER TABLE " + t.sqlName() + " RENAME TO " + Sql.quoteIdentifier(t.name() + OLD) + ";");
    }
    Set<String> indexes = new TreeSet<>();
    Map<String, String> sqlNames = new LinkedHashMap<>();
    for (Table t : baseTree) {
      for (Constraint c : t.constraints().values()) {
        if (c.kind() == ConstraintKind.PRIMARY_KEY
            || c.kind() == ConstraintKind.UNIQUE
            || c.kind() == ConstraintKind.EXCLUSION) {
          indexes.add(c.name());
          sqlNames.put(c.name(), c.sqlName());
        }
      }
      for (Index i : t.indexes().values()) {
        indexes.add(i.name());
        sqlNames.put(i.name(), i.sqlName());
      }
    }
    int k = 0;
    for (String index : indexes) {
      String aside = index + OLD;
      if (tooLong(aside)) {
        aside = "ledger_old_" + (k++) + "_" + Integer.toHexString(index.hashCode());
      }
      p.sql(
          Phase.MOVE_ASIDE,
          n++,
          "ALTER INDEX " + sqlNames.get(index) + " RENAME TO " + Sql.quoteIdentifier(aside) + ";");
    }
  }

  /**
   * The head's table with each identity column that the base's also has made on a sequence of a
   * passing name (the base's sequence still holds the usual one until the old table is dropped).
   */
  private static Table withIdentitySequences(Table b, Table h) {
    List<Column> columns = new ArrayList<>();
    for (Column c : h.columns()) {
      Column was = b.column(c.name()).orElse(null);
      if (c.identity() != null && was != null && was.identity() != null) {
        String options =
            "SEQUENCE NAME "
                + Sql.quoteIdentifier(identitySequence(h, c) + NEW_SEQUENCE)
                + (c.identityOptions() == null || c.identityOptions().isEmpty()
                    ? ""
                    : " " + c.identityOptions());
        columns.add(
            new Column(
                c.name(),
                c.sqlName(),
                c.type(),
                c.collation(),
                c.notNull(),
                c.defaultExpression(),
                c.identity(),
                c.generatedExpression(),
                options,
                c.identitySequence(),
                c.inherited(),
                c.volatileDefault()));
      } else {
        columns.add(c);
      }
    }
    return new Table(
        h.name(),
        h.sqlName(),
        columns,
        h.constraints(),
        h.indexes(),
        h.partitionKey(),
        h.parents(),
        h.parentsSql(),
        h.partitionBound());
  }

  /** Copies the rows, carries identity sequences on, drops the old table. */
  private static void copy(Pending p, Table b, Table h) {
    List<String> copied = new ArrayList<>();
    boolean overriding = false;
    for (Column c : h.columns()) {
      Column was = b.column(c.name()).orElse(null);
      if (was != null && c.generatedExpression() == null) {
        copied.add(c.sqlName());
        overriding |= "ALWAYS".equals(c.identity());
      }
    }
    String old = Sql.quoteIdentifier(b.name() + OLD);
    int n = 0;
    if (!copied.isEmpty()) {
      String columns = String.join(", ", copied);
      p.sql(
          Phase.COPY_ROWS,
          n++,
          "INSERT INTO "
              + h.sqlName()
              + " ("
              + columns
              + ")"
              + (overriding ? " OVERRIDING SYSTEM VALUE" : "")
              + " SELECT "
              + columns
              + " FROM "
              + old
              + ";");
    }
    List<String> renames = new ArrayList<>();
    for (Column c : h.columns()) {
      Column was = b.column(c.name()).orElse(null);
      if (c.identity() == null || was == null || was.identity() == null) {
        continue;
      }
      String passing = Sql.quoteIdentifier(identitySequence(h, c) + NEW_SEQUENCE);
      p.sql(
          Phase.COPY_ROWS,
          n++,
          "SELECT setval("
              + Sql.literal(passing)
              + ", v) FROM (SELECT pg_sequence_last_value(pg_get_serial_sequence("
              + Sql.literal(old)
              + ", "
              + Sql.literal(c.name())
              + ")::regclass) AS v) AS s WHERE v IS NOT NULL;");
      renames.add(
          "ALTER SEQUENCE "
              + passing
              + " RENAME TO "
              + Sql.quoteIdentifier(identitySequence(h, c))
              + ";");
    }
    p.sql(Phase.COPY_ROWS, n++, "DROP TABLE " + old + ";");
    for (String rename : renames) {
      p.sql(Phase.COPY_ROWS, n++, rename);
    }
  }

  /**
   * Foreign keys of other tables that point into the rebuilt tables and that the head keeps as they
   * are: dropped before the old table goes, added again (and validated) once the new one holds the
   * rows. A key the head changes or drops is the key differ's.
   */
  private void foreignKeysPointingAt(String root, Set<String> tree) {
    for (Table o : base.tables().values()) {
      Table now = head.tables().get(o.name());
      if (tree.contains(o.name()) || now == null) {
        continue;
      }
      for (Constraint c : o.constraints().values()) {
        Constraint kept = now.constraints().get(c.name());
        if (c.kind() != ConstraintKind.FOREIGN_KEY
            || c.inherited()
            || !tree.contains(c.referencedTable())
            || kept == null
            || !kept.equals(c)) {
          continue;
        }
        plan.change(
                o.name(), Kind.CONSTRAINT, c.name(), Action.CHANGED, c.definition(), c.definition())
            .because(
                Risk.LOCKING,
                "dropped and added again around the rebuild of `"
                    + root
                    + "`: dropping it takes a brief ACCESS EXCLUSIVE lock on `"
                    + o.name()
                    + "`, adding it checks every row of `"
                    + o.name()
                    + "` under a SHARE ROW EXCLUSIVE lock on both tables (the rows were valid, so it"
                    + " cannot fail)")
            .sql(Phase.DROP_FOREIGN_KEY, KeyDiffer.dropConstraint(o, c))
            .sql(Phase.ADD_FOREIGN_KEY, KeyDiffer.addConstraint(now, c));
      }
    }
  }

  /**
   * Sequences the rebuilt table's columns own in both catalogs ({@code serial}): released before
   * the old table is dropped (which would drop them), owned again by the new table's column.
   */
  private void sequences(Pending p, Set<String> tree) {
    for (Sequence s : base.sequences().values()) {
      Sequence now = head.sequences().get(s.name());
      if (s.ownedByTable() == null
          || !tree.contains(s.ownedByTable())
          || now == null
          || !Objects.equals(s.ownedBySql(), now.ownedBySql())) {
        continue;
      }
      p.sql(Phase.RELEASE_SEQUENCE, "ALTER SEQUENCE " + s.sqlName() + " OWNED BY NONE;")
          .sql(
              Phase.OWN_SEQUENCE,
              "ALTER SEQUENCE " + s.sqlName() + " OWNED BY " + now.ownedBySql() + ";");
    }
  }
}
