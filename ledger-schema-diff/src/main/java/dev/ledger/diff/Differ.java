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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Compares two catalogs into a {@link CatalogDiff}: the changes, their risks, the script. Tables
 * are compared here; their columns by {@link ColumnDiffer}, their keys and indexes by {@link
 * KeyDiffer}, sequences and schemas by {@link SequenceDiffer}, every other object by {@link
 * ItemDiffer}. Not thread-safe; one diff per instance.
 */
final class Differ {

  private static final String PART_OF_NEW_TABLE = "part of a new table";

  private final SchemaCatalog base;
  private final SchemaCatalog head;
  private final Plan plan;
  private final ColumnDiffer columns;
  private final KeyDiffer keys;
  private final SequenceDiffer sequences;
  private final PartitionRebuild rebuild;

  Differ(SchemaCatalog base, SchemaCatalog head, boolean online) {
    this(base, head, online, Map.of());
  }

  /**
   * A differ with the author's conversions of retyped columns.
   *
   * @param base the base catalog
   * @param head the head catalog
   * @param online whether to plan online
   * @param using {@code table.column} to its {@code USING} expression ({@code --using})
   */
  Differ(SchemaCatalog base, SchemaCatalog head, boolean online, Map<String, String> using) {
    this.base = base;
    this.head = head;
    this.plan = new Plan(online, using);
    this.columns = new ColumnDiffer(base, head, plan);
    this.keys = new KeyDiffer(base, head, plan);
    this.sequences = new SequenceDiffer(base, head, plan);
    this.rebuild = new PartitionRebuild(base, head, plan, keys);
  }

  CatalogDiff diff() {
    Map<String, List<String>> sequencesByTable = new HashMap<>();
    List<String> unownedSequences = new ArrayList<>();
    for (String name : union(base.sequences().keySet(), head.sequences().keySet())) {
      String owner = sequences.sequenceOwner(name);
      if (owner == null) {
        unownedSequences.add(name);
      } else {
        sequencesByTable.computeIfAbsent(owner, k -> new ArrayList<>()).add(name);
      }
    }
    Map<String, Integer> dropRanks = dropRanks();
    // the indexes and checks an enum swap drops and makes again itself (SwapDependents)
    Set<String> moved = new HashSet<>();
    EnumChange.swaps(base, head).values().forEach(c -> moved.addAll(c.dependents().movedKeys()));
    keys.movedBySwap(moved);
    for (String name : union(base.tables().keySet(), head.tables().keySet())) {
      Table b = base.tables().get(name);
      Table h = head.tables().get(name);
      if (rebuild.isRoot(name)) {
        rebuild.rebuild(name);
      } else if (rebuild.handles(name)) {
        // a partition of a rebuilt table: made or dropped with it
      } else if (b == null) {
        addedTable(h);
      } else if (h == null) {
        droppedTable(b, dropRanks.get(name));
      } else {
        changedTable(b, h);
      }
      sequencesByTable.getOrDefault(name, List.of()).forEach(sequences::sequence);
    }
    unownedSequences.forEach(sequences::sequence);
    for (String name : union(base.schemas().keySet(), head.schemas().keySet())) {
      sequences.schema(name);
    }
    new ItemDiffer(base, head, plan, changedColumns(), rebuild.tables()).diff();
    return plan.build(rebuild.rowChecks());
  }

  /**
   * The base's columns ({@code table:column}) that the head drops or whose type, collation or
   * generation changes (or whose enum is swapped for a new type), and the tables it drops: what a
   * view or policy using them must be dropped and re-created around.
   */
  private Set<String> changedColumns() {
    Set<String> changed = new HashSet<>();
    for (Table b : base.tables().values()) {
      Table h = head.tables().get(b.name());
      if (h == null || rebuild.handles(b.name())) {
        changed.add(b.name());
        b.columns().forEach(c -> changed.add(b.name() + ":" + c.name()));
        continue;
      }
      for (Column c : b.columns()) {
        Column a = h.column(c.name()).orElse(null);
        if (a == null
            || !a.type().equals(c.type())
            || !Objects.equals(a.collation(), c.collation())
            || !Objects.equals(a.generatedExpression(), c.generatedExpression())) {
          changed.add(b.name() + ":" + c.name());
        }
      }
    }
    // A column of an enum or composite type swapped for a new type changes type for a moment
    // (EnumChange, CompositeChange.swap).
    for (SchemaCatalog.Item b : base.items().values()) {
      SchemaCatalog.Item h = head.items().get(b.key());
      if (h != null
          && b.kind() == h.kind()
          && (b.kind() == Kind.ENUM || b.kind() == Kind.COMPOSITE_TYPE)) {
        changed.addAll(EnumChange.convertedColumns(b, h, base, head));
      }
    }
    return changed;
  }

  // ---- tables

  private void addedTable(Table h) {
    Pending table =
        plan.change(h.name(), Kind.TABLE, h.name(), Action.ADDED, null, columnCount(h))
            .because(Risk.SAFE, "new table")
            .sql(Phase.CREATE_TABLE, depth(h, head), createTable(h));
    if (attachesAfterCreate(h)) {
      table.sql(Phase.CREATE_TABLE, depth(h, head), attach(h));
    }
    for (Column c : h.columns()) {
      if (!c.inherited()) {
        plan.change(h.name(), Kind.COLUMN, c.name(), Action.ADDED, null, c.definition())
            .because(Risk.SAFE, PART_OF_NEW_TABLE);
      }
    }
    for (Constraint c : h.constraints().values()) {
      if (c.inherited()) {
        continue;
      }
      Pending p =
          plan.change(h.name(), Kind.CONSTRAINT, c.name(), Action.ADDED, null, c.definition())
              .because(Risk.SAFE, PART_OF_NEW_TABLE);
      if (!inlineIn(h, c)) {
        p.sql(KeyDiffer.constraintPhase(c), KeyDiffer.addConstraint(h, c));
      }
    }
    for (Index i : h.indexes().values()) {
      if (i.inherited()) {
        continue;
      }
      keys.newTableIndex(
          plan.change(h.name(), Kind.INDEX, i.name(), Action.ADDED, null, i.shape())
              .because(Risk.SAFE, PART_OF_NEW_TABLE),
          h,
          i);
    }
  }

  private void droppedTable(Table b, int rank) {
    Pending p =
        plan.change(b.name(), Kind.TABLE, b.name(), Action.DROPPED, columnCount(b), null)
            .because(Risk.DESTRUCTIVE, "dropped table: its rows are lost")
            .sql(Phase.DROP_TABLE, rank, "DROP TABLE " + b.sqlName() + ";");
    // Foreign keys between dropped tables go first, so a cycle of them cannot block the drops.
    for (Constraint c : b.constraints().values()) {
      if (c.kind() == ConstraintKind.FOREIGN_KEY
          && !c.inherited()
          && c.referencedTable() != null
          && !c.referencedTable().equals(b.name())
          && base.tables().containsKey(c.referencedTable())
          && !head.tables().containsKey(c.referencedTable())) {
        p.sql(Phase.DROP_FOREIGN_KEY, KeyDiffer.dropConstraint(b, c));
      }
    }
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
    if (!Objects.equals(b.partitionKey(), h.partitionKey())) {
      plan.change(
              h.name(),
              Kind.TABLE,
              h.name(),
              Action.CHANGED,
              partitioning(b.partitionKey()),
              partitioning(h.partitionKey()))
          .because(Risk.DESTRUCTIVE, "partitioning changed")
          .refuse(
              "PostgreSQL cannot change how a table is partitioned: make a new table and copy the"
                  + " rows");
    }
    if (!b.parents().equals(h.parents())
        || !Objects.equals(b.partitionBound(), h.partitionBound())) {
      Pending p =
          plan.change(h.name(), Kind.TABLE, h.name(), Action.CHANGED, parentage(b), parentage(h));
      if (b.isPartition()) {
        p.sql(
            Phase.DETACH_PARTITION,
            "ALTER TABLE " + b.parentsSql().get(0) + " DETACH PARTITION " + b.sqlName() + ";");
      } else {
        for (int i = 0; i < b.parents().size(); i++) {
          if (!h.parents().contains(b.parents().get(i))) {
            p.sql(
                Phase.DETACH_PARTITION,
                "ALTER TABLE " + b.sqlName() + " NO INHERIT " + b.parentsSql().get(i) + ";");
          }
        }
      }
      if (h.isPartition()) {
        p.sql(Phase.ADD_CONSTRAINT, -1, attach(h))
            .because(
                Risk.LOCKING,
                "partition attached: scans its rows for the bound unless a CHECK implies it;"
                    + " takes a SHARE UPDATE EXCLUSIVE lock on the parent");
      } else {
        for (int i = 0; i < h.parents().size(); i++) {
          if (!b.parents().contains(h.parents().get(i))) {
            p.sql(
                Phase.ADD_CONSTRAINT,
                -1,
                "ALTER TABLE " + h.sqlName() + " INHERIT " + h.parentsSql().get(i) + ";");
          }
        }
      }
      if (!h.isPartition()) {
        p.because(Risk.SAFE, "parents changed: catalog only (an ACCESS EXCLUSIVE lock, briefly)");
      }
      if (b.isPartition() && !h.isPartition()) {
        p.because(
            Risk.LOCKING,
            "partition detached: its rows leave the parent; DETACH PARTITION takes an ACCESS"
                + " EXCLUSIVE lock on the parent and the partition; instead: DETACH PARTITION ..."
                + " CONCURRENTLY (SHARE UPDATE EXCLUSIVE, outside a transaction, not while the"
                + " parent has a default partition)");
      }
    }
    columns.columns(b, h);
    keys.constraints(b, h);
    keys.indexes(b, h);
  }

  private static String partitioning(String key) {
    return key == null ? "not partitioned" : "PARTITION BY " + key;
  }

  private static String parentage(Table t) {
    if (t.isPartition()) {
      return "PARTITION OF " + t.parents().get(0) + " " + t.partitionBound();
    }
    return t.parents().isEmpty()
        ? "no parents"
        : "INHERITS (" + String.join(", ", t.parents()) + ")";
  }

  // ---- helpers

  /** How many ancestors a table has in a catalog: parents are created before their children. */
  private static int depth(Table t, SchemaCatalog catalog) {
    int depth = 0;
    Set<String> seen = new HashSet<>();
    Table at = t;
    while (at != null && !at.parents().isEmpty() && seen.add(at.name())) {
      depth++;
      at = catalog.tables().get(at.parents().get(0));
    }
    return depth;
  }

  /**
   * The order to drop the base's dropped tables in: a table that references another dropped table,
   * and a child of another dropped table, goes before it.
   */
  private Map<String, Integer> dropRanks() {
    Set<String> dropped = new TreeSet<>(base.tables().keySet());
    dropped.removeAll(head.tables().keySet());
    Map<String, Set<String>> referencedBy = new TreeMap<>();
    for (String name : dropped) {
      Table t = base.tables().get(name);
      for (Constraint c : t.constraints().values()) {
        if (c.referencedTable() != null
            && dropped.contains(c.referencedTable())
            && !c.referencedTable().equals(name)) {
          referencedBy.computeIfAbsent(c.referencedTable(), k -> new TreeSet<>()).add(name);
        }
      }
      for (String parent : t.parents()) {
        if (dropped.contains(parent)) {
          referencedBy.computeIfAbsent(parent, k -> new TreeSet<>()).add(name);
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

  /**
   * Whether a partition is made as a table of its own and attached afterwards: when its columns are
   * its own ({@code attislocal}), as after {@code ATTACH PARTITION}; {@code PARTITION OF} makes
   * them the parent's.
   */
  static boolean attachesAfterCreate(Table t) {
    return t.isPartition() && t.columns().stream().anyMatch(c -> !c.inherited());
  }

  static String attach(Table t) {
    return "ALTER TABLE "
        + t.parentsSql().get(0)
        + " ATTACH PARTITION "
        + t.sqlName()
        + " "
        + t.partitionBound()
        + ";";
  }

  private static boolean inlineIn(Table t, Constraint c) {
    return KeyDiffer.inline(c) && !(t.isPartition() && !attachesAfterCreate(t));
  }

  /**
   * The statement that makes a table with its own columns and the constraints it states inline; a
   * partition made {@code PARTITION OF} its parent, a child {@code INHERITS} its parents.
   *
   * @param t the table
   * @return {@code CREATE TABLE ...;}
   */
  static String createTable(Table t) {
    String partitionBy = t.partitionKey() == null ? "" : " PARTITION BY " + t.partitionKey();
    if (t.isPartition() && !attachesAfterCreate(t)) {
      return "CREATE TABLE "
          + t.sqlName()
          + " PARTITION OF "
          + t.parentsSql().get(0)
          + " "
          + t.partitionBound()
          + partitionBy
          + ";";
    }
    List<String> items = new ArrayList<>();
    for (Column c : t.columns()) {
      if (!c.inherited()) {
        items.add(c.sqlName() + " " + c.definition());
      }
    }
    for (Constraint c : t.constraints().values()) {
      if (KeyDiffer.inline(c) && !c.inherited()) {
        items.add("CONSTRAINT " + c.sqlName() + " " + c.definition());
      }
    }
    String inherits =
        t.isPartition() || t.parents().isEmpty()
            ? ""
            : " INHERITS (" + String.join(", ", t.parentsSql()) + ")";
    if (items.isEmpty()) {
      return "CREATE TABLE " + t.sqlName() + " ()" + inherits + partitionBy + ";";
    }
    return "CREATE TABLE "
        + t.sqlName()
        + " (\n"
        + items.stream().map(i -> "    " + i).collect(Collectors.joining(",\n"))
        + "\n)"
        + inherits
        + partitionBy
        + ";";
  }

  private static String columnCount(Table t) {
    return t.columns().size() + (t.columns().size() == 1 ? " column" : " columns");
  }

  private static List<String> signature(Table t) {
    return t.columns().stream().map(c -> c.name() + " " + c.type()).toList();
  }

  /**
   * The names of both sets, sorted.
   *
   * @param a one set
   * @param b the other
   * @return the sorted union
   */
  static List<String> union(Set<String> a, Set<String> b) {
    TreeSet<String> all = new TreeSet<>(a);
    all.addAll(b);
    return new ArrayList<>(all);
  }
}
