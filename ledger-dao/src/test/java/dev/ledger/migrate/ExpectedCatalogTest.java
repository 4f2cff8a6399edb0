package dev.ledger.migrate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.LedgerMigrations;
import dev.ledger.schema.RenderMappedDsl;
import dev.ledger.testing.PostgresExtension;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ExpectedCatalogTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @Test
  void a_schema_flyway_migrated_reads_back_exactly_the_catalog_of_the_generated_classes() {
    String schema = DomainSchemas.schemaName("catalog-check");
    LedgerMigrations.migrateDirectory(PG.dataSource(), "public");
    LedgerMigrations.migrateDomain(PG.dataSource(), schema);
    DSLContext ctx = DSL.using(PG.dataSource(), SQLDialect.POSTGRES);
    Catalog catalog =
        new Catalog(ctx, new RenderMappedDsl(PG.dataSource(), "public", List.of()), "public", 1);

    Map<String, Set<String>> details = catalog.details(List.of(schema));
    assertThat(details.get(schema))
        .containsExactlyInAnyOrderElementsOf(ExpectedCatalog.DOMAIN.lines());
    assertThat(details.get(schema))
        .contains(
            "column tasks.priority bigint not null",
            "column promotions.why_erased bigint not null",
            "index tasks.tasks_queue plain (status, priority desc, created)",
            "index tasks.tasks_pkey unique (id)",
            "index promotions.promotions_version unique (entry, tier, digest, promoter)");
    assertThat(Analysis.restrict(details.get("public"), ExpectedCatalog.DIRECTORY.tables()))
        .containsExactlyInAnyOrderElementsOf(ExpectedCatalog.DIRECTORY.lines());

    Map<String, Catalog.Fingerprint> prints = catalog.fingerprints(null);
    assertThat(prints.get(schema).fingerprint()).isEqualTo(ExpectedCatalog.DOMAIN.fingerprint());
    Set<String> domainTables = new java.util.TreeSet<>(ExpectedCatalog.DOMAIN.tables());
    domainTables.add("flyway_schema_history");
    assertThat(prints.get(schema).tables()).containsExactlyInAnyOrderElementsOf(domainTables);
    assertThat(domainTables).contains("events", "tasks", "promotions");
    assertThat(prints.get("public").fingerprint())
        .isEqualTo(ExpectedCatalog.DIRECTORY.fingerprint());
    Set<String> directoryTables = new java.util.TreeSet<>(ExpectedCatalog.DIRECTORY.tables());
    directoryTables.add("ledger_directory_history");
    assertThat(prints.get("public").tables()).containsExactlyInAnyOrderElementsOf(directoryTables);
    assertThat(directoryTables).contains("ledger_domains", "ledger_tasks");
  }

  /**
   * Each type a migration may use is expected under the name {@code format_type} gives it: jOOQ
   * calls {@code integer} {@code int}, which made a schema with an {@code integer} column look
   * drifted.
   */
  @Test
  void every_column_type_is_expected_under_the_name_format_type_gives_it() throws Exception {
    List<org.jooq.DataType<?>> types =
        List.of(
            org.jooq.impl.SQLDataType.INTEGER,
            org.jooq.impl.SQLDataType.SMALLINT,
            org.jooq.impl.SQLDataType.BIGINT,
            org.jooq.impl.SQLDataType.BOOLEAN,
            org.jooq.impl.SQLDataType.VARCHAR,
            org.jooq.impl.SQLDataType.CHAR,
            org.jooq.impl.SQLDataType.CLOB,
            org.jooq.impl.SQLDataType.REAL,
            org.jooq.impl.SQLDataType.DOUBLE,
            org.jooq.impl.SQLDataType.NUMERIC,
            org.jooq.impl.SQLDataType.LOCALDATETIME,
            org.jooq.impl.SQLDataType.OFFSETDATETIME,
            org.jooq.impl.SQLDataType.LOCALDATE,
            org.jooq.impl.SQLDataType.LOCALTIME,
            org.jooq.impl.SQLDataType.UUID,
            org.jooq.impl.SQLDataType.JSONB,
            org.jooq.impl.SQLDataType.BLOB);
    try (java.sql.Connection c = PG.dataSource().getConnection()) {
      DSLContext ctx = DSL.using(c, SQLDialect.POSTGRES);
      for (org.jooq.DataType<?> type : types) {
        String ddl = type.getTypeName(ctx.configuration());
        String formatted =
            ctx.fetchValue(DSL.field("format_type(?::regtype, null)", String.class, ddl));
        assertThat(ExpectedCatalog.typeName(DSL.field(DSL.name("c"), type)))
            .as("jOOQ's %s", ddl)
            .isEqualTo(formatted);
      }
    }
  }
}
