package dev.ledger.diff;

import dev.ledger.diff.Plan.Pending;
import dev.ledger.diff.SchemaCatalog.Column;
import dev.ledger.diff.SchemaCatalog.Table;
import java.util.ArrayList;
import java.util.List;

/**
 * The class of a {@link PartitionRebuild}: locking for the copy under {@code ACCESS EXCLUSIVE},
 * destructive when a row may not survive it (no partition of the head takes it, a column is
 * dropped, retyped or added {@code NOT NULL} without a default). Stateless.
 */
final class RebuildRisk {

  private RebuildRisk() {}

  /**
   * Gives a rebuild's change its class, reasons and the online column's text.
   *
   * @param p the rebuilt table's change
   * @param b the base's table
   * @param h the head's table
   * @param head the head's catalog
   * @param online whether the online plan is printed
   */
  static void classify(Pending p, Table b, Table h, SchemaCatalog head, boolean online) {
    String name = "`" + b.name() + "`";
    p.because(
        Risk.LOCKING,
        "PostgreSQL cannot change how a table is partitioned in place: the table is rewritten (made"
            + " again and its rows copied) in one transaction (run the script as one: psql"
            + " --single-transaction, or as one migration): "
            + name
            + " is renamed aside (ACCESS EXCLUSIVE on it from then until the transaction commits:"
            + " no reads or writes), the new table is made with the head's partitions, constraints"
            + " and indexes, every row is copied into it (the copy's cost: each row written again,"
            + " with its indexes), the old table is dropped; views, triggers, grants and comments on"
            + " it are made again, foreign keys pointing at it dropped and added again (each"
            + " validated: a scan of the referencing table)");
    if (online) {
      p.because(
          Risk.LOCKING,
          "this plan is not online: there is no online way to partition a table in one step; the"
              + " ACCESS EXCLUSIVE lock is held for the whole copy");
    }
    p.online =
        "not online: there is no online plan for this change; to keep the table usable, make the"
            + " new table yourself, keep it in step with a trigger while rows are copied in"
            + " batches, then swap the names in a short transaction";
    if (h.partitionKey() != null && !acceptsEveryRow(h, head)) {
      p.because(
          Risk.DESTRUCTIVE,
          "a row no partition of the head accepts fails the copy, and the script with it (it rolls"
              + " back): "
              + (hasPartitions(h, head)
                  ? "the head's partitions do not cover every value and it has no DEFAULT"
                      + " partition"
                  : "the head's table has no partition"));
    }
    for (Column c : b.columns()) {
      Column now = h.column(c.name()).orElse(null);
      if (now == null) {
        p.because(Risk.DESTRUCTIVE, "column `" + c.name() + "` is not copied: its values are lost");
      } else if (!now.type().equals(c.type())) {
        p.because(
            Risk.DESTRUCTIVE,
            "column `"
                + c.name()
                + "` is copied from "
                + c.type()
                + " to "
                + now.type()
                + ": a value that does not convert fails the copy");
      }
    }
    for (Column c : h.columns()) {
      if (b.column(c.name()).isEmpty()
          && c.notNull()
          && c.defaultExpression() == null
          && c.identity() == null
          && c.generatedExpression() == null) {
        p.because(
            Risk.DESTRUCTIVE,
            "new column `" + c.name() + "` is NOT NULL without a default: the copy fails on rows");
      }
    }
  }

  private static boolean hasPartitions(Table h, SchemaCatalog head) {
    return head.tables().values().stream().anyMatch(t -> t.parents().equals(List.of(h.name())));
  }

  /**
   * Whether every row finds a partition: a DEFAULT partition, or hash partitions whose remainders
   * cover every value (1/modulus summed to 1).
   */
  static boolean acceptsEveryRow(Table h, SchemaCatalog head) {
    List<Table> partitions =
        head.tables().values().stream()
            .filter(t -> t.parents().equals(List.of(h.name())) && t.isPartition())
            .toList();
    if (partitions.stream().anyMatch(t -> t.partitionBound().equals("DEFAULT"))) {
      return true;
    }
    if (!h.partitionKey().startsWith("HASH")) {
      return false;
    }
    long lcm = 1;
    List<Long> moduli = new ArrayList<>();
    for (Table t : partitions) {
      Long modulus = RowChecks.modulus(t.partitionBound());
      if (modulus == null) {
        return false;
      }
      moduli.add(modulus);
      lcm = lcm(lcm, modulus);
    }
    long covered = 0;
    for (long m : moduli) {
      covered += lcm / m;
    }
    return !moduli.isEmpty()
        && covered == lcm
        && partitions.stream().allMatch(t -> covers(t, head));
  }

  private static boolean covers(Table partition, SchemaCatalog head) {
    return partition.partitionKey() == null || acceptsEveryRow(partition, head);
  }

  private static long lcm(long a, long b) {
    long x = a;
    long y = b;
    while (y != 0) {
      long r = x % y;
      x = y;
      y = r;
    }
    return a / x * b;
  }
}
