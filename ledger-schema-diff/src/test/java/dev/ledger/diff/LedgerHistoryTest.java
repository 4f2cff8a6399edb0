package dev.ledger.diff;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.ledger.testing.PostgresExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ledger's own migrations: the first domain-schema migration alone against the current set
 * shows exactly what V2 to V9 added (the promotions table and its upgrades, the claim indexes,
 * claim classes, the triggers that keep derived state). That one runs on the embedded PostgreSQL
 * schema-diff starts when no JDBC URL is given; the others on the test server. The sets are read
 * from {@code migrations/} in this repository, as files: the library needs no ledger jar.
 */
class LedgerHistoryTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  static final Path MIGRATIONS =
      Path.of(System.getProperty("basedir", "."))
          .resolve("../migrations/src/main/resources/db/ledger")
          .normalize();

  @TempDir Path temp;

  @Test
  void first_domain_migration_against_the_current_set_lists_the_promotions_and_claim_indexes()
      throws IOException {
    Path v1 = Files.createDirectories(temp.resolve("v1"));
    Files.copy(
        MIGRATIONS.resolve("domain/V1__events_and_tasks.sql"),
        v1.resolve("V1__events_and_tasks.sql"));

    DiffReport result =
        SchemaDiff.run(
            Diffs.request(v1, MIGRATIONS.resolve("domain"), null, FailOn.DESTRUCTIVE, false));

    assertThat(result.verified()).as(result.verification().sentence()).isTrue();
    assertThat(result.failed()).isFalse();
    assertThat(Diffs.changeLines(result))
        .containsExactly(
            "claim_classes table claim_classes added safe",
            "claim_classes column label_rank added safe",
            "claim_classes column requirements_md5 added safe",
            "claim_classes column requirements added safe",
            "claim_classes constraint claim_classes_pkey added safe",
            "promotions table promotions added safe",
            "promotions column seq added safe",
            "promotions column domain added safe",
            "promotions column entry added safe",
            "promotions column tier added safe",
            "promotions column promoter added safe",
            "promotions column author added safe",
            "promotions column why added safe",
            "promotions column label_rank added safe",
            "promotions column digest added safe",
            "promotions column at added safe",
            "promotions column new_digest added safe",
            "promotions column why_erased added safe",
            "promotions constraint promotions_pkey added safe",
            "promotions index promotions_version added safe",
            "promotions sequence promotions_seq_seq added safe",
            "tasks column blocked added safe",
            "tasks column not_before added safe",
            "tasks column max_attempts added safe",
            "tasks index tasks_by_origin added locking",
            "tasks index tasks_claim_class added locking",
            "tasks index tasks_claimable added locking",
            "tasks index tasks_due added locking",
            "- function ledger_directory_of(domain_schema text) added safe",
            "- function ledger_task_filed() added safe",
            "- function ledger_task_status_changed() added safe",
            "- function ledger_tasks_completion_changed() added safe",
            "- function tasks_notify_workers() added safe",
            "tasks trigger ledger_task_filed on tasks added safe",
            "tasks trigger ledger_task_inserted_completed on tasks added safe",
            "tasks trigger ledger_tasks_completion_changed on tasks added safe",
            "tasks trigger tasks_notify_workers on tasks added safe");
    Map<String, String> after = new HashMap<>();
    for (JsonNode c : Diffs.json(result).get("changes")) {
      after.put(c.get("name").asText(), c.get("after").asText());
    }
    assertThat(after.get("new_digest")).isEqualTo("text DEFAULT ''::text NOT NULL");
    assertThat(after.get("why_erased")).isEqualTo("bigint DEFAULT 0 NOT NULL");
    assertThat(after.get("promotions_version"))
        .isEqualTo("UNIQUE btree (entry, tier, digest, promoter)");
    assertThat(after.get("tasks_claimable"))
        .isEqualTo(
            "btree (priority DESC, created) WHERE status = ANY (ARRAY['admitted'::text,"
                + " 'claimed'::text])");
    assertThat(after.get("tasks_by_origin")).isEqualTo("btree (origin) WHERE origin IS NOT NULL");
    assertThat(Diffs.json(result).get("verdict").asText())
        .isEqualTo(
            "Schema diff: 37 changes (4 locking, 33 safe); checked: the base plus this SQL gives"
                + " exactly the head.");
  }

  @Test
  void promotions_first_shape_against_the_current_set_lists_the_upgrades_of_v3_to_v6()
      throws IOException {
    Path v2 = Files.createDirectories(temp.resolve("v2"));
    for (String script : new String[] {"V1__events_and_tasks.sql", "V2__promotions.sql"}) {
      Files.copy(MIGRATIONS.resolve("domain").resolve(script), v2.resolve(script));
    }

    DiffReport result =
        SchemaDiff.run(
            Diffs.request(
                v2, MIGRATIONS.resolve("domain"), PG.jdbcUrl(), FailOn.DESTRUCTIVE, false));

    assertThat(result.verified()).as(result.verification().sentence()).isTrue();
    assertThat(result.failed()).isFalse();
    assertThat(Diffs.changeLines(result))
        .containsExactly(
            "claim_classes table claim_classes added safe",
            "claim_classes column label_rank added safe",
            "claim_classes column requirements_md5 added safe",
            "claim_classes column requirements added safe",
            "claim_classes constraint claim_classes_pkey added safe",
            "promotions column new_digest added safe",
            "promotions column why_erased added safe",
            "promotions index promotions_version changed locking",
            "tasks column blocked added safe",
            "tasks column not_before added safe",
            "tasks column max_attempts added safe",
            "tasks index tasks_by_origin added locking",
            "tasks index tasks_claim_class added locking",
            "tasks index tasks_claimable added locking",
            "tasks index tasks_due added locking",
            "- function ledger_directory_of(domain_schema text) added safe",
            "- function ledger_task_filed() added safe",
            "- function ledger_task_status_changed() added safe",
            "- function ledger_tasks_completion_changed() added safe",
            "- function tasks_notify_workers() added safe",
            "tasks trigger ledger_task_filed on tasks added safe",
            "tasks trigger ledger_task_inserted_completed on tasks added safe",
            "tasks trigger ledger_tasks_completion_changed on tasks added safe",
            "tasks trigger tasks_notify_workers on tasks added safe");
    JsonNode version = Diffs.json(result).get("changes").get(7);
    assertThat(version.get("before").asText()).isEqualTo("UNIQUE btree (entry, tier, digest)");
    assertThat(version.get("after").asText())
        .isEqualTo("UNIQUE btree (entry, tier, digest, promoter)");
  }

  @Test
  void directory_set_history_adds_the_completed_flag_the_dependency_edges_and_the_schema_state()
      throws IOException {
    Path v1 = Files.createDirectories(temp.resolve("directory-v1"));
    Files.copy(
        MIGRATIONS.resolve("directory/V1__routing_tables.sql"),
        v1.resolve("V1__routing_tables.sql"));

    DiffReport result =
        SchemaDiff.run(Diffs.request(v1, MIGRATIONS.resolve("directory"), PG.jdbcUrl()));

    assertThat(Diffs.changeLines(result))
        .containsExactly(
            "ledger_dependencies table ledger_dependencies added safe",
            "ledger_dependencies column depends_on added safe",
            "ledger_dependencies column task_id added safe",
            "ledger_dependencies constraint ledger_dependencies_pkey added safe",
            "ledger_dependencies index ledger_dependencies_task added safe",
            "ledger_schema_state table ledger_schema_state added safe",
            "ledger_schema_state column schema_name added safe",
            "ledger_schema_state column kind added safe",
            "ledger_schema_state column version added safe",
            "ledger_schema_state column migrations_digest added safe",
            "ledger_schema_state column catalog_extras added safe",
            "ledger_schema_state column recorded_by added safe",
            "ledger_schema_state column recorded_at added safe",
            "ledger_schema_state constraint ledger_schema_state_kind_check added safe",
            "ledger_schema_state constraint ledger_schema_state_pkey added safe",
            "ledger_tasks column completed added safe",
            "- function ledger_route_changed() added safe",
            "- function ledger_routes_changed() added safe",
            "ledger_tasks trigger ledger_route_completed_deleted on ledger_tasks added safe",
            "ledger_tasks trigger ledger_route_completed_inserted on ledger_tasks added safe",
            "ledger_tasks trigger ledger_routes_completed_changed on ledger_tasks added safe");
    JsonNode change = Diffs.json(result).get("changes").get(15);
    assertThat(change.get("table").asText()).isEqualTo("ledger_tasks");
    assertThat(change.get("name").asText()).isEqualTo("completed");
    assertThat(change.get("after").asText()).isEqualTo("boolean DEFAULT false NOT NULL");
    assertThat(change.get("class").asText()).isEqualTo("safe");
  }
}
