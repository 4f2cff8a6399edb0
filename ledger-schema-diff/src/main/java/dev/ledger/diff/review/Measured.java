package dev.ledger.diff.review;

import java.util.List;
import java.util.Map;

/**
 * What one statement did, as measured, before the rules read it.
 *
 * @param migration the script's file name
 * @param line the statement's line
 * @param sql the statement as written
 * @param transactional whether it ran inside a transaction
 * @param locks the strongest lock mode it held on each relation that existed before it, by OID
 * @param documentedLocks for a statement that ran outside a transaction, the locks its kind takes
 *     ({@link DocumentedLocks}), not measured; else empty
 * @param rewrites the relations whose {@code relfilenode} changed, as they were before it
 * @param scans the relations it read in full, as they were before it
 * @param renames each object renamed: its entry before and after
 * @param drops each object of the kinds the running release uses (tables, views, columns,
 *     functions) that it dropped, as it was before it
 * @param tables the names of tables before it, by OID, for naming a dropped column's table
 */
record Measured(
    String migration,
    int line,
    String sql,
    boolean transactional,
    Map<Long, String> locks,
    List<ReviewedStatement.Lock> documentedLocks,
    List<CatalogSnapshot.Entry> rewrites,
    List<CatalogSnapshot.Entry> scans,
    List<CatalogSnapshot.Entry[]> renames,
    List<CatalogSnapshot.Entry> drops,
    Map<Long, CatalogSnapshot.Entry> tables) {}
