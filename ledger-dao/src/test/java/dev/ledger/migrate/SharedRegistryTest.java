package dev.ledger.migrate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.schema.LedgerMigrations;
import dev.ledger.testing.Fixtures;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Both reconcilers see one fleet (issue #13, item 8): the reference's statements ({@code
 * bootstrap_registry}, {@code register_tenant}, {@code tenants}, {@code set_tenant_status} of its
 * {@code reconcile.rs}, issued here as its SQL) and the {@link Fleet} read and write one {@code
 * harness_tenants}; a registry from before moves into it.
 */
class SharedRegistryTest {

  /** The reference's bootstrap_registry, as it issues it. */
  private static final String REFERENCE_BOOTSTRAP =
      "CREATE TABLE IF NOT EXISTS harness_tenants ("
          + " tenant TEXT PRIMARY KEY, dsn TEXT NOT NULL, status TEXT NOT NULL)";

  private static final Pattern URL = Pattern.compile("jdbc:postgresql://([^/?]+)/([^?]*)\\?(.*)");

  private String control;
  private String tenantA;
  private String tenantB;

  @BeforeEach
  void databases() throws SQLException {
    control = PostgresExtension.newDatabase();
    tenantA = PostgresExtension.newDatabase();
    tenantB = PostgresExtension.newDatabase();
  }

  @AfterEach
  void drop() throws SQLException {
    for (String db : new String[] {control, tenantA, tenantB}) {
      PostgresExtension.dropDatabase(db);
    }
  }

  @Test
  void a_tenant_the_reference_registered_is_migrated_and_its_status_is_what_the_reference_reads()
      throws Exception {
    try (Connection c = PostgresExtension.connect(control);
        Statement s = c.createStatement()) {
      s.execute(REFERENCE_BOOTSTRAP);
    }
    referenceRegister("factory0", libpqUri(tenantA));

    FleetReport report = fleet().migrate();

    assertThat(report.tenants()).extracting(TenantReport::tenant).containsExactly("factory0");
    assertThat(report.tenants().get(0).status()).isEqualTo(TenantStatus.ACTIVE);
    assertThat(report.tenants().get(0).applied())
        .isEqualTo(dev.ledger.testing.MigrationScripts.directoryVersions().size());
    try (Connection c = PostgresExtension.connect(control)) {
      // the reference's tenants(): its DSN kept as it wrote it, the status ours
      assertThat(
              Fixtures.rows(c, "SELECT tenant, dsn, status FROM harness_tenants ORDER BY tenant"))
          .containsExactly(List.of("factory0", libpqUri(tenantA), "active"));
    }
    try (Connection c = PostgresExtension.connect(tenantA)) {
      assertThat(
              Fixtures.count(
                  c,
                  "SELECT count(*) FROM public."
                      + LedgerMigrations.DIRECTORY_HISTORY
                      + " WHERE success"))
          .isGreaterThan(0);
    }
  }

  @Test
  void a_tenant_we_register_is_read_by_the_reference_and_a_status_it_sets_is_honoured()
      throws Exception {
    Fleet fleet = fleet();
    fleet.register("acme", libpqUri(tenantA));
    fleet.register("bolt", TestServer.get().urlFor(tenantB));
    try (Connection c = PostgresExtension.connect(control)) {
      assertThat(Fixtures.rows(c, "SELECT tenant, status FROM harness_tenants ORDER BY tenant"))
          .containsExactly(List.of("acme", "provisioning"), List.of("bolt", "provisioning"));
    }
    // the reference re-creates its registry idempotently and reads ours
    try (Connection c = PostgresExtension.connect(control);
        Statement s = c.createStatement()) {
      s.execute(REFERENCE_BOOTSTRAP);
    }
    // bolt's database goes away: our run degrades it, with our reason
    PostgresExtension.dropDatabase(tenantB);
    FleetReport first = fleet.migrate();
    assertThat(first.tenants())
        .extracting(TenantReport::tenant, TenantReport::status)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("acme", TenantStatus.ACTIVE),
            org.assertj.core.groups.Tuple.tuple("bolt", TenantStatus.DEGRADED));
    TenantInfo bolt = fleet.list().get(1);
    assertThat(bolt.status()).isEqualTo(TenantStatus.DEGRADED);
    assertThat(bolt.reason()).startsWith("tenant bolt: ");
    assertThat(bolt.updated()).isNotNull();

    // the reference's set_tenant_status: acme degraded by the reference, bolt back to active
    referenceSetStatus("acme", "degraded");
    referenceSetStatus("bolt", "active");
    List<TenantInfo> listed = fleet.list();
    assertThat(listed)
        .containsExactly(
            new TenantInfo("acme", TenantStatus.DEGRADED, null, null),
            new TenantInfo("bolt", TenantStatus.ACTIVE, null, null));

    // a tenant the reference degraded is skipped by a plain run, as the reference's own does
    tenantB = PostgresExtension.newDatabase();
    referenceRegister("bolt", libpqUri(tenantB));
    FleetReport second = fleet.migrate();
    assertThat(second.tenants())
        .extracting(TenantReport::tenant, TenantReport::status, TenantReport::skipped)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("acme", TenantStatus.DEGRADED, true),
            org.assertj.core.groups.Tuple.tuple("bolt", TenantStatus.ACTIVE, false));
    try (Connection c = PostgresExtension.connect(control)) {
      assertThat(Fixtures.rows(c, "SELECT tenant, status FROM harness_tenants ORDER BY tenant"))
          .containsExactly(List.of("acme", "degraded"), List.of("bolt", "active"));
    }
  }

  @Test
  void a_registry_from_before_moves_into_harness_tenants_keeping_reasons_and_the_references_rows()
      throws Exception {
    var ds = TestDatabases.dataSource(control);
    LedgerMigrations.control(ds, "public").target("1").load().migrate();
    try (Connection c = PostgresExtension.connect(control);
        Statement s = c.createStatement()) {
      s.execute(
          "INSERT INTO ledger_tenants (tenant, dsn, status, reason, updated) VALUES"
              + " ('old-a', 'jdbc:postgresql://h/a', 'degraded', 'tenant old-a: gone',"
              + " '2026-11-30T10:00:00.000000Z'),"
              + " ('both', 'jdbc:postgresql://h/ours', 'active', null,"
              + " '2026-11-30T10:00:00.000000Z')");
      // the reference registered 'both' too, with its own DSN
      s.execute(REFERENCE_BOOTSTRAP);
      s.execute(
          "INSERT INTO harness_tenants (tenant, dsn, status)"
              + " VALUES ('both', 'postgresql://h/theirs', 'active')");
    }

    List<TenantInfo> listed = fleet().list();

    assertThat(listed)
        .containsExactly(
            new TenantInfo("both", TenantStatus.ACTIVE, null, null),
            new TenantInfo(
                "old-a",
                TenantStatus.DEGRADED,
                "tenant old-a: gone",
                "2026-11-30T10:00:00.000000Z"));
    try (Connection c = PostgresExtension.connect(control)) {
      assertThat(Fixtures.rows(c, "SELECT tenant, dsn FROM harness_tenants ORDER BY tenant"))
          .containsExactly(
              List.of("both", "postgresql://h/theirs"), List.of("old-a", "jdbc:postgresql://h/a"));
      assertThat(
              Fixtures.rows(
                  c, "SELECT tenant, dsn FROM ledger_tenants_before_harness ORDER BY tenant"))
          .containsExactly(
              List.of("both", "jdbc:postgresql://h/ours"),
              List.of("old-a", "jdbc:postgresql://h/a"));
      assertThat(
              Fixtures.count(
                  c, "SELECT count(*) FROM pg_tables WHERE tablename = 'ledger_tenants'"))
          .isZero();
    }
  }

  @Test
  void a_status_outside_the_three_names_the_tenant_as_a_control_database_problem()
      throws Exception {
    try (Connection c = PostgresExtension.connect(control);
        Statement s = c.createStatement()) {
      s.execute(REFERENCE_BOOTSTRAP);
      s.execute("INSERT INTO harness_tenants VALUES ('odd', 'postgresql://h/x', 'retired')");
    }
    assertThatThrownBy(() -> fleet().list())
        // one catch of LedgerException takes the migration job's errors too
        .isInstanceOf(dev.ledger.LedgerException.class)
        .isInstanceOfSatisfying(
            MigrationException.class,
            e -> assertThat(e.reason()).isEqualTo(MigrationException.Reason.CONTROL_DATABASE))
        .hasMessage(
            "control database: tenant odd has status 'retired' in harness_tenants, which is none"
                + " of provisioning, active, degraded (fix that row and run again)");
  }

  @Test
  void a_libpq_uri_becomes_the_jdbc_url_and_its_password_is_redacted() {
    Dsn dsn = Dsn.parse("postgresql://app%40eu:p%2Bss+w@db1:6432/acme?sslmode=require");
    assertThat(dsn.describe()).isEqualTo("db1:6432/acme");
    assertThat(dsn.redact("failed: p+ss+w and p%2Bss+w")).isEqualTo("failed: *** and ***");
    assertThat(dsn.toString()).doesNotContain("p+ss");
    assertThat(Dsn.parse("postgres://db2/acme").describe()).isEqualTo("db2:5432/acme");
    assertThatThrownBy(() -> Dsn.parse("postgresql:///acme?host=/var/run/postgresql"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("dsn: not a libpq connection URI with a host")
        .hasMessageNotContaining("/var/run");
  }

  private Fleet fleet() {
    return Fleet.builder().control(TestDatabases.dataSource(control)).parallelism(2).build();
  }

  /** The test server's URL of a database as a libpq URI, user and password in the authority. */
  private static String libpqUri(String database) {
    Matcher m = URL.matcher(TestServer.get().urlFor(database));
    if (!m.matches()) {
      throw new IllegalStateException("unexpected test URL");
    }
    String user = "postgres";
    String password = "s3cret";
    for (String p : m.group(3).split("&")) {
      if (p.startsWith("user=")) {
        user = p.substring(5);
      } else if (p.startsWith("password=")) {
        password = p.substring(9);
      }
    }
    return "postgresql://" + user + ":" + password + "@" + m.group(1) + "/" + database;
  }

  /** The reference's register_tenant, as it issues it. */
  private void referenceRegister(String tenant, String dsn) throws SQLException {
    try (Connection c = PostgresExtension.connect(control);
        PreparedStatement s =
            c.prepareStatement(
                "INSERT INTO harness_tenants (tenant, dsn, status) VALUES (?, ?, 'provisioning')"
                    + " ON CONFLICT (tenant) DO UPDATE SET dsn = excluded.dsn,"
                    + " status = 'provisioning'")) {
      s.setString(1, tenant);
      s.setString(2, dsn);
      s.executeUpdate();
    }
  }

  /** The reference's set_tenant_status, as it issues it. */
  private void referenceSetStatus(String tenant, String status) throws SQLException {
    try (Connection c = PostgresExtension.connect(control);
        PreparedStatement s =
            c.prepareStatement("UPDATE harness_tenants SET status = ? WHERE tenant = ?")) {
      s.setString(1, status);
      s.setString(2, tenant);
      s.executeUpdate();
    }
  }
}
