package dev.ledger.schema;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_DOMAINS;
import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_TASKS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TemplateSchemaGuard;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.List;
import org.jooq.DSLContext;
import org.jooq.Record1;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class RenderMappingTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  static final String LONG = "é" + "x".repeat(69);
  static final List<String> DOMAINS = List.of("acme", "Acme", "acme-eu", "café_ü", LONG);

  static final TemplateSchemaGuard GUARD = new TemplateSchemaGuard();
  static RenderMappedDsl dsl;

  @BeforeAll
  static void migrate() throws Exception {
    LedgerMigrations.migrateDirectory(PG.dataSource(), "public");
    for (String domain : DOMAINS) {
      LedgerMigrations.migrateDomain(PG.dataSource(), DomainSchemas.schemaName(domain));
    }
    try (Connection c = PG.dataSource().getConnection();
        Statement s = c.createStatement()) {
      s.execute("DROP SCHEMA IF EXISTS ledger_template CASCADE");
      s.execute("DROP SCHEMA IF EXISTS ledger_directory CASCADE");
    }
    dsl = new RenderMappedDsl(PG.dataSource(), "public", List.of(GUARD));
  }

  @Test
  void schema_names_follow_the_contract() {
    assertThat(DomainSchemas.schemaName("acme")).isEqualTo("ledger_acme_822b33ad");
    assertThat(DomainSchemas.schemaName("Acme"))
        .startsWith("ledger_acme_")
        .isNotEqualTo("ledger_acme_822b33ad");
    assertThat(DomainSchemas.schemaName("acme-eu")).startsWith("ledger_acme_eu_");
    assertThat(DomainSchemas.schemaName("café_ü")).startsWith("ledger_caf___");
    String longName = DomainSchemas.schemaName(LONG);
    assertThat(longName).startsWith("ledger__" + "x".repeat(39) + "_").hasSize(7 + 40 + 1 + 8);
    assertThat(longName.getBytes(java.nio.charset.StandardCharsets.UTF_8).length).isEqualTo(56);
    assertThat(DomainSchemas.quotedSchemaName("acme")).isEqualTo("\"ledger_acme_822b33ad\"");
    assertThat(DomainSchemas.unquote("\"ledger_acme_822b33ad\"")).isEqualTo("ledger_acme_822b33ad");
    assertThatThrownBy(() -> DomainSchemas.unquote("\"public\".x; drop"))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> DomainSchemas.schemaName("")).hasMessageContaining("domain");
    assertThatThrownBy(() -> DomainSchemas.schemaName("a\0b")).hasMessageContaining("NUL");
  }

  @Test
  void each_domain_reads_and_writes_its_own_schema_only() throws Exception {
    long before = GUARD.checked();
    for (String domain : DOMAINS) {
      DSLContext ctx = dsl.forDomain(domain);
      String schema = DomainSchemas.schemaName(domain);
      ctx.insertInto(LEDGER_DOMAINS)
          .set(LEDGER_DOMAINS.DOMAIN, domain)
          .set(LEDGER_DOMAINS.SCHEMA, '"' + schema + '"')
          .onConflict(LEDGER_DOMAINS.DOMAIN)
          .doNothing()
          .execute();
      String id = "t-" + domain;
      String returned =
          ctx.insertInto(TASKS)
              .set(TASKS.ID, id)
              .set(TASKS.DOMAIN, domain)
              .set(TASKS.TITLE, "title of " + domain)
              .set(TASKS.BODY, "")
              .set(TASKS.REQUIREMENTS, List.of("sql"))
              .set(TASKS.DEPENDS_ON, List.<String>of())
              .set(TASKS.CREATED_BY, "test")
              .set(TASKS.LABEL_RANK, 0L)
              .set(TASKS.PRIORITY, 1L)
              .set(TASKS.CREATED, Instant.parse("2024-12-31T23:59:59.9999996Z"))
              .set(TASKS.STATUS, "proposed")
              .onConflict(TASKS.ID)
              .doUpdate()
              .set(TASKS.TITLE, "title of " + domain)
              .returning(TASKS.ID)
              .fetchOne(TASKS.ID);
      assertThat(returned).isEqualTo(id);
      ctx.insertInto(LEDGER_TASKS)
          .set(LEDGER_TASKS.ID, id)
          .set(LEDGER_TASKS.DOMAIN, domain)
          .execute();

      // a CTE over the mapped table, joined to the directory
      var recent =
          DSL.name("recent").as(DSL.select(TASKS.ID).from(TASKS).where(TASKS.DOMAIN.eq(domain)));
      Record1<String> viaCte =
          ctx.with(recent)
              .select(recent.field(TASKS.ID))
              .from(recent)
              .join(LEDGER_TASKS)
              .on(LEDGER_TASKS.ID.eq(recent.field(TASKS.ID)))
              .fetchOne();
      assertThat(viaCte).isNotNull();
      assertThat(viaCte.value1()).isEqualTo(id);
      assertThat(ctx.selectFrom(TASKS).where(TASKS.ID.eq(id)).fetchOne(TASKS.CREATED))
          .isEqualTo(Instant.parse("2024-12-31T23:59:59.999999Z"));
    }
    assertThat(GUARD.checked()).isGreaterThan(before);

    try (Connection c = PG.dataSource().getConnection();
        Statement s = c.createStatement()) {
      for (String domain : DOMAINS) {
        String schema = DomainSchemas.schemaName(domain);
        try (ResultSet rs = s.executeQuery("SELECT id, created FROM \"" + schema + "\".tasks")) {
          assertThat(rs.next()).isTrue();
          assertThat(rs.getString(1)).isEqualTo("t-" + domain);
          assertThat(rs.getString(2)).isEqualTo("2024-12-31T23:59:59.999999Z");
          assertThat(rs.next()).as("only its own row in " + schema).isFalse();
        }
      }
      try (ResultSet rs =
          s.executeQuery(
              "SELECT count(*) FROM pg_namespace WHERE nspname IN ('ledger_template', 'ledger_directory')")) {
        rs.next();
        assertThat(rs.getInt(1)).isZero();
      }
    }
  }

  @Test
  void the_guard_fails_a_statement_naming_the_template_schema() {
    DSLContext unmapped = DSL.using(PG.dataSource(), org.jooq.SQLDialect.POSTGRES);
    unmapped.configuration().set(new org.jooq.impl.DefaultExecuteListenerProvider(GUARD));
    assertThatThrownBy(() -> unmapped.selectFrom(TASKS).fetch())
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("ledger_template");
  }
}
