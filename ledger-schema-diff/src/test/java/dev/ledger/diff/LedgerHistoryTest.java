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
            "events column xid added safe",
            "events index events_feed added locking",
            "feed_followed table feed_followed added safe",
            "feed_followed column followed added safe",
            "feed_followed constraint feed_followed_followed_check added safe",
            "feed_followed constraint feed_followed_pkey added safe",
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
            "queue_control_slots table queue_control_slots added safe",
            "queue_control_slots column slot added safe",
            "queue_control_slots column rate_slot added safe",
            "queue_control_slots column rate_counts added safe",
            "queue_control_slots constraint queue_control_slots_pkey added safe",
            "queue_control_slots constraint queue_control_slots_slot_check added safe",
            "queue_controls table queue_controls added safe",
            "queue_controls column only_row added safe",
            "queue_controls column paused added safe",
            "queue_controls column max_claimed added safe",
            "queue_controls column rate_claims added safe",
            "queue_controls column rate_period_ms added safe",
            "queue_controls column rate_slot added safe",
            "queue_controls column rate_counts added safe",
            "queue_controls column active added safe",
            "queue_controls constraint queue_controls_check added safe",
            "queue_controls constraint queue_controls_max_claimed_check added safe",
            "queue_controls constraint queue_controls_only_row_check added safe",
            "queue_controls constraint queue_controls_pkey added safe",
            "queue_controls constraint queue_controls_rate_claims_check added safe",
            "queue_controls constraint queue_controls_rate_period_ms_check added safe",
            "tasks column blocked added safe",
            "tasks column not_before added safe",
            "tasks column max_attempts added safe",
            "tasks index tasks_by_origin added locking",
            "tasks index tasks_claim_class added locking",
            "tasks index tasks_claimable added locking",
            "tasks index tasks_due added locking",
            "- function feed_events_inserted() added safe",
            "- function ledger_directory_of(domain_schema text) added safe",
            "- function ledger_task_filed() added safe",
            "- function ledger_task_status_changed() added safe",
            "- function ledger_tasks_completion_changed() added safe",
            "- function ledger_tasks_filed() added safe",
            "- function tasks_notify_workers() added safe",
            "events trigger feed_events_inserted on events added safe",
            "tasks trigger ledger_task_filed on tasks added safe",
            "tasks trigger ledger_task_inserted_completed on tasks added safe",
            "tasks trigger ledger_tasks_completion_changed on tasks added safe",
            "tasks trigger ledger_tasks_filed on tasks added safe",
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
            "Schema diff: 68 changes (5 locking, 63 safe); checked: the base plus this SQL gives"
                + " exactly the head; the pull request's 46 statements measured: 5 warnings.");
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
            "events column xid added safe",
            "events index events_feed added locking",
            "feed_followed table feed_followed added safe",
            "feed_followed column followed added safe",
            "feed_followed constraint feed_followed_followed_check added safe",
            "feed_followed constraint feed_followed_pkey added safe",
            "promotions column new_digest added safe",
            "promotions column why_erased added safe",
            "promotions index promotions_version changed locking",
            "queue_control_slots table queue_control_slots added safe",
            "queue_control_slots column slot added safe",
            "queue_control_slots column rate_slot added safe",
            "queue_control_slots column rate_counts added safe",
            "queue_control_slots constraint queue_control_slots_pkey added safe",
            "queue_control_slots constraint queue_control_slots_slot_check added safe",
            "queue_controls table queue_controls added safe",
            "queue_controls column only_row added safe",
            "queue_controls column paused added safe",
            "queue_controls column max_claimed added safe",
            "queue_controls column rate_claims added safe",
            "queue_controls column rate_period_ms added safe",
            "queue_controls column rate_slot added safe",
            "queue_controls column rate_counts added safe",
            "queue_controls column active added safe",
            "queue_controls constraint queue_controls_check added safe",
            "queue_controls constraint queue_controls_max_claimed_check added safe",
            "queue_controls constraint queue_controls_only_row_check added safe",
            "queue_controls constraint queue_controls_pkey added safe",
            "queue_controls constraint queue_controls_rate_claims_check added safe",
            "queue_controls constraint queue_controls_rate_period_ms_check added safe",
            "tasks column blocked added safe",
            "tasks column not_before added safe",
            "tasks column max_attempts added safe",
            "tasks index tasks_by_origin added locking",
            "tasks index tasks_claim_class added locking",
            "tasks index tasks_claimable added locking",
            "tasks index tasks_due added locking",
            "- function feed_events_inserted() added safe",
            "- function ledger_directory_of(domain_schema text) added safe",
            "- function ledger_task_filed() added safe",
            "- function ledger_task_status_changed() added safe",
            "- function ledger_tasks_completion_changed() added safe",
            "- function ledger_tasks_filed() added safe",
            "- function tasks_notify_workers() added safe",
            "events trigger feed_events_inserted on events added safe",
            "tasks trigger ledger_task_filed on tasks added safe",
            "tasks trigger ledger_task_inserted_completed on tasks added safe",
            "tasks trigger ledger_tasks_completion_changed on tasks added safe",
            "tasks trigger ledger_tasks_filed on tasks added safe",
            "tasks trigger tasks_notify_workers on tasks added safe");
    JsonNode version = Diffs.json(result).get("changes").get(13);
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
            "ledger_feed_consumers table ledger_feed_consumers added safe",
            "ledger_feed_consumers column consumer added safe",
            "ledger_feed_consumers column domain added safe",
            "ledger_feed_consumers column xid_from added safe",
            "ledger_feed_consumers column xid_to added safe",
            "ledger_feed_consumers column seq_done added safe",
            "ledger_feed_consumers column delivered added safe",
            "ledger_feed_consumers column holder added safe",
            "ledger_feed_consumers column lease_until added safe",
            "ledger_feed_consumers column epoch added safe",
            "ledger_feed_consumers column updated added safe",
            "ledger_feed_consumers column missed_seq added safe",
            "ledger_feed_consumers column missed_later added safe",
            "ledger_feed_consumers constraint ledger_feed_consumers_pkey added safe",
            "ledger_feed_erasures table ledger_feed_erasures added safe",
            "ledger_feed_erasures column id added safe",
            "ledger_feed_erasures column consumer added safe",
            "ledger_feed_erasures column domain added safe",
            "ledger_feed_erasures column task_id added safe",
            "ledger_feed_erasures column seqs added safe",
            "ledger_feed_erasures column erased_at added safe",
            "ledger_feed_erasures constraint ledger_feed_erasures_pkey added safe",
            "ledger_feed_erasures sequence ledger_feed_erasures_id_seq added safe",
            "ledger_retention table ledger_retention added safe",
            "ledger_retention column domain added safe",
            "ledger_retention column retention_seconds added safe",
            "ledger_retention column removed_through_seq added safe",
            "ledger_retention column tasks_removed added safe",
            "ledger_retention column events_removed added safe",
            "ledger_retention column last_purge_at added safe",
            "ledger_retention column updated_at added safe",
            "ledger_retention constraint ledger_retention_pkey added safe",
            "ledger_retention constraint ledger_retention_retention_seconds_check added safe",
            "ledger_schedules table ledger_schedules added safe",
            "ledger_schedules column name added safe",
            "ledger_schedules column domain added safe",
            "ledger_schedules column cron added safe",
            "ledger_schedules column zone added safe",
            "ledger_schedules column interval_seconds added safe",
            "ledger_schedules column title added safe",
            "ledger_schedules column body added safe",
            "ledger_schedules column requirements added safe",
            "ledger_schedules column label added safe",
            "ledger_schedules column priority added safe",
            "ledger_schedules column max_attempts added safe",
            "ledger_schedules column catch_up added safe",
            "ledger_schedules column paused added safe",
            "ledger_schedules column last_tick added safe",
            "ledger_schedules column next_tick added safe",
            "ledger_schedules column created_at added safe",
            "ledger_schedules column updated_at added safe",
            "ledger_schedules constraint ledger_schedules_catch_up_check added safe",
            "ledger_schedules constraint ledger_schedules_check added safe",
            "ledger_schedules constraint ledger_schedules_pkey added safe",
            "ledger_schedules index ledger_schedules_due added safe",
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
    JsonNode change = Diffs.json(result).get("changes").get(70);
    assertThat(change.get("table").asText()).isEqualTo("ledger_tasks");
    assertThat(change.get("name").asText()).isEqualTo("completed");
    assertThat(change.get("after").asText()).isEqualTo("boolean DEFAULT false NOT NULL");
    assertThat(change.get("class").asText()).isEqualTo("safe");
  }
}
