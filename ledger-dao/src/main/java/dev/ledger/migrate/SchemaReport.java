package dev.ledger.migrate;

import java.time.Duration;
import java.util.List;

/**
 * What a run found and did for one schema.
 *
 * @param schema the schema, unquoted, e.g. {@code ledger_acme_822b33ad} or {@code public}
 * @param domain the domain whose schema it is; null for the directory
 * @param kind directory or domain
 * @param state where the schema stands
 * @param versionBefore the latest applied version before the run; null when none (no schema, no
 *     history)
 * @param versionAfter the latest applied version after the run; for plan and status, the version a
 *     migrate would reach; null when the schema has no history and a migrate would fail
 * @param applied the versions applied by this run, in order; empty for plan and status
 * @param pending the versions still to apply (plan, status; for a failed migrate, what is left), in
 *     order
 * @param adoptedShape the reference-stack shape it was (or would be) adopted from; null when it has
 *     a history or is new
 * @param checksums how recorded checksums compare with this build's scripts
 * @param catalogExtras tables, columns or indexes present beyond the expected catalog (allowed,
 *     reported), as catalog lines like {@code index tasks.tasks_by_holder plain (holder)}; empty
 *     when none
 * @param error why the schema failed (names the migration, or the missing catalog entries); null
 *     unless {@code state} is {@link SchemaState#FAILED}; never contains credentials
 * @param elapsed time spent on this schema's Flyway run and checks; zero when nothing ran
 */
public record SchemaReport(
    String schema,
    String domain,
    SchemaKind kind,
    SchemaState state,
    String versionBefore,
    String versionAfter,
    List<String> applied,
    List<String> pending,
    AdoptedShape adoptedShape,
    ChecksumState checksums,
    List<String> catalogExtras,
    String error,
    Duration elapsed) {

  /** Copies the lists. */
  public SchemaReport {
    applied = List.copyOf(applied);
    pending = List.copyOf(pending);
    catalogExtras = List.copyOf(catalogExtras);
  }

  /**
   * Whether the schema failed.
   *
   * @return true when {@code state} is {@link SchemaState#FAILED} or {@link SchemaState#FOREIGN}
   */
  public boolean failed() {
    return state == SchemaState.FAILED || state == SchemaState.FOREIGN;
  }
}
