/**
 * Schema diff: two Flyway migration sets compared by the schemas they make on a real PostgreSQL,
 * each change classified safe, locking or destructive, and the SQL from one to the other checked on
 * a scratch schema. The entry point is {@link dev.ledger.diff.SchemaDiff#run}; it knows nothing of
 * the ledger ({@code ledger-app schema-diff} is its command line).
 *
 * <p>The flow of one run: {@link dev.ledger.diff.MigrationSource} opens each set (a directory, a
 * jar, {@code JAR!/DIR}); {@link dev.ledger.diff.ScratchPostgres} applies it to a scratch schema
 * and reads the {@link dev.ledger.diff.SchemaCatalog} back ({@code CatalogReader}, {@code
 * ItemReader}); {@link dev.ledger.diff.CatalogDiff} compares two catalogs ({@code Differ} with
 * {@code ColumnDiffer}, {@code KeyDiffer}, {@code SequenceDiffer}, {@code ItemDiffer}, ordered by
 * {@code Plan}) into {@link dev.ledger.diff.Change}s, each with its {@link dev.ledger.diff.Risk};
 * {@code SchemaDiff} checks the script ({@link dev.ledger.diff.Verification}); {@link
 * dev.ledger.diff.DiffReport} renders markdown, SQL or JSON. {@link dev.ledger.diff.SchemaSnapshot}
 * renders a set's canonical DDL (the build's {@code migrations/schema.sql} check). {@code
 * PullRequestReview} runs the pull request's own new statements one at a time and measures them
 * ({@link dev.ledger.diff.review}); the renames it measures become renames in the diff.
 */
package dev.ledger.diff;
