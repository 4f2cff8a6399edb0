package dev.ledger.diff.review;

import dev.ledger.diff.Finding;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.CRC32;

/**
 * How the head's migration history relates to the base's, read from the file names and contents of
 * both sets (Flyway's default naming: {@code V<version>__<description>.sql} and {@code
 * R__<description>.sql}; other files are not migrations).
 *
 * <ul>
 *   <li>{@link Status#APPENDED}: every migration of the base is in the head unchanged (same
 *       version, description and Flyway checksum), and the head's new versions are all above the
 *       base's latest; {@link #added()} are the new versioned scripts in version order, then the
 *       new or changed repeatable ones (Flyway runs them again) in description order;
 *   <li>{@link Status#UNCHANGED}: the same, with nothing added;
 *   <li>{@link Status#REWRITTEN}: the head edits, renames or removes a migration the base applied,
 *       or adds a version below the base's latest; {@link #findings()} says which ({@value
 *       #EDITED}, {@value #REMOVED}, {@value #BELOW_LATEST}, each an {@link Severity#ERROR}).
 * </ul>
 *
 * <p>Immutable; {@link #compare} reads the files once.
 */
public final class MigrationHistory {

  /** Rule: a migration the base applied is edited or renamed in the head. */
  public static final String EDITED = "edited-migration";

  /** Rule: a migration the base applied is gone from the head. */
  public static final String REMOVED = "removed-migration";

  /** Rule: a new version below the base's latest. */
  public static final String BELOW_LATEST = "version-below-latest";

  private static final Pattern VERSIONED =
      Pattern.compile("V(\\d+(?:[._]\\d+)*)__(.+)\\.sql", Pattern.CASE_INSENSITIVE);
  private static final Pattern REPEATABLE =
      Pattern.compile("R__(.+)\\.sql", Pattern.CASE_INSENSITIVE);

  /** How the head's history relates to the base's. */
  public enum Status {
    /** The base's migrations unchanged, new ones after them. */
    APPENDED,
    /** The same migrations. */
    UNCHANGED,
    /** A base migration edited, renamed or removed, or a version inserted below the latest. */
    REWRITTEN
  }

  /**
   * One migration script.
   *
   * @param file the script on disk
   * @param name its file name, e.g. {@code V3__rename.sql}
   * @param version its version as written, e.g. {@code 3} or {@code 1.2}; null for a repeatable one
   * @param checksum Flyway's checksum of its text (CRC32 of its lines without line breaks)
   */
  public record Script(Path file, String name, String version, int checksum) {}

  private final Status status;
  private final List<Script> added;
  private final List<Finding> findings;

  private MigrationHistory(Status status, List<Script> added, List<Finding> findings) {
    this.status = status;
    this.added = List.copyOf(added);
    this.findings = List.copyOf(findings);
  }

  /**
   * Compares the histories of two migration directories (each read with its subdirectories).
   *
   * @param base the base set's directory
   * @param head the head set's directory
   * @return the comparison
   * @throws UncheckedIOException when a directory or script cannot be read
   */
  public static MigrationHistory compare(Path base, Path head) {
    TreeMap<List<BigInteger>, Script> was = new TreeMap<>(MigrationHistory::compareVersions);
    Map<String, Script> wasRepeatable = new TreeMap<>();
    read(base, was, wasRepeatable);
    Map<List<BigInteger>, Script> now = new TreeMap<>(MigrationHistory::compareVersions);
    Map<String, Script> nowRepeatable = new TreeMap<>();
    read(head, now, nowRepeatable);
    List<Finding> findings = new ArrayList<>();
    List<BigInteger> latest = was.isEmpty() ? null : was.lastKey();
    for (Map.Entry<List<BigInteger>, Script> e : was.entrySet()) {
      Script old = e.getValue();
      Script neu = now.get(e.getKey());
      if (neu == null) {
        findings.add(
            new Finding(
                REMOVED,
                Severity.ERROR,
                "`"
                    + old.name()
                    + "`, which the base applied, is not in the head: a database at the base's"
                    + " version fails Flyway's validation (an applied migration not found)",
                "keep the applied migration as it is, and undo what it did in a new version"
                    + " above V"
                    + was.get(latest).version()));
      } else if (old.checksum() != neu.checksum() || !old.name().equals(neu.name())) {
        findings.add(
            new Finding(
                EDITED,
                Severity.ERROR,
                "`"
                    + neu.name()
                    + "`, which the base applied, is edited"
                    + (old.name().equals(neu.name()) ? "" : " (renamed from `" + old.name() + "`)")
                    + " (Flyway's checksum "
                    + old.checksum()
                    + " in the base, "
                    + neu.checksum()
                    + " in the head): a database at the base's version fails Flyway's"
                    + " validation, and a new database gets a schema production never had",
                "leave an applied migration as it is and fix forward in a new version above V"
                    + was.get(latest).version()));
      }
    }
    List<Script> added = new ArrayList<>();
    for (Map.Entry<List<BigInteger>, Script> e : now.entrySet()) {
      if (was.containsKey(e.getKey())) {
        continue;
      }
      if (latest != null && compareVersions(e.getKey(), latest) < 0) {
        findings.add(
            new Finding(
                BELOW_LATEST,
                Severity.ERROR,
                "`"
                    + e.getValue().name()
                    + "` is new but below the base's latest version V"
                    + was.get(latest).version()
                    + ": a database at V"
                    + was.get(latest).version()
                    + " refuses it (Flyway's validation), or with outOfOrder runs it after V"
                    + was.get(latest).version()
                    + ", in an order no test ran",
                "number it above V" + was.get(latest).version()));
      }
      added.add(e.getValue());
    }
    for (Map.Entry<String, Script> e : nowRepeatable.entrySet()) {
      Script old = wasRepeatable.get(e.getKey());
      if (old == null || old.checksum() != e.getValue().checksum()) {
        added.add(e.getValue());
      }
    }
    for (Map.Entry<String, Script> e : wasRepeatable.entrySet()) {
      if (!nowRepeatable.containsKey(e.getKey())) {
        findings.add(
            new Finding(
                REMOVED,
                Severity.ERROR,
                "`"
                    + e.getValue().name()
                    + "`, which the base applied, is not in the head: a database at the base's"
                    + " version fails Flyway's validation, and the objects it made stay",
                "keep the repeatable migration, and drop what it made in a new version"));
      }
    }
    if (!findings.isEmpty()) {
      return new MigrationHistory(Status.REWRITTEN, List.of(), findings);
    }
    return new MigrationHistory(
        added.isEmpty() ? Status.UNCHANGED : Status.APPENDED, added, List.of());
  }

  /**
   * How the head's history relates to the base's.
   *
   * @return the status, never null
   */
  public Status status() {
    return status;
  }

  /**
   * The head's new scripts in the order Flyway runs them on a database at the base's version; empty
   * unless {@link Status#APPENDED}.
   *
   * @return an immutable list
   */
  public List<Script> added() {
    return added;
  }

  /**
   * What rewrites the history, each an {@link Severity#ERROR}; empty unless {@link
   * Status#REWRITTEN}.
   *
   * @return an immutable list
   */
  public List<Finding> findings() {
    return findings;
  }

  /**
   * Flyway's checksum of a script's text: CRC32 over its lines, without line breaks, in UTF-8, a
   * byte order mark left out.
   *
   * @param text the script's text
   * @return the checksum as Flyway stores it (a signed 32-bit integer)
   */
  static int checksum(String text) {
    CRC32 crc = new CRC32();
    try (BufferedReader reader = new BufferedReader(new java.io.StringReader(text))) {
      String line = reader.readLine();
      if (line != null && line.startsWith("\uFEFF")) {
        line = line.substring(1);
      }
      for (; line != null; line = reader.readLine()) {
        crc.update(line.getBytes(StandardCharsets.UTF_8));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return (int) crc.getValue();
  }

  private static void read(
      Path dir, Map<List<BigInteger>, Script> versioned, Map<String, Script> repeatable) {
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path f : files.filter(Files::isRegularFile).sorted().toList()) {
        String name = f.getFileName().toString();
        Matcher v = VERSIONED.matcher(name);
        Matcher r = REPEATABLE.matcher(name);
        if (v.matches()) {
          int sum = checksum(Files.readString(f, StandardCharsets.UTF_8));
          versioned.put(version(v.group(1)), new Script(f, name, v.group(1), sum));
        } else if (r.matches()) {
          int sum = checksum(Files.readString(f, StandardCharsets.UTF_8));
          repeatable.put(r.group(1), new Script(f, name, null, sum));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A version's parts, trailing zeros left out as Flyway does ({@code 1.0} is {@code 1}). */
  private static List<BigInteger> version(String text) {
    List<BigInteger> parts = new ArrayList<>();
    for (String p : text.split("[._]")) {
      parts.add(new BigInteger(p));
    }
    while (parts.size() > 1 && parts.get(parts.size() - 1).signum() == 0) {
      parts.remove(parts.size() - 1);
    }
    return List.copyOf(parts);
  }

  private static int compareVersions(List<BigInteger> a, List<BigInteger> b) {
    Comparator<List<BigInteger>> c =
        (x, y) -> {
          for (int i = 0; i < Math.max(x.size(), y.size()); i++) {
            BigInteger p = i < x.size() ? x.get(i) : BigInteger.ZERO;
            BigInteger q = i < y.size() ? y.get(i) : BigInteger.ZERO;
            int d = p.compareTo(q);
            if (d != 0) {
              return d;
            }
          }
          return 0;
        };
    return c.compare(a, b);
  }
}
