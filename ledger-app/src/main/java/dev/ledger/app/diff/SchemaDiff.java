package dev.ledger.app.diff;

import java.util.Map;

/**
 * Compares two Flyway migration sets by the schemas they make: each is applied to a scratch schema
 * of a real PostgreSQL, the two catalogs are read back and compared.
 *
 * <pre>{@code
 * DiffReport report =
 *     SchemaDiff.run(
 *         new SchemaDiff.Request("base/db/migration", "db/migration", Map.of(), null, FailOn.DESTRUCTIVE));
 * System.out.print(report.markdown());
 * }</pre>
 */
public final class SchemaDiff {

  private SchemaDiff() {}

  /**
   * What to compare, and how.
   *
   * @param base the base set's path: a directory, a jar, or {@code JAR!/DIR}
   * @param head the head set's path, likewise
   * @param placeholders Flyway placeholders for both sets, besides Flyway's own
   * @param jdbcUrl the server to use, or null for an embedded PostgreSQL in a temporary directory
   * @param failOn which changes fail the diff
   */
  public record Request(
      String base, String head, Map<String, String> placeholders, String jdbcUrl, FailOn failOn) {

    /** Copies the placeholders. */
    public Request {
      placeholders = Map.copyOf(placeholders);
    }
  }

  /**
   * Applies both sets and compares them.
   *
   * @param request what to compare, not null
   * @return the report
   * @throws SchemaDiffException when a path is not a migration set, a migration fails, or the
   *     database cannot be used
   */
  public static DiffReport run(Request request) {
    try (MigrationSource base = MigrationSource.open("--base", request.base());
        MigrationSource head = MigrationSource.open("--head", request.head());
        ScratchPostgres pg =
            request.jdbcUrl() == null
                ? ScratchPostgres.embedded()
                : ScratchPostgres.at(request.jdbcUrl())) {
      Catalog before = pg.apply(base, "base", request.placeholders()).catalog();
      Catalog after = pg.apply(head, "head", request.placeholders()).catalog();
      return new DiffReport(
          base.displayName(),
          head.displayName(),
          CatalogDiff.between(before, after),
          request.failOn());
    }
  }
}
