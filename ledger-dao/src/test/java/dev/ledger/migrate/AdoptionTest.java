package dev.ledger.migrate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.LedgerMigrations;
import dev.ledger.testing.Fixtures;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Each reference-stack ledger of {@code shared/fixtures}, loaded into an empty database and
 * migrated, reaches the current version with every task, promotion and event row as it was.
 */
class AdoptionTest {

  private static final List<String> SHARED_DOMAINS = List.of("Acme Corp/EU", "acme", "café-ü");
  private static final List<String> TASK_COLUMNS =
      List.of(
          "id",
          "domain",
          "title",
          "body",
          "requirements",
          "depends_on",
          "origin",
          "upstream_event",
          "created_by",
          "label_rank",
          "priority",
          "created",
          "status",
          "holder",
          "lease_until",
          "attempts",
          "handoff",
          "reason",
          "superseded_by",
          "posted_to");
  private static final String TASKS_SELECT = String.join(", ", TASK_COLUMNS);
  private static final String FIRST_SHAPE_PROMOTION_SELECT =
      "seq, domain, entry, tier, promoter, author, why, label_rank, digest, at";

  @Test
  void shared_tables_move_into_one_schema_per_domain_row_for_row_and_are_kept_renamed()
      throws Exception {
    String db = PostgresExtension.newDatabase();
    try {
      Fixtures.load(db, Fixtures.SHARED_TABLES);
      Map<String, List<List<String>>> tasksBefore = new LinkedHashMap<>();
      Map<String, List<List<String>>> eventsBefore = new LinkedHashMap<>();
      try (Connection c = PostgresExtension.connect(db)) {
        assertThat(Fixtures.count(c, "SELECT count(*) FROM public.tasks")).isEqualTo(360);
        assertThat(Fixtures.count(c, "SELECT count(*) FROM public.events")).isEqualTo(1572);
        for (String domain : SHARED_DOMAINS) {
          tasksBefore.put(
              domain,
              Fixtures.rows(
                  c,
                  "SELECT "
                      + TASKS_SELECT
                      + " FROM public.tasks WHERE domain = "
                      + literal(domain)
                      + " ORDER BY id"));
          eventsBefore.put(
              domain,
              Fixtures.rows(
                  c,
                  "SELECT e.task_id, e.kind, e.at, e.payload FROM public.events e"
                      + " JOIN public.tasks t ON t.id = e.task_id WHERE t.domain = "
                      + literal(domain)
                      + " ORDER BY e.seq"));
        }
      }

      MigrationReport report = job(db).migrate();

      assertThat(report.ok()).as("%s", report.schemas()).isTrue();
      assertThat(report.directory().state()).isEqualTo(SchemaState.ADOPTED);
      assertThat(report.directory().applied())
          .containsExactlyElementsOf(dev.ledger.testing.MigrationScripts.directoryVersions());
      assertThat(report.sharedTables().moved()).isTrue();
      assertThat(report.sharedTables().error()).isNull();
      assertThat(report.sharedTables().eventsLeftBehind()).isZero();
      assertThat(report.sharedTables().tasksKeptAs())
          .isEqualTo("public.tasks_before_domain_schemas");
      assertThat(report.sharedTables().domains())
          .extracting(SharedTablesReport.MovedDomain::domain)
          .containsExactlyElementsOf(SHARED_DOMAINS);
      assertThat(report.sharedTables().domains().stream().mapToLong(d -> d.tasks()).sum())
          .isEqualTo(360);
      assertThat(report.sharedTables().domains().stream().mapToLong(d -> d.events()).sum())
          .isEqualTo(1572);
      assertThat(report.domains())
          .extracting(SchemaReport::schema)
          .containsExactlyInAnyOrderElementsOf(
              SHARED_DOMAINS.stream().map(DomainSchemas::schemaName).toList());
      for (SchemaReport r : report.domains()) {
        assertThat(r.state()).isEqualTo(SchemaState.CREATED);
        assertThat(r.applied())
            .containsExactlyElementsOf(TestDatabases.versions(1, LedgerMigrations.DOMAIN_VERSION));
        assertThat(r.versionAfter()).isEqualTo(LedgerMigrations.DOMAIN_VERSION);
        assertThat(r.checksums()).isEqualTo(ChecksumState.MATCH);
      }

      try (Connection c = PostgresExtension.connect(db)) {
        for (String domain : SHARED_DOMAINS) {
          String s = "\"" + DomainSchemas.schemaName(domain) + "\"";
          assertThat(
                  Fixtures.rows(c, "SELECT " + TASKS_SELECT + " FROM " + s + ".tasks ORDER BY id"))
              .isEqualTo(tasksBefore.get(domain));
          assertThat(
                  Fixtures.rows(
                      c, "SELECT task_id, kind, at, payload FROM " + s + ".events ORDER BY seq"))
              .isEqualTo(eventsBefore.get(domain));
          assertThat(
                  Fixtures.rows(
                      c,
                      "SELECT schema FROM public.ledger_domains WHERE domain = " + literal(domain)))
              .containsExactly(List.of(DomainSchemas.quotedSchemaName(domain)));
          assertCompletedRouted(c, s, domain, tasksBefore.get(domain).size());
        }
        assertThat(Fixtures.count(c, "SELECT count(*) FROM public.tasks_before_domain_schemas"))
            .isEqualTo(360);
        assertThat(Fixtures.count(c, "SELECT count(*) FROM public.events_before_domain_schemas"))
            .isEqualTo(1572);
        assertThat(
                Fixtures.count(
                    c,
                    "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
                        + " AND tablename IN ('tasks', 'events')"))
            .isZero();
      }
      assertReplayReproducesTheProjection(db, SHARED_DOMAINS);
      assertSecondRunIsANoOp(db, 3);
    } finally {
      PostgresExtension.dropDatabase(db);
    }
  }

  @Test
  void domain_schemas_without_promotions_are_baselined_at_1_and_keep_every_row() throws Exception {
    List<String> domains = List.of("acme", "ops.payments", "Ünïcode Team");
    adoptDomainSchemas(Fixtures.DOMAIN_SCHEMAS, domains, AdoptedShape.NO_PROMOTIONS, 360, 1561, 0);
  }

  @Test
  void first_shape_promotions_are_baselined_at_2_and_gain_their_columns_and_key() throws Exception {
    adoptDomainSchemas(
        Fixtures.PROMOTIONS_V1,
        List.of("acme", "docs"),
        AdoptedShape.PROMOTIONS_FIRST_SHAPE,
        160,
        655,
        6);
  }

  private void adoptDomainSchemas(
      String fixture,
      List<String> domains,
      AdoptedShape shape,
      int tasks,
      int events,
      int promotions)
      throws Exception {
    String db = PostgresExtension.newDatabase();
    try {
      Fixtures.load(db, fixture);
      Map<String, List<List<String>>> before = new LinkedHashMap<>();
      try (Connection c = PostgresExtension.connect(db)) {
        assertThat(Fixtures.count(c, "SELECT count(*) FROM public.ledger_tasks")).isEqualTo(tasks);
        for (String domain : domains) {
          String s = "\"" + DomainSchemas.schemaName(domain) + "\"";
          before.put(
              domain + "/tasks",
              Fixtures.rows(c, "SELECT " + TASKS_SELECT + " FROM " + s + ".tasks ORDER BY id"));
          before.put(
              domain + "/events",
              Fixtures.rows(
                  c, "SELECT seq, task_id, kind, at, payload FROM " + s + ".events ORDER BY seq"));
          if (promotions > 0) {
            before.put(
                domain + "/promotions",
                Fixtures.rows(
                    c,
                    "SELECT "
                        + FIRST_SHAPE_PROMOTION_SELECT
                        + " FROM "
                        + s
                        + ".promotions ORDER BY seq"));
          }
        }
      }

      MigrationReport report = job(db).migrate();

      assertThat(report.ok()).as("%s", report.schemas()).isTrue();
      assertThat(report.sharedTables()).isNull();
      assertThat(report.directory().state()).isEqualTo(SchemaState.ADOPTED);
      assertThat(report.directory().applied())
          .containsExactlyElementsOf(dev.ledger.testing.MigrationScripts.directoryVersions());
      assertThat(report.domains()).hasSize(domains.size());
      List<String> rest =
          TestDatabases.versions(
              Integer.parseInt(shape.baselineVersion()) + 1, LedgerMigrations.DOMAIN_VERSION);
      for (SchemaReport r : report.domains()) {
        assertThat(r.state()).as(r.schema()).isEqualTo(SchemaState.ADOPTED);
        assertThat(r.adoptedShape()).isEqualTo(shape);
        assertThat(r.versionBefore()).isNull();
        assertThat(r.applied()).containsExactlyElementsOf(rest);
        assertThat(r.versionAfter()).isEqualTo(LedgerMigrations.DOMAIN_VERSION);
        assertThat(r.catalogExtras()).isEmpty();
      }

      try (Connection c = PostgresExtension.connect(db)) {
        long promotionRows = 0;
        for (String domain : domains) {
          String s = "\"" + DomainSchemas.schemaName(domain) + "\"";
          assertThat(
                  Fixtures.rows(c, "SELECT " + TASKS_SELECT + " FROM " + s + ".tasks ORDER BY id"))
              .isEqualTo(before.get(domain + "/tasks"));
          assertThat(
                  Fixtures.rows(
                      c,
                      "SELECT seq, task_id, kind, at, payload FROM " + s + ".events ORDER BY seq"))
              .isEqualTo(before.get(domain + "/events"));
          assertThat(
                  Fixtures.rows(
                      c,
                      "SELECT version, type FROM "
                          + s
                          + ".flyway_schema_history WHERE type = 'BASELINE'"))
              .containsExactly(List.of(shape.baselineVersion(), "BASELINE"));
          if (promotions > 0) {
            assertThat(
                    Fixtures.rows(
                        c,
                        "SELECT "
                            + FIRST_SHAPE_PROMOTION_SELECT
                            + " FROM "
                            + s
                            + ".promotions ORDER BY seq"))
                .isEqualTo(before.get(domain + "/promotions"));
            assertThat(
                    Fixtures.count(
                        c,
                        "SELECT count(*) FROM "
                            + s
                            + ".promotions WHERE new_digest <> '' OR why_erased <> 0"))
                .isZero();
            promotionRows += Fixtures.count(c, "SELECT count(*) FROM " + s + ".promotions");
          }
          assertCompletedRouted(c, s, domain, before.get(domain + "/tasks").size());
        }
        assertThat(promotionRows).isEqualTo(promotions);
        long allEvents = 0;
        for (String domain : domains) {
          allEvents += before.get(domain + "/events").size();
        }
        assertThat(allEvents).isEqualTo(events);
      }
      assertReplayReproducesTheProjection(db, domains);
      assertSecondRunIsANoOp(db, domains.size());
    } finally {
      PostgresExtension.dropDatabase(db);
    }
  }

  @Test
  void adoption_normalises_time_text_so_the_first_replay_rewrites_nothing() throws Exception {
    String db = PostgresExtension.newDatabase();
    List<String> domains = List.of("acme", "ops.payments", "Ünïcode Team");
    try {
      Fixtures.load(db, Fixtures.DOMAIN_SCHEMAS);
      String s = "\"" + DomainSchemas.schemaName("acme") + "\"";
      try (Connection c = PostgresExtension.connect(db);
          java.sql.Statement st = c.createStatement()) {
        // widths and offsets older writers used, in the log and the projection alike: 3 and 9
        // fractional digits, none, and a +09:00 offset (the same instant)
        String[] forms = {
          "regexp_replace(%s, '\\.([0-9]{3})[0-9]{3}Z$', '.\\1Z')",
          "regexp_replace(%s, 'Z$', '789Z')",
          "regexp_replace(%s, '\\.[0-9]{6}Z$', 'Z')",
          "to_char(%s::timestamptz AT TIME ZONE 'Asia/Tokyo', 'YYYY-MM-DD\"T\"HH24:MI:SS.US')"
              + " || '+09:00'"
        };
        for (int i = 0; i < forms.length; i++) {
          String subset = "(abs(hashtext(id)) % 4 = " + i + ")";
          String eventSubset = "(abs(hashtext(task_id)) % 4 = " + i + ")";
          st.execute(
              "UPDATE "
                  + s
                  + ".events SET at = "
                  + forms[i].formatted("at")
                  + " WHERE kind = 'created' AND "
                  + eventSubset);
          st.execute(
              "UPDATE "
                  + s
                  + ".tasks SET created = "
                  + forms[i].formatted("created")
                  + " WHERE "
                  + subset);
          st.execute(
              "UPDATE "
                  + s
                  + ".events SET payload = jsonb_set(payload::jsonb, '{until}',"
                  + " to_jsonb("
                  + forms[i].formatted("(payload::jsonb->>'until')")
                  + "))::text"
                  + " WHERE kind IN ('claimed', 'heartbeat') AND "
                  + eventSubset);
          st.execute(
              "UPDATE "
                  + s
                  + ".tasks SET lease_until = "
                  + forms[i].formatted("lease_until")
                  + " WHERE lease_until IS NOT NULL AND "
                  + subset);
        }
        assertThat(Fixtures.count(c, "SELECT count(*) FROM " + s + ".tasks" + NON_CANONICAL))
            .isGreaterThan(20);
        assertThat(
                Fixtures.count(
                    c,
                    "SELECT count(*) FROM "
                        + s
                        + ".tasks WHERE lease_until IS NOT NULL AND"
                        + " lease_until !~ '^[0-9-]{10}T[0-9:]{8}\\.[0-9]{6}Z$'"))
            .isPositive();
      }

      MigrationReport report = job(db).migrate();

      assertThat(report.ok()).as("%s", report.schemas()).isTrue();
      try (Connection c = PostgresExtension.connect(db)) {
        assertThat(Fixtures.count(c, "SELECT count(*) FROM " + s + ".tasks" + NON_CANONICAL))
            .isZero();
        assertThat(
                Fixtures.count(
                    c,
                    "SELECT count(*) FROM "
                        + s
                        + ".tasks WHERE lease_until IS NOT NULL AND"
                        + " lease_until !~ '^[0-9-]{10}T[0-9:]{8}\\.[0-9]{6}Z$'"))
            .isZero();
      }
      assertReplayReproducesTheProjection(db, domains);
    } finally {
      PostgresExtension.dropDatabase(db);
    }
  }

  private static final String NON_CANONICAL =
      " WHERE created !~ '^[0-9-]{10}T[0-9:]{8}\\.[0-9]{6}Z$'";

  /** Every task of the domain is routed, and {@code completed} says whether it completed. */
  private static void assertCompletedRouted(
      Connection c, String quotedSchema, String domain, int tasks) throws SQLException {
    assertThat(
            Fixtures.count(
                c,
                "SELECT count(*) FROM public.ledger_tasks r JOIN "
                    + quotedSchema
                    + ".tasks t ON t.id = r.id WHERE r.domain = "
                    + literal(domain)
                    + " AND r.completed = (t.status = 'completed')"))
        .isEqualTo(tasks);
    assertThat(
            Fixtures.count(
                c, "SELECT count(*) FROM " + quotedSchema + ".tasks WHERE status = 'completed'"))
        .isPositive();
  }

  /**
   * The first replay ({@link Ledger#rebuild()}) after the migration changes no row: tasks (their
   * {@code blocked} flags included, which the migration computed), promotions, routes, claim
   * classes and dependency edges. Some task is blocked, so the flags are really compared.
   */
  private static void assertReplayReproducesTheProjection(String db, List<String> domains)
      throws SQLException {
    Map<String, List<List<String>>> before = projection(db, domains, true);
    Ledger ledger =
        Ledger.open(TestDatabases.dataSource(db), LedgerConfig.builder().runtimeDdl(false).build());
    assertThat(ledger.rebuild()).isPositive();
    assertThat(projection(db, domains, true)).isEqualTo(before);
    try (Connection c = PostgresExtension.connect(db)) {
      long blocked = 0;
      for (String domain : domains) {
        String s = "\"" + DomainSchemas.schemaName(domain) + "\"";
        blocked += Fixtures.count(c, "SELECT count(*) FROM " + s + ".tasks WHERE blocked");
      }
      assertThat(blocked).isPositive();
    }
  }

  private static Map<String, List<List<String>>> projection(
      String db, List<String> domains, boolean withBlocked) throws SQLException {
    Map<String, List<List<String>>> out = new LinkedHashMap<>();
    try (Connection c = PostgresExtension.connect(db)) {
      for (String domain : domains) {
        String s = "\"" + DomainSchemas.schemaName(domain) + "\"";
        out.put(
            domain + "/tasks",
            Fixtures.rows(
                c,
                "SELECT "
                    + TASKS_SELECT
                    + (withBlocked ? ", blocked" : "")
                    + " FROM "
                    + s
                    + ".tasks ORDER BY id"));
        out.put(
            domain + "/promotions",
            Fixtures.rows(c, "SELECT * FROM " + s + ".promotions ORDER BY seq"));
        out.put(
            domain + "/claim_classes",
            Fixtures.rows(c, "SELECT * FROM " + s + ".claim_classes ORDER BY 1, 2"));
      }
      out.put("ledger_tasks", Fixtures.rows(c, "SELECT * FROM public.ledger_tasks ORDER BY id"));
      out.put(
          "ledger_dependencies",
          Fixtures.rows(c, "SELECT * FROM public.ledger_dependencies ORDER BY 1, 2"));
    }
    return out;
  }

  private static void assertSecondRunIsANoOp(String db, int domains) {
    MigrationReport again = job(db).migrate();
    assertThat(again.ok()).isTrue();
    assertThat(again.counts().flywayRuns()).isZero();
    assertThat(again.counts().current()).isEqualTo(domains + 1);
    assertThat(again.counts().schemas()).isEqualTo(domains + 1);
    assertThat(again.sharedTables()).isNull();
    assertThat(again.schemas()).allMatch(r -> r.applied().isEmpty() && r.error() == null);
    MigrationReport plan = job(db).plan();
    assertThat(plan.counts().pending()).isZero();
    assertThat(plan.counts().current()).isEqualTo(domains + 1);
  }

  static MigrationJob job(String db) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(TestServer.get().urlFor(db));
    return MigrationJob.builder().dataSource(ds).parallelism(3).build();
  }

  private static String literal(String text) {
    return "'" + text.replace("'", "''") + "'";
  }
}
