package dev.ledger.schema;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationState;
import org.flywaydb.core.api.MigrationVersion;

/**
 * The digest of a migration set: the SHA-256 of each migration's version and Flyway checksum, what
 * the directory's {@code ledger_schema_state} records for a schema found current with the set. Two
 * builds whose sets differ in any version, any checksum, or any repeatable migration's description
 * or checksum have different digests; descriptions of versioned migrations and script names do not
 * count (Flyway's checksum covers the script's content).
 *
 * <pre>{@code
 * String digest = MigrationDigest.of(List.of(
 *     new MigrationDigest.Entry("1", "events and tasks", -1623380137),
 *     new MigrationDigest.Entry("2", "promotions", 877153415)));   // 64 hex digits
 * }</pre>
 *
 * <p>The bytes digested, per entry in order (versioned migrations by version, then repeatable ones
 * by description): {@code V<version>} or {@code R<description>}, a NUL, the checksum in decimal (or
 * {@code -} for none), a newline. No version or description holds a NUL (Flyway takes them from
 * file names), so the encoding is unambiguous.
 */
public final class MigrationDigest {

  private MigrationDigest() {}

  /**
   * One resolved migration.
   *
   * @param version the version, e.g. {@code 3}; null for a repeatable migration
   * @param description the description (identifies a repeatable migration), not null
   * @param checksum Flyway's checksum of the script; null when it has none
   */
  public record Entry(String version, String description, Integer checksum) {

    /**
     * Checks the description.
     *
     * @throws NullPointerException when {@code description} is null
     */
    public Entry {
      Objects.requireNonNull(description, "description");
    }
  }

  /**
   * The digest of a set.
   *
   * @param entries the set's migrations, in any order; not null
   * @return 64 lowercase hex digits
   */
  public static String of(List<Entry> entries) {
    List<Entry> versioned = new ArrayList<>();
    List<Entry> repeatable = new ArrayList<>();
    for (Entry e : entries) {
      (e.version() == null ? repeatable : versioned).add(e);
    }
    versioned.sort(Comparator.comparing(e -> MigrationVersion.fromVersion(e.version())));
    repeatable.sort(Comparator.comparing(Entry::description));
    StringBuilder text = new StringBuilder();
    for (Entry e : versioned) {
      line(text, "V" + e.version(), e.checksum());
    }
    for (Entry e : repeatable) {
      line(text, "R" + e.description(), e.checksum());
    }
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      return HexFormat.of().formatHex(sha.digest(text.toString().getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has SHA-256", e);
    }
  }

  private static void line(StringBuilder text, String key, Integer checksum) {
    text.append(key).append('\0').append(checksum == null ? "-" : checksum.toString()).append('\n');
  }

  /**
   * What a schema's history says when it holds exactly a resolved set.
   *
   * @param version the latest version applied, e.g. {@code 6}
   * @param digest the set's digest, as {@link #of} computes it
   */
  public record Applied(String version, String digest) {}

  /**
   * The version and digest of a schema whose Flyway history holds exactly the migrations Flyway
   * resolved, each applied successfully with its resolved checksum, as a schema Flyway has just
   * made from nothing does. Used to record a schema made at run time (the schema-creation marker
   * row is allowed; a baseline, a failed, pending, missing, future or ignored migration is not).
   *
   * @param all Flyway's {@code info().all()} of the schema, after its migrate
   * @return the version and digest; empty when the history is not exactly the resolved set
   */
  public static Optional<Applied> ofCompleteHistory(MigrationInfo[] all) {
    List<Entry> entries = new ArrayList<>();
    MigrationVersion latest = null;
    for (MigrationInfo m : all) {
      if (m.getType() != null && m.getType().isSynthetic() && !m.getType().isBaseline()) {
        continue; // the schema-creation marker
      }
      if (m.getState() != MigrationState.SUCCESS
          || m.getResolvedChecksum() == null && m.getAppliedChecksum() != null
          || !Objects.equals(m.getResolvedChecksum(), m.getAppliedChecksum())) {
        return Optional.empty();
      }
      entries.add(entryOf(m));
      if (m.getVersion() != null && (latest == null || m.getVersion().compareTo(latest) > 0)) {
        latest = m.getVersion();
      }
    }
    if (latest == null) {
      return Optional.empty();
    }
    return Optional.of(new Applied(latest.getVersion(), of(entries)));
  }

  /**
   * The entry of a migration Flyway resolved (its {@code info()}), with the resolved checksum.
   *
   * @param info a migration whose state {@linkplain org.flywaydb.core.api.MigrationState#isResolved
   *     is resolved}
   * @return the entry
   */
  public static Entry entryOf(MigrationInfo info) {
    return new Entry(
        info.getVersion() == null ? null : info.getVersion().getVersion(),
        info.getResolvedDescription() == null ? "" : info.getResolvedDescription(),
        info.getResolvedChecksum());
  }
}
