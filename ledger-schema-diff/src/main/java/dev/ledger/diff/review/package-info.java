/**
 * The review of a pull request's own migrations (issue 31, item 4): when the head's migrations are
 * the base's plus new versions, the new statements are run one at a time on top of the base's
 * scratch schema and measured ({@link dev.ledger.diff.review.StatementRunner}): the locks each took
 * ({@code pg_locks} inside its transaction), the tables it rewrote ({@code relfilenode} changed),
 * the tables it read in full ({@code pg_stat_get_xact_numscans}), what it renamed (objects matched
 * by OID), and what breaks the release still running during a rolling deploy ({@link
 * dev.ledger.diff.review.ReviewRules}). {@link dev.ledger.diff.review.MigrationHistory} decides
 * whether the head only appends to the base's history; when it does not, the review falls back to
 * the catalog diff and says so. The result is a {@link dev.ledger.diff.review.Review}.
 */
package dev.ledger.diff.review;
