package dev.ledger.diff.review;

import dev.ledger.diff.Finding;
import java.util.List;

/**
 * One statement of the pull request's new migrations, as it ran on top of the base's scratch
 * schema, in its own transaction.
 *
 * @param migration the script's file name, e.g. {@code V3__rename.sql}
 * @param line the line of the script its first word is on, from 1
 * @param sql the statement as written in the script (placeholders not filled in), without its
 *     {@code ;}
 * @param transactional false when PostgreSQL refused to run it inside a transaction block ({@code
 *     CREATE INDEX CONCURRENTLY}...): it then ran on its own, and its locks and scans were not read
 * @param locks the strongest lock it held on each relation that existed before it, read from {@code
 *     pg_locks} before its transaction committed, ordered by relation; empty when it took none or
 *     is not transactional
 * @param documentedLocks for a statement that is not transactional, the locks its kind takes as
 *     PostgreSQL's documentation gives them ({@link DocumentedLocks}: {@code CREATE INDEX
 *     CONCURRENTLY} takes {@code ShareUpdateExclusiveLock} on its table, ...), <b>not measured</b>;
 *     relations named as the statement names them; empty for a measured statement or a kind the
 *     table does not list
 * @param rewrites the tables whose {@code relfilenode} it changed (every row copied to a new file),
 *     by name
 * @param scans the tables it read in full (sequential scans PostgreSQL counted in its transaction:
 *     a validation, an index build, a rewrite), by name
 * @param renames what it renamed, objects matched by OID
 * @param findings what it does to the release still running, and the locks it holds while it
 *     rewrites or scans a table of the base; most severe first
 */
public record ReviewedStatement(
    String migration,
    int line,
    String sql,
    boolean transactional,
    List<Lock> locks,
    List<Lock> documentedLocks,
    List<String> rewrites,
    List<String> scans,
    List<Rename> renames,
    List<Finding> findings) {

  /** Copies the lists. */
  public ReviewedStatement {
    locks = List.copyOf(locks);
    documentedLocks = List.copyOf(documentedLocks);
    rewrites = List.copyOf(rewrites);
    scans = List.copyOf(scans);
    renames = List.copyOf(renames);
    findings = List.copyOf(findings);
  }

  /**
   * A statement with no documented locks (measured, or of a kind {@link DocumentedLocks} does not
   * list).
   *
   * @param migration the script's file name
   * @param line the statement's line
   * @param sql the statement as written
   * @param transactional whether it ran in a transaction
   * @param locks the measured locks
   * @param rewrites the tables it rewrote
   * @param scans the tables it read in full
   * @param renames what it renamed
   * @param findings its findings
   */
  public ReviewedStatement(
      String migration,
      int line,
      String sql,
      boolean transactional,
      List<Lock> locks,
      List<String> rewrites,
      List<String> scans,
      List<Rename> renames,
      List<Finding> findings) {
    this(migration, line, sql, transactional, locks, List.of(), rewrites, scans, renames, findings);
  }

  /**
   * A lock held on a relation.
   *
   * @param relation the relation's name (in the set's default schema without a schema)
   * @param mode the mode as {@code pg_locks} names it, e.g. {@code ShareRowExclusiveLock}
   */
  public record Lock(String relation, String mode) {}

  /**
   * An object renamed.
   *
   * @param kind e.g. {@code column}, {@code table}, {@code function}, {@code index}
   * @param from its name before, e.g. {@code orders.customer} for a column
   * @param to its name after, e.g. {@code orders.customer_id}
   */
  public record Rename(String kind, String from, String to) {}

  /**
   * The rank of its most severe finding ({@link Severity#rank}); statements without findings rank
   * last.
   *
   * @return 0 or more
   */
  public int severityRank() {
    return findings.stream().mapToInt(f -> Severity.rank(f.severity())).min().orElse(99);
  }
}
