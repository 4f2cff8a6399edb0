package dev.ledger.migrate;

import java.time.Duration;
import java.util.List;

/**
 * What the job decided and did for one schema during a run; turned into a {@link SchemaReport} at
 * the end. Mutated only by the thread that runs the schema's Flyway run, then read after the run's
 * workers are joined.
 */
final class Work {

  /** What a run must do for the schema. */
  enum Action {
    /** Nothing: current. */
    NONE,
    /** Make the schema (it does not exist). */
    CREATE,
    /** Apply the pending migrations over its history (or to an empty schema). */
    MIGRATE,
    /** Baseline a schema without history at its shape, then apply the rest. */
    ADOPT,
    /** Refuse: checksums differ, the history is ahead or failed, the shape or catalog is wrong. */
    FAIL;

    boolean runs() {
      return this == CREATE || this == MIGRATE || this == ADOPT;
    }
  }

  final String schema;
  final String domain;
  final SchemaKind kind;
  Action action = Action.NONE;
  String versionBefore;
  String versionAfter;
  List<String> pending = List.of();
  List<String> applied = List.of();
  AdoptedShape shape;
  ChecksumState checksums = ChecksumState.NO_HISTORY;
  List<String> extras = List.of();
  String error;
  boolean ran;

  /** Whether the schema holds tables that are not a ledger's (its error says which). */
  boolean foreign;

  /** Whether this run read the schema's catalog and history (else: its recorded state, or none). */
  boolean checked;

  Duration elapsed = Duration.ZERO;

  Work(String schema, String domain, SchemaKind kind) {
    this.schema = schema;
    this.domain = domain;
    this.kind = kind;
  }

  /**
   * The report of this schema.
   *
   * @param operation what the run did
   * @return the report
   */
  SchemaReport report(Operation operation) {
    SchemaState state;
    if (foreign) {
      state = SchemaState.FOREIGN;
    } else if (error != null || action == Action.FAIL) {
      state = SchemaState.FAILED;
    } else if (operation != Operation.MIGRATE) {
      state = action == Action.NONE ? SchemaState.CURRENT : SchemaState.PENDING;
    } else if (!ran) {
      state = SchemaState.CURRENT;
    } else {
      state =
          switch (action) {
            case CREATE -> SchemaState.CREATED;
            case ADOPT -> SchemaState.ADOPTED;
            // an empty schema (a new database's public) held no ledger before this run: made now
            default -> versionBefore == null ? SchemaState.CREATED : SchemaState.MIGRATED;
          };
    }
    return new SchemaReport(
        schema,
        domain,
        kind,
        state,
        versionBefore,
        versionAfter,
        applied,
        pending,
        shape,
        checksums,
        extras,
        error,
        elapsed);
  }
}
