package dev.ledger.diff;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Compares two Flyway migration sets by the schemas they make: each is applied to a scratch schema
 * of a real PostgreSQL, the two catalogs are read back and compared, and the SQL that brings the
 * base to the head is checked before any verdict is printed: the base is applied to a third scratch
 * schema, the SQL run there, and the result compared with the head ({@link Verification}). When the
 * head only appends migrations to the base's, its new statements are also run one at a time on top
 * of the base and measured ({@link dev.ledger.diff.review.Review}: locks, rewrites, scans, renames
 * matched by OID), and a rename is a rename in the diff.
 *
 * <p>The entry point of {@code ledger-schema-diff}, a library that knows nothing of the ledger
 * ({@code ledger-app schema-diff} is its command line):
 *
 * <pre>{@code
 * DiffReport report =
 *     SchemaDiff.run(
 *         new SchemaDiff.Request(
 *             "base/db/migration",          // a directory, a jar, or JAR!/DIR
 *             "db/migration",
 *             Map.of(), Map.of(), Map.of(), // Flyway placeholders: both sets, base, head
 *             null,                         // no JDBC URL: an embedded PostgreSQL
 *             FailOn.DESTRUCTIVE,
 *             false));                      // the plain plan, not the online one
 * System.out.print(report.markdown());      // or report.sql(), report.json()
 * if (!report.verified()) { ... }           // the SQL is not safe to run as printed
 * else if (report.failed()) { ... }         // a change FailOn does not allow
 * }</pre>
 *
 * <p>{@link #run} throws {@link SchemaDiffException}, its message one line without a password, when
 * the diff cannot be made. Each call uses scratch schemas (or an embedded server) of its own and
 * drops them, so calls may run on several threads at once, each on a database of its own.
 */
public final class SchemaDiff {

  private SchemaDiff() {}

  /**
   * What to compare, and how.
   *
   * @param base the base set's path: a directory, a jar, or {@code JAR!/DIR}
   * @param head the head set's path, likewise
   * @param placeholders Flyway placeholders for both sets, besides Flyway's own
   * @param basePlaceholders placeholders for the base only; they win over {@code placeholders}
   * @param headPlaceholders placeholders for the head only; they win over {@code placeholders}
   * @param jdbcUrl the server to use, or null for an embedded PostgreSQL in a temporary directory
   * @param failOn which changes fail the diff
   * @param online whether to print the online plan ({@code --online})
   * @param using the author's conversions of columns whose type changes ({@code --using}, see
   *     {@link Using#parse}): {@code table.column} to the {@code USING} expression; each must name
   *     a column whose type changes, else {@link SchemaDiff#run} throws a {@link
   *     SchemaDiffException} naming {@code --using}
   */
  public record Request(
      String base,
      String head,
      Map<String, String> placeholders,
      Map<String, String> basePlaceholders,
      Map<String, String> headPlaceholders,
      String jdbcUrl,
      FailOn failOn,
      boolean online,
      Map<String, String> using) {

    /** Copies the placeholders and conversions. */
    public Request {
      placeholders = Map.copyOf(placeholders);
      basePlaceholders = Map.copyOf(basePlaceholders);
      headPlaceholders = Map.copyOf(headPlaceholders);
      using = Map.copyOf(using);
    }

    /**
     * A request without {@code --using} conversions.
     *
     * @param base the base set's path
     * @param head the head set's path
     * @param placeholders placeholders for both sets
     * @param basePlaceholders placeholders for the base only
     * @param headPlaceholders placeholders for the head only
     * @param jdbcUrl the server, or null for an embedded PostgreSQL
     * @param failOn which changes fail the diff
     * @param online whether to print the online plan
     */
    public Request(
        String base,
        String head,
        Map<String, String> placeholders,
        Map<String, String> basePlaceholders,
        Map<String, String> headPlaceholders,
        String jdbcUrl,
        FailOn failOn,
        boolean online) {
      this(
          base,
          head,
          placeholders,
          basePlaceholders,
          headPlaceholders,
          jdbcUrl,
          failOn,
          online,
          Map.of());
    }

    /** The base's placeholders: the common ones, then the base's own. */
    Map<String, String> forBase() {
      Map<String, String> all = new HashMap<>(placeholders);
      all.putAll(basePlaceholders);
      return all;
    }

    /** The head's placeholders: the common ones, then the head's own. */
    Map<String, String> forHead() {
      Map<String, String> all = new HashMap<>(placeholders);
      all.putAll(headPlaceholders);
      return all;
    }
  }

  /**
   * Applies both sets, compares them and checks the SQL.
   *
   * @param request what to compare, not null
   * @return the report
   * @throws SchemaDiffException when a path is not a migration set, a migration fails, or the
   *     database cannot be used
   */
  public static DiffReport run(Request request) {
    return compare(request, true).report();
  }

  /**
   * Like {@link #run(Request)}, with or without the review of the pull request's own statements
   * (without it for measuring what it costs: {@code ReviewCostTest}).
   *
   * @param request what to compare, not null
   * @param reviewStatements whether to measure the head's new statements one by one
   * @return the report
   * @throws SchemaDiffException as {@link #run(Request)}
   */
  static DiffReport run(Request request, boolean reviewStatements) {
    return compare(request, reviewStatements).report();
  }

  /**
   * A report with the two catalogs it compared: for checks that look at the objects themselves,
   * such as the data checks against a real database ({@code dev.ledger.diff.against}).
   *
   * @param report the report, as {@link #run} returns it
   * @param base the base's catalog, as read from its scratch schema
   * @param head the head's catalog
   */
  public record Compared(DiffReport report, SchemaCatalog base, SchemaCatalog head) {}

  /**
   * Applies both sets, compares them and checks the SQL, as {@link #run} does, and keeps the
   * catalogs.
   *
   * @param request what to compare, not null
   * @return the report and both catalogs
   * @throws SchemaDiffException as {@link #run}
   */
  public static Compared compare(Request request) {
    return compare(request, true);
  }

  private static Compared compare(Request request, boolean reviewStatements) {
    try (MigrationSource base = MigrationSource.open("--base", request.base());
        MigrationSource head = MigrationSource.open("--head", request.head());
        ScratchPostgres pg =
            request.jdbcUrl() == null
                ? ScratchPostgres.embedded()
                : ScratchPostgres.at(request.jdbcUrl())) {
      SchemaCatalog before = pg.apply(base, "base", request.forBase()).catalog();
      ScratchPostgres.Checked headSet = pg.applyWithFingerprint(head, "head", request.forHead());
      SchemaCatalog after = headSet.applied().catalog();
      Using.validate(request.using(), before, after);
      PullRequestReview.Outcome review =
          reviewStatements
              ? PullRequestReview.run(pg, base, head, request.forBase(), request.forHead())
              : new PullRequestReview.Outcome(dev.ledger.diff.review.Review.none(), null);
      CatalogDiff diff = review.diff(before, after, request.online(), request.using());
      Verification verification =
          verify(pg, base, request.forBase(), diff, after, headSet.fingerprint());
      return new Compared(
          new DiffReport(
              base.displayName(),
              head.displayName(),
              diff,
              request.failOn(),
              verification,
              request.online(),
              Advice.of(diff, after, MigrationStatements.added(base.directory(), head.directory())),
              review.review()),
          before,
          after);
    }
  }

  /**
   * A message for one line of an error report: its lines joined, and every password of the JDBC URL
   * replaced by {@code ***}. For messages the diff did not make itself (a {@link
   * SchemaDiffException}'s already is one line without a password).
   *
   * @param message the message, may be null ({@code unknown error})
   * @param jdbcUrl the server's URL as given, may be null (nothing is replaced)
   * @return the message on one line, never null
   */
  public static String errorLine(String message, String jdbcUrl) {
    return ScratchPostgres.redact(MigrationErrors.oneLine(message), jdbcUrl);
  }

  /**
   * Text with every password of a JDBC URL replaced by {@code ***}, as written in the URL and
   * URL-decoded: for a stack trace, whose causes' messages may hold them.
   *
   * @param text the text, may be null (null is returned)
   * @param jdbcUrl the server's URL as given, may be null (nothing is replaced)
   * @return the text without the passwords
   */
  public static String redact(String text, String jdbcUrl) {
    return ScratchPostgres.redact(text, jdbcUrl);
  }

  /**
   * Checks a diff's script on a scratch schema: the base, then the script, compared with the head
   * twice: through the differ's model ({@link CatalogDiff}), then row by row through the catalogs
   * ({@link CatalogFingerprint}), so that a difference the model does not hold is refused by name.
   *
   * @param pg the server
   * @param base the base's scripts
   * @param placeholders the base's placeholders
   * @param diff the diff
   * @param head the head's catalog
   * @param headRows the head's catalog rows, read without the differ's model
   * @return the outcome
   */
  static Verification verify(
      ScratchPostgres pg,
      MigrationSource base,
      Map<String, String> placeholders,
      CatalogDiff diff,
      SchemaCatalog head,
      CatalogFingerprint headRows) {
    List<String> refused = new ArrayList<>();
    for (Change c : diff.changes()) {
      if (c.refusal() != null) {
        refused.add(describe(c) + " (" + c.refusal() + ")");
      }
    }
    // Run even when the diff is empty: a difference the differ does not model at all leaves it
    // empty, and only the catalog rows of base plus nothing can show it.
    List<String> script = diff.script();
    ScratchPostgres.Checked checked = pg.check(base, placeholders, script, diff.rowChecks());
    if (checked.applied() == null) {
      CatalogDiff.Statement failed = diff.statements().get(checked.failedAt());
      if (failed.change().kind() == Change.Kind.COLUMN
          && checked.error().contains("cannot cast type ")) {
        // No cast between the types: only the author knows how old values map to new ones.
        refused.add(
            describe(failed.change())
                + " (no cast from "
                + failed.change().before()
                + " to "
                + failed.change().after()
                + ": give the conversion with --using "
                + failed.change().table()
                + "."
                + failed.change().name()
                + "=EXPR, an expression over the old value)");
        return new Verification(Verification.Status.REFUSED, null, null, null, List.of(), refused);
      }
      if (failed.change().kind() == Change.Kind.COMPOSITE_TYPE
          && checked.error().contains("cannot cast type ")) {
        // A retyped attribute of a composite type in use, with no cast between its types.
        java.util.regex.Matcher cast = NO_CAST.matcher(checked.error());
        refused.add(
            describe(failed.change())
                + " (no cast"
                + (cast.find() ? " from " + cast.group(1) + " to " + cast.group(2) : "")
                + " for an attribute it retypes while columns use it: convert the columns yourself,"
                + " a new type and ALTER COLUMN ... TYPE ... USING an expression over the old"
                + " value)");
        return new Verification(Verification.Status.REFUSED, null, null, null, List.of(), refused);
      }
      return new Verification(
          refused.isEmpty() ? Verification.Status.SQL_FAILED : Verification.Status.REFUSED,
          failed.sql(),
          describe(failed.change()),
          checked.error(),
          List.of(),
          refused);
    }
    CatalogDiff rest = CatalogDiff.between(checked.applied().catalog(), head);
    List<String> remaining = new ArrayList<>();
    for (Change c : rest.changes()) {
      String name = describe(c);
      if (!remaining.contains(name)) {
        remaining.add(name);
      }
    }
    List<String> rows = new ArrayList<>();
    for (RowCheckRun.Outcome o : checked.rows()) {
      switch (o.status()) {
        case UNWRITABLE -> refused.add(o.sentence());
        case LOST -> remaining.add(o.sentence());
        default -> rows.add(o.sentence());
      }
    }
    if (!refused.isEmpty()) {
      return new Verification(Verification.Status.REFUSED, null, null, null, remaining, refused);
    }
    if (!remaining.isEmpty()) {
      return new Verification(Verification.Status.DIFFERS, null, null, null, remaining, List.of());
    }
    // The differ's own model says exact; the catalog rows, read without it, must agree.
    for (String row : checked.fingerprint().differencesFrom(headRows)) {
      refused.add(row + ", which the diff does not model (independent catalog check)");
    }
    if (!refused.isEmpty()) {
      return new Verification(Verification.Status.REFUSED, null, null, null, List.of(), refused);
    }
    return new Verification(
        Verification.Status.EXACT, null, null, null, List.of(), List.of(), rows);
  }

  /** PostgreSQL's error for a missing cast: the two types. */
  private static final java.util.regex.Pattern NO_CAST =
      java.util.regex.Pattern.compile(
          "cannot cast type (.+?) to (.+?)(?:  ?Position: | \\(SQL state|\\n|$)");

  private static String describe(Change c) {
    return c.kind().label()
        + " `"
        + c.name()
        + "`"
        + (c.table() == null
                || c.kind() == Change.Kind.TABLE
                || c.name().endsWith(" on " + c.table())
            ? ""
            : " on `" + c.table() + "`");
  }
}
