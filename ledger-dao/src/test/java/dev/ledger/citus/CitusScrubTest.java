package dev.ledger.citus;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.FailureRecord;
import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.LedgerTransaction;
import dev.ledger.PromotionSpec;
import dev.ledger.Redaction;
import dev.ledger.ScrubResult;
import dev.ledger.Status;
import dev.ledger.TaskSpec;
import dev.ledger.testing.CitusCluster;
import dev.ledger.testing.Fixtures;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Erasure over a real Citus cluster ({@link CitusCluster}): two domains, each a distributed schema
 * on its own worker, scrubbed ({@code scrubEntry}) in one caller's transaction that writes both
 * workers and the coordinator. Afterwards the erased texts are searched for in every row of every
 * table that holds rows on every node (the coordinator's directory, each worker's shards), not
 * through the ledger's reads.
 */
@Tag("slow")
class CitusScrubTest {

  static final Duration MINUTE = Duration.ofMinutes(1);
  static final String DATABASE = "ledger_citus_scrub";
  static CitusCluster cluster;
  static String url;
  static HikariDataSource pool;
  static Ledger ledger;

  @BeforeAll
  static void open() throws Exception {
    cluster = CitusCluster.shared();
    url = cluster.createDatabase(DATABASE);
    pool = PostgresExtension.pool(url, 8);
    ledger = Ledger.open(pool, LedgerConfig.builder().build());
  }

  @AfterAll
  static void close() {
    if (pool != null) {
      pool.close();
    }
  }

  /** The texts a domain's tasks and promotions carry; each domain has its own. */
  static List<String> secrets(String tag) {
    return List.of(
        "TITLE-" + tag,
        "BODY-" + tag,
        "REASON-" + tag,
        "HANDOFF-LEFT-" + tag,
        "HANDOFF-DONE-" + tag,
        "WHY-" + tag,
        "RESCORE-" + tag,
        "ERROR-" + tag);
  }

  /**
   * Files, in a domain, every kind of text a scrub of {@code origin} must erase: a task rescored,
   * handed off and completed; one invalidated with a reason; one left open; one whose attempt
   * failed (its retry carries the title); two promotions of {@code entry} with a why; and a task of
   * another origin that the scrub keeps.
   *
   * @return the ids: completed, invalidated, open, failed, its retry, kept
   */
  static List<String> fill(String domain, String entry, String origin, List<String> s) {
    String done =
        ledger.file(
            TaskSpec.builder(domain, "t " + s.get(0))
                .body("b " + s.get(1))
                .origin(origin, "e1")
                .build());
    ledger.admit(done);
    ledger.rescore(done, 1, s.get(6) + " too");
    Lease lease = ledger.claim(done, "w", MINUTE, List.of(), Label.PUBLIC);
    ledger.leaveHandoff(lease, "h " + s.get(3));
    ledger.complete(lease, "h " + s.get(4));
    String invalid =
        ledger.file(TaskSpec.builder(domain, "x " + s.get(0)).origin(origin, "e2").build());
    ledger.invalidate(invalid, "r " + s.get(2), null);
    String open =
        ledger.file(
            TaskSpec.builder(domain, "y " + s.get(0)).body(s.get(1)).origin(origin, "e3").build());
    ledger.admit(open);
    String failing =
        ledger.file(TaskSpec.builder(domain, "f " + s.get(0)).origin(origin, "e4").build());
    ledger.admit(failing);
    FailureRecord failure =
        ledger.fail(
            ledger.claim(failing, "w", MINUTE, List.of(), Label.PUBLIC),
            "smtp " + s.get(7),
            3,
            Duration.ZERO);
    String kept = ledger.file(TaskSpec.builder(domain, "keep me").build());
    for (String tier : List.of("reviewed", "canonical")) {
      ledger.recordPromotion(
          new PromotionSpec(
              domain, entry, tier, "dan", "erin", "w " + s.get(5), Label.PUBLIC, "d1", ""));
    }
    return List.of(done, invalid, open, failing, failure.retryId(), kept);
  }

  @Test
  void scrub_entry_of_domains_on_both_workers_leaves_the_text_in_no_row_of_any_node()
      throws Exception {
    String a = "erase-east";
    String b = "erase-west";
    int first = cluster.workers().get(0).port();
    int second = cluster.workers().get(1).port();
    move(ledger.provision(a), first);
    move(ledger.provision(b), second);
    List<String> secretsA = secrets("a7f3");
    List<String> secretsB = secrets("b9c1");
    List<String> idsA = fill(a, "runbook/east", "entry:east", secretsA);
    List<String> idsB = fill(b, "runbook/west", "entry:west", secretsB);
    // a task of the west domain waits on the east domain's open task (a route across workers)
    String waiting =
        ledger.file(
            TaskSpec.builder(b, "waits " + secretsB.get(0))
                .origin("entry:west", "e5")
                .dependsOn(List.of(idsA.get(2)))
                .build());
    ledger.admit(waiting);

    List<String> all = new ArrayList<>(secretsA);
    all.addAll(secretsB);
    // before: every text of a domain is in rows on its worker, and on no other node
    List<String> expected = new ArrayList<>();
    secretsA.forEach(t -> expected.add(first + " " + t));
    secretsB.forEach(t -> expected.add(second + " " + t));
    List<String> before = occurrences(all);
    assertThat(before).containsExactlyInAnyOrderElementsOf(expected);

    // a caller's transaction over both workers rolled back: nothing is erased
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      LedgerTransaction tx = ledger.in(c);
      assertThat(tx.scrubEntry(a, "runbook/east", "entry:east", Redaction.ERASED))
          .isEqualTo(new ScrubResult(2, 5));
      assertThat(tx.scrubEntry(b, "runbook/west", "entry:west", Redaction.ERASED))
          .isEqualTo(new ScrubResult(2, 6));
      c.rollback();
    }
    assertThat(occurrences(all)).containsExactlyInAnyOrderElementsOf(before);
    assertThat(ledger.get(idsA.get(2)).status()).isEqualTo(Status.ADMITTED);

    // committed: both workers' rows and the coordinator's, one two-phase commit
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      LedgerTransaction tx = ledger.in(c);
      assertThat(tx.scrubEntry(a, "runbook/east", "entry:east", Redaction.ERASED))
          .isEqualTo(new ScrubResult(2, 5));
      assertThat(tx.scrubEntry(b, "runbook/west", "entry:west", Redaction.ERASED))
          .isEqualTo(new ScrubResult(2, 6));
      c.commit();
    }
    assertThat(occurrences(all)).isEmpty();
    for (List<String> ids : List.of(idsA, idsB)) {
      assertThat(ledger.get(ids.get(0)).status()).isEqualTo(Status.COMPLETED);
      assertThat(ledger.get(ids.get(2)).status()).isEqualTo(Status.INVALIDATED);
      assertThat(ledger.get(ids.get(4)).status()).isEqualTo(Status.INVALIDATED);
      assertThat(ledger.get(ids.get(4)).spec().title()).isEqualTo("[erased]");
      assertThat(ledger.get(ids.get(5)).spec().title()).isEqualTo("keep me");
    }
    assertThat(ledger.get(waiting).status()).isEqualTo(Status.INVALIDATED);
    // no transaction of the scrub is left prepared on a worker
    for (CitusCluster.Node w : cluster.workers()) {
      try (Connection c = DriverManager.getConnection(cluster.urlFor(w, DATABASE))) {
        assertThat(Fixtures.count(c, "SELECT count(*) FROM pg_prepared_xacts")).isZero();
      }
    }
    // a replay of the scrubbed logs brings none of it back
    ledger.rebuild();
    assertThat(occurrences(all)).isEmpty();
    assertThat(ledger.get(idsB.get(2)).spec().title()).isEqualTo("[erased]");
  }

  /**
   * Where the texts are, searched in the rows themselves on every node (coordinator and workers):
   * every table of the ledger's database that stores rows on that node, its shards included ({@code
   * citus.override_table_visibility} off), and not the Citus tables' shells (which hold no rows of
   * their own and would route the query to the workers). System catalogs are not searched.
   *
   * @return one {@code "<port> <text>"} per node and text found there, sorted
   */
  static List<String> occurrences(List<String> texts) throws Exception {
    List<CitusCluster.Node> nodes = new ArrayList<>();
    nodes.add(cluster.coordinator());
    nodes.addAll(cluster.workers());
    java.util.TreeSet<String> found = new java.util.TreeSet<>();
    for (CitusCluster.Node node : nodes) {
      try (Connection c = DriverManager.getConnection(cluster.urlFor(node, DATABASE))) {
        try (Statement s = c.createStatement()) {
          s.execute("SET citus.override_table_visibility = off");
        }
        List<List<String>> tables =
            Fixtures.rows(
                c,
                "SELECT format('%I.%I', n.nspname, k.relname) FROM pg_class k"
                    + " JOIN pg_namespace n ON n.oid = k.relnamespace"
                    + " WHERE k.relkind = 'r'"
                    + " AND n.nspname NOT IN ('pg_catalog', 'information_schema')"
                    + " AND n.nspname NOT LIKE 'pg\\_toast%'"
                    + " AND NOT EXISTS (SELECT 1 FROM pg_dist_partition p"
                    + " WHERE p.logicalrelid = k.oid)");
        assertThat(tables).as("tables on port " + node.port()).isNotEmpty();
        for (List<String> table : tables) {
          for (String text : texts) {
            try (PreparedStatement ps =
                c.prepareStatement(
                    "SELECT EXISTS (SELECT 1 FROM "
                        + table.get(0)
                        + " r WHERE strpos(r::text, ?) > 0)")) {
              ps.setString(1, text);
              try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (rs.getBoolean(1)) {
                  found.add(node.port() + " " + text);
                }
              }
            }
          }
        }
      }
    }
    return List.copyOf(found);
  }

  /** The port of the worker that holds a distributed schema. */
  static int nodeOf(String schema) throws Exception {
    try (Connection c = DriverManager.getConnection(url)) {
      List<List<String>> rows =
          Fixtures.rows(
              c,
              "SELECT DISTINCT nodeport::text FROM citus_shards WHERE citus_table_type = 'schema'"
                  + " AND split_part(replace(table_name::text, '\"', ''), '.', 1) = '"
                  + schema
                  + "'");
      assertThat(rows).hasSize(1);
      return Integer.parseInt(rows.get(0).get(0));
    }
  }

  /** Moves a distributed schema (through one of its shards) to a worker. */
  static void move(String schema, int toPort) throws Exception {
    int from = nodeOf(schema);
    if (from != toPort) {
      try (Connection c = DriverManager.getConnection(url);
          Statement s = c.createStatement()) {
        s.execute(
            "SELECT citus_move_shard_placement(min(shardid), '127.0.0.1', "
                + from
                + ", '127.0.0.1', "
                + toPort
                + ", shard_transfer_mode := 'block_writes') FROM citus_shards"
                + " WHERE split_part(replace(table_name::text, '\"', ''), '.', 1) = '"
                + schema
                + "'");
      }
    }
    assertThat(nodeOf(schema)).isEqualTo(toPort);
  }
}
