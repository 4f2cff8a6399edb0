package dev.ledger.diff;

import dev.ledger.diff.Change.Action;
import dev.ledger.diff.Change.Kind;
import dev.ledger.diff.Plan.Pending;
import dev.ledger.diff.Plan.Phase;
import dev.ledger.diff.SchemaCatalog.Sequence;
import dev.ledger.diff.SchemaCatalog.Table;
import java.util.Objects;

/** Compares sequences and schemas, into a {@link Plan}. */
final class SequenceDiffer {

  private final SchemaCatalog base;
  private final SchemaCatalog head;
  private final Plan plan;

  SequenceDiffer(SchemaCatalog base, SchemaCatalog head, Plan plan) {
    this.base = base;
    this.head = head;
    this.plan = plan;
  }

  /**
   * The table a sequence is grouped under: the head's owner, else the base's.
   *
   * @param name the sequence's normalised name
   * @return the owner's normalised name, or null for an unowned sequence
   */
  String sequenceOwner(String name) {
    Sequence h = head.sequences().get(name);
    if (h != null && h.ownedByTable() != null) {
      return h.ownedByTable();
    }
    Sequence b = base.sequences().get(name);
    return b == null ? null : b.ownedByTable();
  }

  /**
   * Compares one sequence.
   *
   * @param name the sequence's normalised name, in either catalog
   */
  void sequence(String name) {
    Sequence b = base.sequences().get(name);
    Sequence h = head.sequences().get(name);
    String table = sequenceOwner(name);
    if (b == null) {
      boolean newTable = h.ownedByTable() != null && !base.tables().containsKey(h.ownedByTable());
      Pending p =
          plan.change(table, Kind.SEQUENCE, name, Action.ADDED, null, describe(h))
              .because(Risk.SAFE, newTable ? "part of a new table" : "new sequence")
              .sql(
                  Phase.CREATE_SEQUENCE,
                  "CREATE SEQUENCE " + h.sqlName() + " " + h.options() + ";");
      if (h.ownedBySql() != null) {
        p.sql(
            Phase.OWN_SEQUENCE,
            "ALTER SEQUENCE " + h.sqlName() + " OWNED BY " + h.ownedBySql() + ";");
      }
    } else if (h == null) {
      Pending p = plan.change(table, Kind.SEQUENCE, name, Action.DROPPED, describe(b), null);
      if (b.ownedByTable() != null && ownerDropped(b)) {
        p.because(Risk.SAFE, "dropped with the column that owns it");
      } else {
        p.because(Risk.DESTRUCTIVE, "dropped sequence: its current value is lost")
            .sql(Phase.DROP_SEQUENCE, "DROP SEQUENCE " + b.sqlName() + ";");
      }
    } else if (!b.equals(h)) {
      Pending p = plan.change(table, Kind.SEQUENCE, name, Action.CHANGED, describe(b), describe(h));
      if (!b.sameOptions(h)) {
        boolean excluded = b.start() < h.min() || b.start() > h.max();
        if (excluded) {
          p.because(
              Risk.DESTRUCTIVE,
              "sequence bounds changed to exclude the values it started from: it restarts at its"
                  + " new START, and values it hands out may repeat ones already used");
        } else {
          p.because(Risk.SAFE, "sequence options changed: catalog only");
        }
        p.sql(
            Phase.ALTER_SEQUENCE,
            "ALTER SEQUENCE "
                + h.sqlName()
                + " "
                + h.options()
                + (excluded ? " RESTART WITH " + h.start() : "")
                + ";");
      }
      if (!Objects.equals(b.ownedBySql(), h.ownedBySql())) {
        p.because(Risk.SAFE, "owner changed: catalog only");
        if (h.ownedBySql() == null) {
          p.sql(Phase.RELEASE_SEQUENCE, "ALTER SEQUENCE " + h.sqlName() + " OWNED BY NONE;");
        } else {
          if (b.ownedBySql() != null) {
            // Released first: dropping the old owner would drop the sequence with it.
            p.sql(Phase.RELEASE_SEQUENCE, "ALTER SEQUENCE " + h.sqlName() + " OWNED BY NONE;");
          }
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

  /**
   * Compares one schema.
   *
   * @param name the schema's normalised name, in either catalog
   */
  void schema(String name) {
    String before = base.schemas().get(name);
    String after = head.schemas().get(name);
    if (before == null) {
      plan.change(null, Kind.SCHEMA, name, Action.ADDED, null, "schema")
          .because(Risk.SAFE, "new schema")
          .sql(Phase.CREATE_SCHEMA, "CREATE SCHEMA " + after + ";");
    } else if (after == null) {
      plan.change(null, Kind.SCHEMA, name, Action.DROPPED, "schema", null)
          .because(Risk.DESTRUCTIVE, "dropped schema: everything in it is lost")
          .sql(Phase.DROP_SCHEMA, "DROP SCHEMA " + before + " CASCADE;");
    }
  }
}
