package dev.ledger.app.migrate;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.app.Cli;
import dev.ledger.app.ExitCodes;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.LedgerMigrations;
import dev.ledger.testing.Fixtures;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;

class MigrateCommandTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void plan_migrate_and_status_adopt_the_shared_tables_fixture_and_a_second_migrate_is_a_no_op()
      throws Exception {
    String db = PostgresExtension.newDatabase();
    try {
      Fixtures.load(db, Fixtures.SHARED_TABLES);
      String url = TestServer.get().urlFor(db);

      Cli.Result plan = Cli.run("plan", "--url", url, "--json");
      assertThat(plan.exit()).as(plan.err()).isEqualTo(ExitCodes.OK);
      JsonNode planned = JSON.readTree(plan.out());
      assertThat(planned.get("command").asText()).isEqualTo("ledger-app plan");
      assertThat(planned.at("/report/operation").asText()).isEqualTo("plan");
      assertThat(planned.at("/report/sharedTables/moved").asBoolean()).isFalse();
      assertThat(planned.at("/report/sharedTables/domains")).hasSize(3);
      assertThat(planned.at("/report/counts/pending").asInt()).isEqualTo(4);
      assertThat(planned.at("/report/counts/flywayRuns").asInt()).isZero();
      try (Connection c = PostgresExtension.connect(db)) {
        assertThat(Fixtures.count(c, "SELECT count(*) FROM public.tasks")).isEqualTo(360);
      }

      Cli.Result migrate = Cli.run("migrate", "--url", url, "--json", "--parallelism", "2");
      assertThat(migrate.exit()).as(migrate.err()).isEqualTo(ExitCodes.OK);
      JsonNode migrated = JSON.readTree(migrate.out());
      assertThat(migrated.get("exitCode").asInt()).isZero();
      assertThat(migrated.get("ok").asBoolean()).isTrue();
      assertThat(migrated.at("/report/sharedTables/moved").asBoolean()).isTrue();
      assertThat(migrated.at("/report/directory/state").asText()).isEqualTo("adopted");
      assertThat(migrated.at("/report/counts/created").asInt()).isEqualTo(3);
      assertThat(migrated.at("/report/domains/0/state").asText()).isEqualTo("created");
      assertThat(migrated.at("/report/domains/0/applied"))
          .hasSize(dev.ledger.testing.MigrationScripts.versions("domain").size());

      assertThat(migrated.at("/report/counts/recorded").asInt()).isEqualTo(4);

      Cli.Result again = Cli.run("migrate", "--url", url);
      assertThat(again.exit()).isEqualTo(ExitCodes.OK);
      assertThat(again.out())
          .contains("every schema is current")
          .contains("4 schemas: 4 current")
          .contains("0 Flyway runs, 0 installs, 2 catalog queries, 0 schemas checked, 0 recorded");

      Cli.Result status = Cli.run("status", "--url", url);
      assertThat(status.exit()).isEqualTo(ExitCodes.OK);
      assertThat(status.out().lines().filter(l -> l.contains(" current ")).count()).isEqualTo(4);
      assertThat(status.out()).contains(DomainSchemas.schemaName("café-ü"));
    } finally {
      PostgresExtension.dropDatabase(db);
    }
  }

  @Test
  void a_brand_new_database_reports_its_directory_created_and_a_second_run_current()
      throws Exception {
    String db = PostgresExtension.newDatabase();
    try {
      String url = TestServer.get().urlFor(db);
      // the scripts, not 1 to the latest: the set may have gaps
      int directory = dev.ledger.testing.MigrationScripts.directoryVersions().size();
      for (String schema : List.of("public", "ledger_routes")) {
        // public exists, empty, in every new database; ledger_routes does not exist yet
        Cli.Result first = Cli.run("migrate", "--url", url, "--directory-schema", schema, "--json");
        assertThat(first.exit()).as(first.err()).isEqualTo(ExitCodes.OK);
        JsonNode report = JSON.readTree(first.out()).get("report");
        assertThat(report.at("/directory/schema").asText()).isEqualTo(schema);
        assertThat(report.at("/directory/state").asText()).isEqualTo("created");
        assertThat(report.at("/directory/versionBefore").isNull()).isTrue();
        assertThat(report.at("/directory/versionAfter").asText())
            .isEqualTo(LedgerMigrations.DIRECTORY_VERSION);
        assertThat(report.at("/directory/applied")).hasSize(directory);
        assertThat(report.at("/counts/created").asInt()).isEqualTo(1);
        assertThat(report.at("/counts/migrated").asInt()).isZero();

        Cli.Result second = Cli.run("migrate", "--url", url, "--directory-schema", schema);
        assertThat(second.exit()).as(second.err()).isEqualTo(ExitCodes.OK);
        assertThat(second.out()).contains("1 schemas: 1 current, 0 created, 0 migrated");
      }
    } finally {
      PostgresExtension.dropDatabase(db);
    }
  }

  @Test
  void migrate_provision_makes_the_domains_so_a_ledger_without_runtime_ddl_files_into_them()
      throws Exception {
    String db = PostgresExtension.newDatabase();
    try {
      String url = TestServer.get().urlFor(db);
      Cli.Result bad = Cli.run("migrate", "--url", url, "--provision", " ");
      assertThat(bad.exit()).isEqualTo(ExitCodes.USAGE);
      assertThat(bad.err().strip())
          .isEqualTo(
              "ledger-app migrate: --provision: must not be only whitespace or invisible"
                  + " characters");

      Cli.Result first =
          Cli.run("migrate", "--url", url, "--provision", "payments", "--provision", "mail");
      assertThat(first.exit()).as(first.err()).isEqualTo(ExitCodes.OK);
      assertThat(first.out())
          .contains(
              "provisioned payments: schema " + DomainSchemas.schemaName("payments") + " created")
          .contains("provisioned mail: schema " + DomainSchemas.schemaName("mail") + " created");

      Cli.Result again = Cli.run("migrate", "--url", url, "--provision", "mail", "--json");
      assertThat(again.exit()).as(again.err()).isEqualTo(ExitCodes.OK);
      JsonNode doc = JSON.readTree(again.out());
      assertThat(doc.at("/report/counts/current").asInt()).isEqualTo(3); // directory + 2 domains
      assertThat(doc.at("/provisioned/0/domain").asText()).isEqualTo("mail");
      assertThat(doc.at("/provisioned/0/schema").asText())
          .isEqualTo(DomainSchemas.schemaName("mail"));
      assertThat(doc.at("/provisioned/0/created").asBoolean()).isFalse();

      try (com.zaxxer.hikari.HikariDataSource ds = PostgresExtension.pool(url, 2)) {
        dev.ledger.Ledger noDdl =
            dev.ledger.Ledger.open(ds, dev.ledger.LedgerConfig.builder().runtimeDdl(false).build());
        String id = noDdl.fileAndAdmit(dev.ledger.TaskSpec.builder("payments", "first").build());
        assertThat(noDdl.get(id).status()).isEqualTo(dev.ledger.Status.ADMITTED);
      }
    } finally {
      PostgresExtension.dropDatabase(db);
    }
  }

  @Test
  void a_history_edited_by_hand_is_found_by_migrate_verify_which_exits_1_naming_the_migration()
      throws Exception {
    String db = PostgresExtension.newDatabase();
    try {
      String url = TestServer.get().urlFor(db);
      Fixtures.load(db, Fixtures.DOMAIN_SCHEMAS);
      assertThat(Cli.run("migrate", "--url", url).exit()).isEqualTo(ExitCodes.OK);
      String acme = DomainSchemas.schemaName("acme");
      try (Connection c = PostgresExtension.connect(db);
          Statement s = c.createStatement()) {
        s.execute(
            "UPDATE \""
                + acme
                + "\".flyway_schema_history SET checksum = 12345 WHERE version = '4'");
      }

      // recorded as current by the first run: a plain migrate trusts that record (two statements)
      Cli.Result trusted = Cli.run("migrate", "--url", url, "--json");
      assertThat(trusted.exit()).as(trusted.err()).isEqualTo(ExitCodes.OK);
      JsonNode noOp = JSON.readTree(trusted.out());
      assertThat(noOp.at("/report/counts/catalogQueries").asInt()).isEqualTo(2);
      assertThat(noOp.at("/report/counts/checked").asInt()).isZero();

      Cli.Result verified = Cli.run("migrate", "--url", url, "--verify");

      assertThat(verified.exit()).isEqualTo(ExitCodes.FAILED);
      assertThat(verified.out())
          .contains("FAILED " + acme)
          .contains("V4 (V4__promotions_version_keyed_by_promoter.sql)")
          .contains("checksum 12345")
          .contains("1 failed");

      // the full check forgot the schema's record: every migrate now checks it, and fails it
      Cli.Result after = Cli.run("migrate", "--url", url);
      assertThat(after.exit()).isEqualTo(ExitCodes.FAILED);
      assertThat(after.out()).contains("FAILED " + acme).contains("checksum 12345");
    } finally {
      PostgresExtension.dropDatabase(db);
    }
  }

  @Test
  void an_unreachable_database_exits_4_and_never_prints_its_password() throws Exception {
    String secret = "pw-unreachable-7f3e";
    Cli.Result result =
        Cli.run(
            "migrate",
            "--url",
            "jdbc:postgresql://127.0.0.1:1/nowhere?user=postgres&password=" + secret,
            "--json");
    assertThat(result.exit()).isEqualTo(ExitCodes.DATABASE);
    assertThat(result.err()).contains("ledger-app migrate:").contains("127.0.0.1:1");
    assertThat(result.all()).doesNotContain(secret);
    // --json: one document on stdout even though the run broke
    JsonNode doc = new ObjectMapper().readTree(result.out());
    assertThat(doc.get("exitCode").asInt()).isEqualTo(ExitCodes.DATABASE);
    assertThat(doc.get("ok").asBoolean()).isFalse();
    assertThat(doc.get("report").isNull()).isTrue();
    assertThat(doc.get("error").asText()).contains("127.0.0.1:1").doesNotContain(secret);
  }

  @Test
  void a_domain_location_that_is_no_folder_is_a_usage_error_naming_the_flag() {
    Cli.Result result =
        Cli.run(
            "migrate",
            "--url",
            "jdbc:postgresql://127.0.0.1:1/never-opened?user=postgres",
            "--domain-location",
            "classpath:db/no-such-folder");
    assertThat(result.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(result.err())
        .contains(
            "--domain-location: classpath:db/no-such-folder is no folder on the class path; give"
                + " an existing classpath:FOLDER or filesystem:/PATH");
  }

  @Test
  void credentials_before_the_host_are_a_usage_error_and_are_never_echoed() {
    for (String command : List.of("migrate", "plan", "status")) {
      Cli.Result result =
          Cli.run(command, "--url", "jdbc:postgresql://someone:pw-userinfo-5d1c@127.0.0.1:5432/db");
      assertThat(result.exit()).isEqualTo(ExitCodes.USAGE);
      assertThat(result.err())
          .contains("credentials before the host (user:password@host) are not supported");
      assertThat(result.all()).doesNotContain("pw-userinfo-5d1c").doesNotContain("someone");
    }
  }

  @Test
  void a_url_that_is_not_a_jdbc_url_is_a_usage_error_and_is_not_echoed() {
    Cli.Result result = Cli.run("migrate", "--url", "mysql://admin:pw-in-url-91@db/ledger");
    assertThat(result.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(result.err())
        .startsWith("ledger-app migrate: --url: not a PostgreSQL JDBC URL; expected")
        .doesNotContain("dsn:");
    assertThat(result.all()).doesNotContain("pw-in-url-91");
  }

  @Test
  void a_parallelism_out_of_range_is_a_usage_error_naming_the_setting() {
    Cli.Result result =
        Cli.run("migrate", "--url", TestServer.get().urlFor("postgres"), "--parallelism", "0");
    assertThat(result.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(result.err()).contains("parallelism: must be between 1 and 64, was 0");
  }
}
