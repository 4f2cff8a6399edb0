package dev.ledger.migrate;

import dev.ledger.schema.DomainSchemas;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state-table bookkeeping of a migration run: keeps the rows of the directory's {@code
 * ledger_schema_state} read at the start, and at the end of a migrate writes a row for each schema
 * the run checked and found current with this build's set, and deletes the rows of those it found
 * failed, so the next run checks them again ({@link SchemaStates}).
 */
final class StateRecorder {

  /** The job's logger: a run's lines keep the category they always had. */
  private static final Logger LOG = LoggerFactory.getLogger(MigrationJob.class);

  private final RunContext ctx;

  /** The rows of ledger_schema_state read at the start, by schema (unquoted). */
  private final Map<String, SchemaStates.Row> rows = new HashMap<>();

  StateRecorder(RunContext ctx) {
    this.ctx = ctx;
  }

  /** Keeps the rows read, by schema (routes that name no domain schema left out). */
  void remember(SchemaStates.Recorded recorded) {
    if (recorded.directory() != null) {
      rows.put(ctx.directorySchema, recorded.directory());
    }
    for (SchemaStates.Row row : recorded.routes()) {
      if (row.version() == null) {
        continue;
      }
      try {
        rows.put(DomainSchemas.unquote(row.stored()), row);
      } catch (IllegalStateException e) {
        // refused when the routes are read: no schema of this name is ever recorded
      }
    }
  }

  /**
   * Writes what a migrate found: a state row for each schema this run checked (or ran) and found
   * current with this build's set, and deletes the rows that say current with this build's set of
   * schemas it found failed. When the directory itself is not current, only its own row is deleted
   * (the state table may be missing, or another build's).
   */
  void record(Observation o, MigrationSet directorySet, MigrationSet domainSet) {
    Work directory = ctx.ran.getOrDefault(ctx.directorySchema, o.directory());
    boolean sharedOk = ctx.sharedReport == null || ctx.sharedReport.error() == null;
    boolean directoryOk = settled(directory, directorySet);
    if (!directoryOk || !sharedOk) {
      if (directory.checked && saysCurrent(ctx.directorySchema, directorySet)) {
        ctx.states.forget(List.of(ctx.directorySchema), SchemaStates.DIRECTORY, directorySet);
      }
      if (!directoryOk) {
        LOG.info("directory {} is not current: no schema state recorded", ctx.directorySchema);
        return;
      }
    }
    List<SchemaStates.Entry> entries = new ArrayList<>();
    List<String> failedDomains = new ArrayList<>();
    if (directory.checked
        && sharedOk
        && !recordedAs(ctx.directorySchema, directorySet, directory)) {
      entries.add(
          new SchemaStates.Entry(
              ctx.directorySchema,
              SchemaStates.DIRECTORY,
              directorySet.latest(),
              directorySet.digest(),
              directory.extras));
    }
    for (Work w : o.settledDomains(ctx.ran).values()) {
      if (!w.checked) {
        continue;
      }
      if (settled(w, domainSet)) {
        if (!recordedAs(w.schema, domainSet, w)) {
          entries.add(
              new SchemaStates.Entry(
                  w.schema, SchemaStates.DOMAIN, domainSet.latest(), domainSet.digest(), w.extras));
        }
      } else if (saysCurrent(w.schema, domainSet)) {
        failedDomains.add(w.schema);
      }
    }
    if (!entries.isEmpty()) {
      ctx.recorded += ctx.states.record(entries, Instant.now());
    }
    if (!failedDomains.isEmpty()) {
      ctx.states.forget(failedDomains, SchemaStates.DOMAIN, domainSet);
    }
  }

  /** Whether the row read at the start says the schema is current with the set. */
  private boolean saysCurrent(String schema, MigrationSet set) {
    SchemaStates.Row row = rows.get(schema);
    return row != null && row.matches(set);
  }

  /** Whether the row read at the start already says what a work found (no write needed). */
  private boolean recordedAs(String schema, MigrationSet set, Work w) {
    SchemaStates.Row row = rows.get(schema);
    return row != null && row.matches(set) && row.extras().equals(w.extras);
  }

  /** Whether a checked schema ended current with a set: what its state row may then say. */
  private boolean settled(Work w, MigrationSet set) {
    return w.error == null
        && w.action != Work.Action.FAIL
        && (w.action == Work.Action.NONE || w.ran)
        && w.pending.isEmpty()
        && w.checksums == ChecksumState.MATCH
        && set.latest() != null
        && set.latest().equals(w.versionAfter);
  }
}
