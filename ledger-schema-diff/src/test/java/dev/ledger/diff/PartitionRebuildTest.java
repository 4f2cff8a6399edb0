package dev.ledger.diff;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.testing.PostgresExtension;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A table whose partitioning changes is made again with its rows ({@link PartitionRebuild}): the
 * script, its class and lock, the statement that it is not online, and the row check that verifies
 * the copy on the scratch schema, which must see rows that the script loses or puts in the wrong
 * partition, and refuse when it cannot write its rows.
 */
class PartitionRebuildTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @TempDir Path temp;

  private static final String PLAIN =
      "CREATE TABLE k (id bigint GENERATED ALWAYS AS IDENTITY, at date NOT NULL, note text,"
          + " PRIMARY KEY (id, at));\n"
          + "CREATE TABLE o (id bigint PRIMARY KEY, k_id bigint, k_at date,"
          + " FOREIGN KEY (k_id, k_at) REFERENCES k);\n";

  private static final String PARTITIONED =
      "CREATE TABLE k (id bigint GENERATED ALWAYS AS IDENTITY, at date NOT NULL, note text,"
          + " PRIMARY KEY (id, at)) PARTITION BY RANGE (at);\n"
          + "CREATE TABLE k_2025 PARTITION OF k FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');\n"
          + "CREATE TABLE k_2026 PARTITION OF k FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');\n"
          + "CREATE TABLE o (id bigint PRIMARY KEY, k_id bigint, k_at date,"
          + " FOREIGN KEY (k_id, k_at) REFERENCES k);\n";

  private int runs;

  private DiffReport diff(String baseDdl, String headDdl, boolean online) {
    runs++;
    Path base = Diffs.migrations(temp.resolve("base" + runs), "V1__schema.sql", baseDdl);
    Path head = Diffs.migrations(temp.resolve("head" + runs), "V1__schema.sql", headDdl);
    return SchemaDiff.run(Diffs.request(base, head, PG.jdbcUrl(), FailOn.NEVER, online));
  }

  @Test
  void a_table_becoming_partitioned_is_made_again_and_its_rows_checked_in_their_partitions() {
    DiffReport report = diff(PLAIN, PARTITIONED, false);
    assertThat(report.verification().status())
        .as(report.verification().sentence())
        .isEqualTo(Verification.Status.EXACT);
    assertThat(report.verification().rows())
        .containsExactly(
            "the copy of `k` checked with 2 rows: each kept, in its partition (k_2025, k_2026)");
    assertThat(report.verification().sentence())
        .isEqualTo(
            "checked: the base plus this SQL gives exactly the head; the copy of `k` checked with"
                + " 2 rows: each kept, in its partition (k_2025, k_2026)");
    assertThat(Diffs.changeLines(report))
        .containsExactly(
            "k table k changed destructive",
            "k table k_2025 added safe",
            "k table k_2026 added safe",
            "o constraint o_k_id_k_at_fkey changed locking");
    assertThat(report.diff().script())
        .containsExactly(
            "ALTER TABLE o DROP CONSTRAINT o_k_id_k_at_fkey;",
            "ALTER TABLE k RENAME TO \"k__ledger_old\";",
            "ALTER INDEX k_pkey RENAME TO \"k_pkey__ledger_old\";",
            "CREATE TABLE k (\n"
                + "    id bigint GENERATED ALWAYS AS IDENTITY (SEQUENCE NAME"
                + " \"k_id_seq__ledger_new\") NOT NULL,\n"
                + "    at date NOT NULL,\n"
                + "    note text,\n"
                + "    CONSTRAINT k_pkey PRIMARY KEY (id, at)\n"
                + ") PARTITION BY RANGE (at);",
            "CREATE TABLE k_2025 PARTITION OF k FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');",
            "CREATE TABLE k_2026 PARTITION OF k FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');",
            "INSERT INTO k (id, at, note) OVERRIDING SYSTEM VALUE SELECT id, at, note FROM"
                + " \"k__ledger_old\";",
            "SELECT setval('\"k_id_seq__ledger_new\"', v) FROM (SELECT"
                + " pg_sequence_last_value(pg_get_serial_sequence('\"k__ledger_old\"',"
                + " 'id')::regclass) AS v) AS s WHERE v IS NOT NULL;",
            "DROP TABLE \"k__ledger_old\";",
            "ALTER SEQUENCE \"k_id_seq__ledger_new\" RENAME TO \"k_id_seq\";",
            "ALTER TABLE o ADD CONSTRAINT o_k_id_k_at_fkey FOREIGN KEY (k_id, k_at) REFERENCES"
                + " k(id, at);");
    Change table = report.diff().changes().get(0);
    assertThat(table.lock()).isEqualTo("ACCESS EXCLUSIVE");
    assertThat(table.reason())
        .contains("ACCESS EXCLUSIVE on it from then until the transaction commits")
        .contains(
            "a row no partition of the head accepts fails the copy, and the script with it (it"
                + " rolls back): the head's partitions do not cover every value and it has no"
                + " DEFAULT partition");
    assertThat(table.online()).startsWith("not online: there is no online plan for this change");
    assertThat(report.markdown())
        .contains("| not online: there is no online plan for this change;")
        .doesNotContain("(`--online`)");
    assertThat(Diffs.json(report).get("verification").get("rows").get(0).asText())
        .isEqualTo(
            "the copy of `k` checked with 2 rows: each kept, in its partition (k_2025, k_2026)");
  }

  @Test
  void the_online_plan_says_plainly_that_it_is_not_online() {
    DiffReport report = diff(PLAIN, PARTITIONED, true);
    assertThat(report.verification().status()).isEqualTo(Verification.Status.EXACT);
    Change table = report.diff().changes().get(0);
    assertThat(table.reason())
        .contains(
            "this plan is not online: there is no online way to partition a table in one step;"
                + " the ACCESS EXCLUSIVE lock is held for the whole copy");
    assertThat(report.sql())
        .contains("-- destructive, table k changed: PostgreSQL cannot change how a table is")
        .contains("this plan is not online");
    assertThat(report.markdown()).contains("| not online: there is no online plan");
  }

  @Test
  void a_default_partition_makes_it_locking_and_a_partitioned_table_can_become_plain() {
    String head =
        PARTITIONED.replace(
            "CREATE TABLE o", "CREATE TABLE k_rest PARTITION OF k DEFAULT;\nCREATE TABLE o");
    DiffReport report = diff(PLAIN, head, false);
    assertThat(report.verification().status()).isEqualTo(Verification.Status.EXACT);
    assertThat(Diffs.changeLines(report).get(0)).isEqualTo("k table k changed locking");
    DiffReport back = diff(head, PLAIN, false);
    assertThat(back.verification().status())
        .as(back.verification().sentence())
        .isEqualTo(Verification.Status.EXACT);
    assertThat(Diffs.changeLines(back))
        .containsExactly(
            "k table k changed locking",
            "k table k_2025 dropped safe",
            "k table k_2026 dropped safe",
            "k table k_rest dropped safe",
            "o constraint o_k_id_k_at_fkey changed locking");
    assertThat(back.verification().rows())
        .containsExactly("the copy of `k` checked with 4 rows: each kept");
  }

  @Test
  void the_printed_script_keeps_the_rows_and_the_identity_position_of_a_table_holding_rows()
      throws SQLException {
    String head =
        PARTITIONED.replace(
            "CREATE TABLE o", "CREATE TABLE k_rest PARTITION OF k DEFAULT;\nCREATE TABLE o");
    DiffReport report = diff(PLAIN, head, false);
    assertThat(report.verification().status()).isEqualTo(Verification.Status.EXACT);
    try (Connection c = java.sql.DriverManager.getConnection(PG.jdbcUrl());
        Statement s = c.createStatement()) {
      s.execute("DROP SCHEMA IF EXISTS rebuilt CASCADE");
      s.execute("CREATE SCHEMA rebuilt");
      s.execute("SET search_path = rebuilt");
      s.execute(PLAIN);
      s.execute(
          "INSERT INTO k (at, note) VALUES ('2025-03-01', 'a'), ('2026-03-01', 'b'),"
              + " ('2024-03-01', 'c'), ('2025-04-01', 'd')");
      s.execute("DELETE FROM k WHERE note = 'd'"); // the sequence is ahead of the rows' keys
      s.execute("INSERT INTO o VALUES (1, 1, '2025-03-01')");
      c.setAutoCommit(false);
      for (String statement : report.diff().script()) {
        s.execute(statement);
      }
      c.commit();
      c.setAutoCommit(true);
      assertThat(
              rows(s, "SELECT tableoid::regclass || ' ' || id || ' ' || note FROM k ORDER BY id"))
          .containsExactly("k_2025 1 a", "k_2026 2 b", "k_rest 3 c");
      assertThat(rows(s, "INSERT INTO k (at, note) VALUES ('2025-05-01', 'e') RETURNING id"))
          .containsExactly("5");
      assertThat(
              rows(
                  s,
                  "SELECT conname FROM pg_constraint WHERE conrelid = 'o'::regclass"
                      + " AND contype = 'f' AND conparentid = 0"))
          .containsExactly("o_k_id_k_at_fkey");
      assertThat(rows(s, "SELECT relname FROM pg_class WHERE relname LIKE '%ledger%'")).isEmpty();
      s.execute("DROP SCHEMA rebuilt CASCADE");
    }
  }

  private static List<String> rows(Statement s, String query) throws SQLException {
    List<String> rows = new ArrayList<>();
    try (ResultSet r = s.executeQuery(query)) {
      while (r.next()) {
        rows.add(r.getString(1));
      }
    }
    return rows;
  }

  private static final PartitionRebuild.RowCheck CHECK =
      new PartitionRebuild.RowCheck(
          "k",
          "k",
          List.of(
              "INSERT INTO k (id, at) VALUES (1, '2025-01-01');",
              "INSERT INTO k (id, at) VALUES (2, '2026-01-01');"),
          List.of("id", "at"),
          List.of(
              new PartitionRebuild.Placement("k_2025", "k_2025", "at = '2025-01-01'"),
              new PartitionRebuild.Placement("k_2026", "k_2026", "at = '2026-01-01'")),
          null);

  private static final String REMAKE =
      "CREATE TABLE k (id bigint, at date) PARTITION BY RANGE (at);";

  private List<RowCheckRun.Outcome> check(List<String> script, PartitionRebuild.RowCheck check) {
    runs++;
    Path base =
        Diffs.migrations(
            temp.resolve("base" + runs), "V1__schema.sql", "CREATE TABLE k (id bigint, at date);");
    try (ScratchPostgres pg = ScratchPostgres.at(PG.jdbcUrl());
        MigrationSource source = MigrationSource.open("--base", base.toString())) {
      ScratchPostgres.Checked checked = pg.check(source, Map.of(), script, List.of(check));
      assertThat(checked.error()).isNull();
      return checked.rows();
    }
  }

  @Test
  void the_row_check_passes_a_copy_that_keeps_every_row_in_its_partition() {
    assertThat(
            check(
                List.of(
                    "ALTER TABLE k RENAME TO k_old;",
                    REMAKE,
                    "CREATE TABLE k_2025 PARTITION OF k FOR VALUES FROM ('2025-01-01') TO"
                        + " ('2026-01-01');",
                    "CREATE TABLE k_2026 PARTITION OF k FOR VALUES FROM ('2026-01-01') TO"
                        + " ('2027-01-01');",
                    "INSERT INTO k SELECT * FROM k_old;",
                    "DROP TABLE k_old;"),
                CHECK))
        .containsExactly(
            new RowCheckRun.Outcome("k", RowCheckRun.Status.CHECKED, 2, "k_2025, k_2026"));
  }

  @Test
  void the_row_check_sees_a_lost_row() {
    assertThat(
            check(
                List.of(
                    "ALTER TABLE k RENAME TO k_old;",
                    REMAKE,
                    "CREATE TABLE k_rest PARTITION OF k DEFAULT;",
                    "INSERT INTO k SELECT * FROM k_old WHERE id = 1;",
                    "DROP TABLE k_old;"),
                CHECK))
        .containsExactly(
            new RowCheckRun.Outcome(
                "k",
                RowCheckRun.Status.LOST,
                2,
                "2 sample rows before the script, 1 after, or changed"));
  }

  @Test
  void the_row_check_sees_a_row_in_the_wrong_partition() {
    assertThat(
            check(
                List.of(
                    "ALTER TABLE k RENAME TO k_old;",
                    REMAKE,
                    "CREATE TABLE k_2025 PARTITION OF k FOR VALUES FROM ('2025-01-01') TO"
                        + " ('2026-01-01');",
                    "CREATE TABLE k_2026 PARTITION OF k DEFAULT;",
                    "INSERT INTO k SELECT * FROM k_old;",
                    "DROP TABLE k_old;"),
                new PartitionRebuild.RowCheck(
                    "k",
                    "k",
                    CHECK.inserts(),
                    CHECK.columns(),
                    List.of(
                        new PartitionRebuild.Placement("k_2025", "k_2025", "at = '2026-01-01'")),
                    null)))
        .containsExactly(
            new RowCheckRun.Outcome(
                "k",
                RowCheckRun.Status.LOST,
                2,
                "1 rows where at = '2026-01-01', 0 of them in `k_2025`"));
  }

  @Test
  void rows_that_cannot_be_written_refuse_the_check_instead_of_passing_it() {
    List<RowCheckRun.Outcome> outcomes =
        check(
            List.of(),
            new PartitionRebuild.RowCheck(
                "k",
                "k",
                List.of("INSERT INTO k (id, at) VALUES ('x', '2025-01-01');"),
                CHECK.columns(),
                List.of(),
                null));
    assertThat(outcomes).hasSize(1);
    assertThat(outcomes.get(0).status()).isEqualTo(RowCheckRun.Status.UNWRITABLE);
    assertThat(outcomes.get(0).detail())
        .startsWith("ERROR: invalid input syntax for type bigint: \"x\"");
  }
}
