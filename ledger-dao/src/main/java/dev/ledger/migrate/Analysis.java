package dev.ledger.migrate;

import dev.ledger.schema.LedgerMigrations;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.flywaydb.core.api.MigrationVersion;

/**
 * Decides, from what {@link Catalog} read, what a schema needs: nothing, a Flyway run (create,
 * migrate, adopt) or a refusal. Pure: no database access.
 */
final class Analysis {

  private Analysis() {}

  /**
   * What a schema needs.
   *
   * @param kind directory or domain
   * @param schema the schema, unquoted
   * @param domain its domain, null for the directory
   * @param fingerprint its catalog summary; null when the schema does not exist
   * @param history its history rows; null when it has no history table
   * @param details its catalog lines when read, else null
   * @param set the migrations of its set
   * @param needDetails where a schema whose decision needs its catalog lines is added (the caller
   *     reads them and asks again); the returned work is then provisional
   * @return the decision
   */
  static Work analyze(
      SchemaKind kind,
      String schema,
      String domain,
      Catalog.Fingerprint fingerprint,
      List<Catalog.HistoryRow> history,
      Set<String> details,
      MigrationSet set,
      Set<String> needDetails) {
    Work w = new Work(schema, domain, kind);
    w.checked = true;
    List<String> all = List.copyOf(set.versioned().keySet());
    ExpectedCatalog expected =
        kind == SchemaKind.DIRECTORY ? ExpectedCatalog.DIRECTORY : ExpectedCatalog.DOMAIN;
    if (fingerprint == null) {
      w.action = Work.Action.CREATE;
      w.pending = all;
      w.versionAfter = set.latest();
      return w;
    }
    String historyTable =
        kind == SchemaKind.DIRECTORY
            ? LedgerMigrations.DIRECTORY_HISTORY
            : LedgerMigrations.DOMAIN_HISTORY;
    if (history == null || !fingerprint.tables().contains(historyTable)) {
      boolean hasTables = !fingerprint.tables().isEmpty();
      w.pending = all;
      w.versionAfter = set.latest();
      if (!hasTables) {
        w.action = Work.Action.MIGRATE;
        return w;
      }
      if (kind == SchemaKind.DIRECTORY) {
        // Flyway baselines a non-empty directory schema at 0 (LedgerMigrations.directory)
        w.action = Work.Action.ADOPT;
        return w;
      }
      if (details == null) {
        needDetails.add(schema);
        return w;
      }
      AdoptedShape shape = shapeOf(details);
      if (shape == null) {
        w.action = Work.Action.FAIL;
        w.foreign = true;
        w.error = foreignSchema(schema, domain, fingerprint.tables());
        return w;
      }
      MigrationVersion baseline = MigrationVersion.fromVersion(shape.baselineVersion());
      w.action = Work.Action.ADOPT;
      w.shape = shape;
      w.pending =
          all.stream()
              .filter(v -> MigrationVersion.fromVersion(v).compareTo(baseline) > 0)
              .toList();
      return w;
    }
    checkHistory(w, history, set, historyTable);
    if (w.error != null) {
      w.action = Work.Action.FAIL;
      return w;
    }
    if (!w.pending.isEmpty()) {
      w.action = Work.Action.MIGRATE;
      w.versionAfter = set.latest();
      return w;
    }
    w.versionAfter = w.versionBefore;
    if (fingerprint.fingerprint().equals(expected.fingerprint())) {
      return w;
    }
    if (details == null) {
      needDetails.add(schema);
      return w;
    }
    ExpectedCatalog.Diff diff = expected.diff(restrict(details, expected.tables()));
    if (!diff.missing().isEmpty()) {
      w.action = Work.Action.FAIL;
      w.error =
          "schema "
              + schema
              + " is at version "
              + w.versionBefore
              + " but its catalog is not what that version makes: missing "
              + diff.missing()
              + (diff.extra().isEmpty() ? "" : "; unexpected " + diff.extra())
              + ". A migration may have half-applied or the schema was changed by hand:"
              + " inspect it; ledger-app does not repair it";
      return w;
    }
    w.extras = diff.extra();
    return w;
  }

  /**
   * The message of a domain schema that exists and holds tables that are not a ledger's.
   *
   * @param schema the schema
   * @param domain its domain
   * @param tables its tables
   * @return the message: what was found, that nothing was changed, what to do
   */
  static String foreignSchema(String schema, String domain, java.util.Collection<String> tables) {
    return dev.ledger.ForeignSchemaException.message(schema, domain, tables);
  }

  /**
   * The reference-stack shape of a domain schema without history.
   *
   * @param lines its catalog lines
   * @return the shape; null when it has no {@code events} or no {@code tasks}
   */
  static AdoptedShape shapeOf(Set<String> lines) {
    if (!lines.contains("table events") || !lines.contains("table tasks")) {
      return null;
    }
    if (!lines.contains("table promotions")) {
      return AdoptedShape.NO_PROMOTIONS;
    }
    boolean newDigest = lines.stream().anyMatch(l -> l.startsWith("column promotions.new_digest "));
    boolean whyErased = lines.stream().anyMatch(l -> l.startsWith("column promotions.why_erased "));
    if (!newDigest || !whyErased) {
      return AdoptedShape.PROMOTIONS_FIRST_SHAPE;
    }
    return lines.contains(
            "index promotions.promotions_version unique (entry, tier, digest, promoter)")
        ? AdoptedShape.REFERENCE_CURRENT
        : AdoptedShape.PROMOTIONS_KEYED_WITHOUT_PROMOTER;
  }

  /**
   * The lines that concern some tables.
   *
   * @param lines catalog lines
   * @param tables table names
   * @return the lines of those tables
   */
  static Set<String> restrict(Set<String> lines, Set<String> tables) {
    return lines.stream()
        .filter(l -> tables.contains(tableOf(l)))
        .collect(Collectors.toCollection(TreeSet::new));
  }

  private static String tableOf(String line) {
    String rest = line.substring(line.indexOf(' ') + 1);
    int dot = rest.indexOf('.');
    int space = rest.indexOf(' ');
    int end = dot >= 0 ? dot : (space >= 0 ? space : rest.length());
    return rest.substring(0, end);
  }

  /**
   * Compares a history with the resolved set: sets the work's version before, checksum state,
   * pending versions and, for a failed or edited or unknown migration, the error.
   */
  private static void checkHistory(
      Work w, List<Catalog.HistoryRow> rows, MigrationSet set, String historyTable) {
    MigrationVersion baseline = null;
    Map<String, Catalog.HistoryRow> applied = new HashMap<>();
    Map<String, Catalog.HistoryRow> repeatable = new HashMap<>();
    List<String> problems = new ArrayList<>();
    for (Catalog.HistoryRow row : rows) {
      if (!row.success()) {
        problems.add(
            "migration "
                + label(row)
                + " is recorded as failed in "
                + w.schema
                + "."
                + historyTable
                + ": fix the schema by hand, delete that row and run again (ledger-app never"
                + " repairs)");
        continue;
      }
      if ("BASELINE".equals(row.type())) {
        MigrationVersion v = MigrationVersion.fromVersion(row.version());
        baseline = baseline == null || v.compareTo(baseline) > 0 ? v : baseline;
      } else if ("DELETE".equals(row.type()) && row.version() != null) {
        applied.remove(row.version());
      } else if ("SCHEMA".equals(row.type())) {
        continue;
      } else if (row.version() == null) {
        repeatable.put(row.description(), row);
      } else {
        applied.put(row.version(), row);
      }
    }
    boolean mismatch = false;
    boolean unknown = false;
    MigrationVersion latest = baseline;
    for (Catalog.HistoryRow row : applied.values()) {
      MigrationVersion v = MigrationVersion.fromVersion(row.version());
      latest = latest == null || v.compareTo(latest) > 0 ? v : latest;
      MigrationSet.Resolved resolved = set.versioned().get(row.version());
      if (resolved == null) {
        unknown = true;
        problems.add(
            "the history of "
                + w.schema
                + " records "
                + label(row)
                + ", which this build does not have: the schema is ahead of this ledger-app;"
                + " run the version that applied it");
      } else if (!Objects.equals(resolved.checksum(), row.checksum())) {
        mismatch = true;
        problems.add(
            "migration "
                + resolved.label()
                + " was applied to "
                + w.schema
                + " with checksum "
                + row.checksum()
                + ", but the script in this build has checksum "
                + resolved.checksum()
                + ": an applied migration was edited. Restore the script as it was applied and"
                + " put the change in a new version; ledger-app never repairs checksums");
      }
    }
    w.versionBefore = latest == null ? null : latest.getVersion();
    w.checksums =
        mismatch
            ? ChecksumState.MISMATCH
            : unknown ? ChecksumState.UNKNOWN_MIGRATION : ChecksumState.MATCH;
    List<String> pending = new ArrayList<>();
    for (String v : set.versioned().keySet()) {
      if (!applied.containsKey(v)
          && (baseline == null || MigrationVersion.fromVersion(v).compareTo(baseline) > 0)) {
        pending.add(v);
      }
    }
    for (MigrationSet.Resolved r : set.repeatables()) {
      // Flyway re-runs a repeatable migration when its last successful row's checksum differs
      // from the script's in this schema (placeholders replaced); when that checksum is not
      // known here, a successful row is taken as current
      Catalog.HistoryRow last = repeatable.get(r.description());
      Integer expected = set.checksumIn(r, w.schema);
      if (last == null || (expected != null && !Objects.equals(last.checksum(), expected))) {
        pending.add("R " + r.description());
      }
    }
    w.pending = List.copyOf(pending);
    if (!problems.isEmpty()) {
      w.error = String.join("; ", problems);
    }
  }

  private static String label(Catalog.HistoryRow row) {
    return (row.version() == null ? "R" : "V" + row.version()) + " (" + row.script() + ")";
  }
}
