package dev.ledger.diff;

import dev.ledger.diff.Change.Action;
import dev.ledger.diff.Change.Kind;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The changes of one diff while they are built, and the statements of each, placed in script
 * phases. Not thread-safe: one {@link Differ} fills it.
 */
final class Plan {

  /**
   * When a statement runs in the script; see {@link CatalogDiff}. Objects other than tables come in
   * two groups: those that tables may use (extensions, collations, types, functions that use no
   * table) are created before the tables and dropped after them; those that use tables (views,
   * triggers, policies, comments, grants, functions that use a table) are dropped first and created
   * last.
   */
  enum Phase {
    CREATE_SCHEMA,
    DROP_DEPENDENT,
    RELEASE_SEQUENCE,
    CREATE_EARLY,
    ALTER_EARLY,
    DROP_IDENTITY,
    CREATE_SEQUENCE,
    ALTER_SEQUENCE,
    DROP_FOREIGN_KEY,
    DROP_CONSTRAINT,
    DROP_INDEX,
    DETACH_PARTITION,
    MOVE_ASIDE,
    DROP_TABLE,
    CREATE_TABLE,
    COPY_ROWS,
    ADD_COLUMN,
    ALTER_COLUMN,
    ADD_CONSTRAINT,
    CREATE_INDEX,
    ADD_FOREIGN_KEY,
    OWN_SEQUENCE,
    DROP_COLUMN,
    DROP_SEQUENCE,
    CREATE_DEPENDENT,
    DECORATE,
    DROP_EARLY,
    DROP_SCHEMA
  }

  /** One statement of a change, where it runs. */
  record Step(Phase phase, int rank, int order, String sql, Pending owner) {}

  static final Comparator<Step> SCRIPT_ORDER =
      Comparator.comparing(Step::phase).thenComparingInt(Step::rank).thenComparingInt(Step::order);

  private final List<Pending> changes = new ArrayList<>();
  private int nextOrder;

  /** Whether to print the online plan ({@code --online}). */
  final boolean online;

  /**
   * The author's conversions of columns whose type changes ({@code --using}): {@code table.column}
   * (names as the report prints them) to the {@code USING} expression.
   */
  final Map<String, String> using;

  Plan(boolean online) {
    this(online, Map.of());
  }

  Plan(boolean online, Map<String, String> using) {
    this.online = online;
    this.using = Map.copyOf(using);
  }

  /** A change being built, and its statements. */
  final class Pending {
    final String table;
    final Kind kind;
    final String name;
    final Action action;
    final String before;
    final String after;
    Risk risk = Risk.SAFE;
    final List<String> reasons = new ArrayList<>();
    String hint;
    String refusal;
    String online;
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

    /** Marks the change as one the tool cannot make: its SQL is not printed as a migration. */
    Pending refuse(String why) {
      refusal = refusal == null ? why : refusal + "; " + why;
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
      List<String> sql = steps.stream().sorted(SCRIPT_ORDER).map(Step::sql).toList();
      boolean onNewObject =
          action == Action.ADDED
              && (reasons.contains("new table")
                  || reasons.contains("part of a new table")
                  || (kind != Kind.COLUMN
                      && kind != Kind.CONSTRAINT
                      && kind != Kind.INDEX
                      && kind != Kind.TRIGGER
                      && kind != Kind.RULE
                      && kind != Kind.POLICY
                      && kind != Kind.ROW_SECURITY
                      && kind != Kind.REPLICA_IDENTITY
                      && kind != Kind.TABLE_STORAGE
                      && kind != Kind.STATISTICS));
      String lock = onNewObject ? null : Locks.strongest(sql);
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
          sql,
          refusal,
          lock,
          risk == Risk.SAFE && !Plan.this.online ? null : online);
    }
  }

  Pending change(String table, Kind kind, String name, Action action, String before, String after) {
    return new Pending(table, kind, name, action, before, after);
  }

  /**
   * The diff: every change, and the script in phase order.
   *
   * @return the diff
   */
  CatalogDiff build() {
    return build(List.of());
  }

  /**
   * The diff, with the row checks of its table rebuilds.
   *
   * @param rowChecks the sample rows that check each rebuild's copy
   * @return the diff
   */
  CatalogDiff build(List<PartitionRebuild.RowCheck> rowChecks) {
    Map<Pending, Change> built = new IdentityHashMap<>();
    changes.forEach(p -> built.put(p, p.build()));
    List<CatalogDiff.Statement> script =
        changes.stream()
            .flatMap(p -> p.steps.stream())
            .sorted(SCRIPT_ORDER)
            .map(step -> new CatalogDiff.Statement(step.sql(), built.get(step.owner())))
            .toList();
    return new CatalogDiff(changes.stream().map(built::get).toList(), script, rowChecks);
  }
}
