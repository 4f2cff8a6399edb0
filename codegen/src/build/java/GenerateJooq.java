/*
 * Build-time program of the codegen module, launched as a single source file by exec-maven-plugin
 * (see codegen/pom.xml): start an embedded PostgreSQL, apply the migrations of the ledger-migrations
 * jar to two template schemas, and generate jOOQ classes from what PostgreSQL then holds. jOOQ's
 * DDLDatabase cannot substitute Flyway placeholders (docs/codegen.md), so the source of truth is a
 * real, migrated catalog. Arguments: the output directory, a scratch directory for the database.
 */

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Path;
import org.flywaydb.core.Flyway;
import org.jooq.codegen.GenerationTool;
import org.jooq.meta.jaxb.Configuration;
import org.jooq.meta.jaxb.Database;
import org.jooq.meta.jaxb.ForcedType;
import org.jooq.meta.jaxb.Generate;
import org.jooq.meta.jaxb.Generator;
import org.jooq.meta.jaxb.Jdbc;
import org.jooq.meta.jaxb.SchemaMappingType;
import org.jooq.meta.jaxb.Target;

public class GenerateJooq {

  /** Render-mapped at run time to each domain's schema. */
  static final String DOMAIN_TEMPLATE = "ledger_template";

  /** Render-mapped at run time to the configured directory schema (public by default). */
  static final String DIRECTORY_TEMPLATE = "ledger_directory";

  static final String CONVERT = "dev.ledger.codegen.convert.";

  public static void main(String[] args) throws Exception {
    Path output = Path.of(args[0]);
    Path data = Path.of(args[1]);
    try (EmbeddedPostgres pg =
        EmbeddedPostgres.builder()
            .setDataDirectory(data)
            .setCleanDataDirectory(true)
            // a scratch server that lives for one generation: nothing needs to reach the disk
            .setServerConfig("fsync", "off")
            .setServerConfig("full_page_writes", "off")
            .start()) {
      String url = pg.getJdbcUrl("postgres", "postgres");
      Flyway.configure()
          .dataSource(url, "postgres", null)
          .schemas(DIRECTORY_TEMPLATE)
          .defaultSchema(DIRECTORY_TEMPLATE)
          .createSchemas(true)
          .table("ledger_directory_history")
          .locations("classpath:db/ledger/directory")
          .load()
          .migrate();
      Flyway.configure()
          .dataSource(url, "postgres", null)
          .schemas(DOMAIN_TEMPLATE)
          .defaultSchema(DOMAIN_TEMPLATE)
          .createSchemas(true)
          .locations("classpath:db/ledger/domain")
          .load()
          .migrate();

      Configuration configuration =
          new Configuration()
              .withJdbc(
                  new Jdbc().withDriver("org.postgresql.Driver").withUrl(url).withUser("postgres"))
              .withGenerator(
                  new Generator()
                      .withName("org.jooq.codegen.JavaGenerator")
                      .withDatabase(
                          new Database()
                              .withName("org.jooq.meta.postgres.PostgresDatabase")
                              .withSchemata(
                                  new SchemaMappingType().withInputSchema(DIRECTORY_TEMPLATE),
                                  new SchemaMappingType().withInputSchema(DOMAIN_TEMPLATE))
                              .withExcludes(
                                  "flyway_schema_history|ledger_directory_history"
                                      // the trigger functions that keep derived state right
                                      // (directory V5, domain V8): the database calls them
                                      + "|ledger_route_changed|ledger_directory_of"
                                      // directory V6
                                      + "|ledger_routes_changed"
                                      + "|ledger_task_filed|ledger_task_status_changed"
                                      // domain V9
                                      + "|ledger_tasks_completion_changed"
                                      // domain V11
                                      + "|feed_events_inserted"
                                      // domain V12
                                      + "|ledger_tasks_filed")
                              .withForcedTypes(
                                  forced(
                                      "java.time.Instant",
                                      "InstantConverter",
                                      ".*\\.(tasks\\.(created|lease_until|not_before)|events\\.at|promotions\\.at"
                                          + "|ledger_schema_state\\.recorded_at)"),
                                  forced(
                                      "java.util.List<java.lang.String>",
                                      "StringListConverter",
                                      ".*\\.tasks\\.(requirements|depends_on)"),
                                  forced(
                                      "com.fasterxml.jackson.databind.JsonNode",
                                      "JsonConverter",
                                      ".*\\.events\\.payload"),
                                  forced(
                                      "java.lang.Boolean",
                                      "FlagConverter",
                                      ".*\\.promotions\\.why_erased")))
                      .withGenerate(
                          new Generate()
                              .withRecords(true)
                              .withPojos(false)
                              .withDaos(false)
                              .withJavaTimeTypes(true)
                              .withGeneratedAnnotation(false)
                              .withComments(true)
                              .withFluentSetters(true))
                      .withTarget(
                          new Target()
                              .withPackageName("dev.ledger.codegen.db")
                              .withDirectory(output.toString())
                              .withClean(true)));
      GenerationTool.generate(configuration);
    }
  }

  static ForcedType forced(String userType, String converter, String columns) {
    return new ForcedType()
        .withUserType(userType)
        .withConverter(CONVERT + converter)
        .withIncludeExpression(columns);
  }
}
