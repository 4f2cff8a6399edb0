package dev.ledger.diff.against;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.diff.DiffReport;
import dev.ledger.diff.FailOn;
import dev.ledger.diff.SchemaDiff;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The data checks against a real database ({@link AgainstDatabase}): a staging database holding the
 * base's schema and rows that break each new constraint, counted exactly; nothing written; timeouts
 * and an unreachable server leave the checks "not run", never clean.
 */
class AgainstDatabaseTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final String BASE =
      """
      CREATE TABLE owners (id bigint PRIMARY KEY, name text);
      CREATE TABLE orders (
          id     bigint PRIMARY KEY,
          owner  bigint,
          code   text,
          total  numeric,
          placed timestamptz,
          legacy text
      );
      CREATE TABLE old_log (id bigint);
      CREATE SEQUENCE audit_seq;
      """;

  private static final String HEAD =
      """
      ALTER TABLE orders ALTER COLUMN placed SET NOT NULL;
      ALTER TABLE orders ADD CONSTRAINT orders_owner_fk FOREIGN KEY (owner) REFERENCES owners (id);
      ALTER TABLE orders ADD CONSTRAINT orders_code_key UNIQUE (code);
      ALTER TABLE orders ADD CONSTRAINT orders_total_check CHECK (total >= 0);
      ALTER TABLE orders DROP COLUMN legacy;
      ALTER TABLE owners ALTER COLUMN name SET NOT NULL;
      ALTER TABLE owners ADD COLUMN token uuid DEFAULT gen_random_uuid();
      DROP TABLE old_log;
      """;

  /** Rows: owner 3 has no owner row; 'a' three times; three negative totals; four NULL placed. */
  private static final String ROWS =
      """
      INSERT INTO owners VALUES (1, 'ann'), (2, 'bob');
      INSERT INTO orders VALUES
          (1, 1,    'a',  10, now(), 'x'),
          (2, 2,    'a',  -1, NULL,  'x'),
          (3, 3,    'a',  -2, NULL,  'x'),
          (4, NULL, 'b',  -3, NULL,  'x'),
          (5, 1,    NULL, NULL, NULL, NULL);
      INSERT INTO old_log SELECT generate_series(1, 7);
      ANALYZE owners;
      ANALYZE orders;
      """;

  @TempDir Path temp;

  private String staging;

  @BeforeEach
  void staging() throws SQLException {
    staging = PostgresExtension.newDatabase();
    try (Connection c = PostgresExtension.connect(staging);
        Statement s = c.createStatement()) {
      s.execute(BASE);
      s.execute(ROWS);
    }
  }

  @AfterEach
  void drop() throws SQLException {
    PostgresExtension.dropDatabase(staging);
  }

  private SchemaDiff.Compared compare(String head) throws IOException {
    Path base = Files.createDirectories(temp.resolve("base"));
    Files.writeString(base.resolve("V1__base.sql"), BASE);
    Path headDir = Files.createDirectories(temp.resolve("head"));
    Files.writeString(headDir.resolve("V1__base.sql"), BASE);
    Files.writeString(headDir.resolve("V2__change.sql"), head);
    return SchemaDiff.compare(
        new SchemaDiff.Request(
            base.toString(),
            headDir.toString(),
            Map.of(),
            Map.of(),
            Map.of(),
            PG.jdbcUrl(),
            FailOn.NEVER,
            false));
  }

  private static List<String> lines(AgainstReport report) {
    List<String> lines = new ArrayList<>();
    for (DataCheck c : report.checks()) {
      lines.add(
          c.kind().label()
              + " "
              + c.table()
              + " "
              + c.object()
              + ": "
              + c.status().label()
              + " "
              + c.count());
    }
    return lines;
  }

  private static String size(String database, String table) throws SQLException {
    try (Connection c = PostgresExtension.connect(database);
        Statement s = c.createStatement();
        ResultSet r =
            s.executeQuery("SELECT pg_size_pretty(pg_total_relation_size('" + table + "'))")) {
      r.next();
      return r.getString(1);
    }
  }

  @Test
  void counts_the_rows_each_new_constraint_rejects_and_the_rows_each_drop_loses() throws Exception {
    SchemaDiff.Compared compared = compare(HEAD);
    assertThat(compared.report().verified()).as(compared.report().verdict()).isTrue();

    AgainstReport against =
        AgainstDatabase.check(
            compared, TestServer.get().urlFor(staging), Duration.ofSeconds(30), 1000);

    assertThat(lines(against))
        .containsExactlyInAnyOrder(
            "dropped-table old_log table `old_log`: rows 7",
            "not-null orders column `placed`: rows 4",
            "dropped-column orders column `legacy`: rows 4",
            "unique orders constraint `orders_code_key`: rows 2",
            "foreign-key orders constraint `orders_owner_fk`: rows 1",
            "check orders constraint `orders_total_check`: rows 3",
            "not-null owners column `name`: clean 0");
    assertThat(against.rejects()).isTrue();
    assertThat(against.incomplete()).as(against.sizes().toString()).isFalse();
    assertThat(against.unreachable()).isNull();
    assertThat(against.sizes())
        .extracting(TableSize::sentence)
        .contains(
            "rewrites `owners` (" + size(staging, "owners") + ", ~2 rows) under ACCESS EXCLUSIVE");

    String markdown = against.markdown(compared.report().markdown());
    assertThat(markdown)
        .contains(
            "> **Against `"
                + AgainstReport.displayName(TestServer.get().urlFor(staging))
                + "`: 4 checks find rows the SQL fails on, 2 dropped objects hold data,"
                + " 1 clean, 7 locking changes with its table's size.** Do not run this SQL on"
                + " it as it is.\n")
        .contains(
            "- locks `orders` ("
                + size(staging, "orders")
                + ", ~5 rows) under SHARE ROW EXCLUSIVE: constraint `orders_owner_fk` added\n")
        .contains(
            "| check | `orders` | constraint `orders_total_check` | 3 | **fails**: 3 rows rejected |")
        .contains(
            "| dropped-table | `old_log` | table `old_log` | 7 | **loses data**: 7 rows hold data |")
        .endsWith("\n" + DiffReport.MARKER + "\n");
    // docs/schema-diff.md shows this run's summary and section
    String shown =
        docsExample()
            .replace(
                "replica:5432/app", AgainstReport.displayName(TestServer.get().urlFor(staging)));
    int cut = shown.indexOf("\n\n");
    assertThat(markdown)
        .contains(shown.substring(0, cut + 2))
        .contains(shown.substring(cut + 2) + "\n### SQL from base to head");
    assertThat(markdown.indexOf("### Data checks against"))
        .isLessThan(markdown.indexOf("### SQL from base to head"));

    JsonNode json = new ObjectMapper().readTree(against.json(compared.report().json()));
    assertThat(json.get("verdict").asText()).isEqualTo(compared.report().verdict());
    JsonNode check = json.at("/against/checks");
    assertThat(check).hasSize(7);
    assertThat(json.at("/against/timeoutMs").asLong()).isEqualTo(30000);
    assertThat(against.sql(compared.report().sql()))
        .contains(
            "-- against, check constraint orders_total_check on orders: fails: 3 rows rejected\n");

    // Read-only: the staging rows are as they were.
    try (Connection c = PostgresExtension.connect(staging);
        Statement s = c.createStatement();
        ResultSet r =
            s.executeQuery(
                "SELECT (SELECT count(*) FROM orders WHERE legacy IS NOT NULL),"
                    + " (SELECT count(*) FROM old_log)")) {
      r.next();
      assertThat(r.getLong(1)).isEqualTo(4);
      assertThat(r.getLong(2)).isEqualTo(7);
    }
  }

  /** The Markdown block of docs/schema-diff.md that shows the data checks. */
  private static String docsExample() throws IOException {
    String page = Files.readString(Path.of("..", "docs", "schema-diff.md"));
    int at = page.indexOf("adds, for the pull request of `AgainstDatabaseTest`");
    assertThat(at).isNotNegative();
    int start = page.indexOf("```markdown\n", at) + "```markdown\n".length();
    return page.substring(start, page.indexOf("```\n", start));
  }

  @Test
  void a_count_stops_at_the_limit() throws Exception {
    SchemaDiff.Compared compared = compare("DROP TABLE old_log;\n");
    AgainstReport against =
        AgainstDatabase.check(
            compared, TestServer.get().urlFor(staging), Duration.ofSeconds(30), 5);
    assertThat(against.checks())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.rows()).isEqualTo(6);
              assertThat(c.more()).isTrue();
              assertThat(c.count()).isEqualTo("more than 5");
            });
  }

  @Test
  void every_query_runs_read_only_even_one_calling_a_function_that_writes() throws Exception {
    // nextval() is not undone by a rollback: only the read-only transaction keeps it from running.
    SchemaDiff.Compared compared =
        compare(
            "ALTER TABLE orders ADD CONSTRAINT orders_audited CHECK (nextval('audit_seq') > 0);\n");

    AgainstReport against =
        AgainstDatabase.check(
            compared, TestServer.get().urlFor(staging), Duration.ofSeconds(30), 1000);

    assertThat(against.checks())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.status()).isEqualTo(DataCheck.Status.NOT_RUN);
              assertThat(c.note())
                  .isEqualTo(
                      "ERROR: cannot execute nextval() in a read-only transaction (SQL state 25006)");
            });
    assertThat(against.rejects()).isFalse();
    assertThat(against.incomplete()).isTrue();
    try (Connection c = PostgresExtension.connect(staging);
        Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT is_called FROM audit_seq")) {
      r.next();
      assertThat(r.getBoolean(1)).isFalse();
    }
  }

  @Test
  void a_query_over_its_statement_timeout_is_not_run_and_the_others_still_run() throws Exception {
    SchemaDiff.Compared compared = compare(HEAD);
    try (Connection locker = PostgresExtension.connect(staging);
        Statement s = locker.createStatement()) {
      locker.setAutoCommit(false);
      // Held until the checks are done: every read of orders waits on it.
      s.execute("LOCK TABLE orders IN ACCESS EXCLUSIVE MODE");

      AgainstReport against =
          AgainstDatabase.check(
              compared, TestServer.get().urlFor(staging), Duration.ofSeconds(1), 1000);

      locker.rollback();
      assertThat(lines(against))
          .containsExactlyInAnyOrder(
              "dropped-table old_log table `old_log`: rows 7",
              "not-null orders column `placed`: not run -",
              "dropped-column orders column `legacy`: not run -",
              "unique orders constraint `orders_code_key`: not run -",
              "foreign-key orders constraint `orders_owner_fk`: not run -",
              "check orders constraint `orders_total_check`: not run -",
              "not-null owners column `name`: clean 0");
      assertThat(against.checks())
          .filteredOn(c -> c.status() == DataCheck.Status.NOT_RUN)
          .extracting(DataCheck::note)
          .containsOnly("timed out (statement_timeout 1 s)");
      assertThat(against.incomplete()).isTrue();
      assertThat(against.rejects()).isFalse();
      assertThat(against.markdown(compared.report().markdown()))
          .contains("5 not run")
          .contains("**not run**: timed out (statement_timeout 1 s)");
    }
  }

  @Test
  void an_unreachable_database_leaves_every_check_not_run_and_never_shows_the_password()
      throws Exception {
    SchemaDiff.Compared compared = compare(HEAD);
    String url = "jdbc:postgresql://127.0.0.1:1/staging?user=ci&password=s3cr3t-Pw%21";

    AgainstReport against = AgainstDatabase.check(compared, url, Duration.ofSeconds(5), 1000);

    assertThat(against.unreachable()).startsWith("unreachable: ");
    assertThat(against.checks()).hasSize(7).allMatch(c -> c.status() == DataCheck.Status.NOT_RUN);
    assertThat(against.sizes()).isNotEmpty().allMatch(s -> s.size() == null);
    assertThat(against.incomplete()).isTrue();
    assertThat(against.rejects()).isFalse();
    String markdown = against.markdown(compared.report().markdown());
    assertThat(markdown)
        .contains("Data checks against `127.0.0.1:1/staging` not run: unreachable: ")
        .contains("No data-dependent verdict was checked.");
    for (String out :
        List.of(
            markdown,
            against.sql(compared.report().sql()),
            against.json(compared.report().json()))) {
      assertThat(out).doesNotContain("s3cr3t").doesNotContain("password");
    }
  }
}
