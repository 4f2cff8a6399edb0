package dev.ledger.kernel;

import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import dev.ledger.kernel.RenderedStatement.Slot;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.LedgerMigrations;
import dev.ledger.schema.RenderMappedDsl;
import dev.ledger.testing.PostgresExtension;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.jooq.DSLContext;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;
import org.jooq.Field;
import org.jooq.Query;
import org.jooq.Record;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link RenderedStatement}: a statement rendered once binds every call's own values, in the right
 * places, through both of its paths (JDBC, and jOOQ's plain SQL when listeners watch), and refuses
 * a template that would freeze a value into the cached text.
 */
class RenderedStatementTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  static final String DOMAIN = "rendered";
  static final Slot<String> ID = Slot.of("id", TASKS.ID.getDataType());
  static final Slot<String> TITLE = Slot.of("title", TASKS.TITLE.getDataType());
  static final Slot<Long> PRIORITY = Slot.of("priority", TASKS.PRIORITY.getDataType());
  static final Slot<Instant> CREATED = Slot.of("created", TASKS.CREATED.getDataType());
  static final Slot<List<String>> REQUIREMENTS =
      Slot.of("requirements", TASKS.REQUIREMENTS.getDataType());
  static final Slot<Boolean> BLOCKED = Slot.of("blocked", TASKS.BLOCKED.getDataType());
  static final Slot<Integer> LIMIT = Slot.of("limit", SQLDataType.INTEGER);
  static final Slot<String> SUFFIX = Slot.of("suffix", SQLDataType.VARCHAR);

  static RenderMappedDsl dsl;

  @BeforeAll
  static void migrate() {
    LedgerMigrations.migrateDirectory(PG.dataSource(), "public");
    LedgerMigrations.migrateDomain(PG.dataSource(), DomainSchemas.schemaName(DOMAIN));
  }

  /** Inserts a row through a cached insert; selects through a cached select using slots twice. */
  @ParameterizedTest(name = "observed by a listener: {0}")
  @ValueSource(booleans = {false, true})
  void each_call_binds_its_own_values_in_every_place_its_slots_appear(boolean observed) {
    List<String> seen = new ArrayList<>();
    ExecuteListener listener =
        new ExecuteListener() {
          @Override
          public void executeStart(ExecuteContext ctx) {
            seen.add(ctx.sql());
          }
        };
    RenderMappedDsl contexts =
        new RenderMappedDsl(PG.dataSource(), "public", observed ? List.of(listener) : List.of());
    DSLContext ctx = contexts.forDomain(DOMAIN);
    RenderedStatement.Cache cache = new RenderedStatement.Cache();
    String prefix = observed ? "o" : "p";
    // the rows carry blocked as bound: with the triggers off, as in a replay (domain V8 would
    // derive it from depends_on)
    ctx.transaction(
        cfg -> {
          cfg.dsl().select(DSL.field("set_config('ledger.replay', 'on', true)")).fetch();
          for (int i = 0; i < 3; i++) {
            insert(cache, cfg.dsl(), prefix + i, "title 'quoted' \\ " + i, i, i % 2 == 0);
          }
        });
    // the same slot twice (priority >= ? and priority <= ? + 1), a LIMIT slot, ORDER BY
    RenderedStatement select =
        cache.get(
            ctx,
            "select",
            () ->
                DSL.select(TASKS.ID, TASKS.TITLE, TASKS.REQUIREMENTS, TASKS.BLOCKED)
                    .from(TASKS)
                    .where(TASKS.ID.like(ID.field()))
                    .and(TASKS.PRIORITY.ge(PRIORITY.field()))
                    .and(TASKS.PRIORITY.le(PRIORITY.field().plus(DSL.inline(1L))))
                    .orderBy(TASKS.PRIORITY.desc())
                    .limit(LIMIT.field()),
            List.of(ID, PRIORITY, LIMIT));
    Field<?>[] fields = {TASKS.ID, TASKS.TITLE, TASKS.REQUIREMENTS, TASKS.BLOCKED};
    List<Record> rows = select.fetch(ctx, fields, prefix + "%", 1L, 10);
    assertThat(rows).extracting(r -> r.get(TASKS.ID)).containsExactly(prefix + 2, prefix + 1);
    assertThat(rows.get(0).get(TASKS.TITLE)).isEqualTo("title 'quoted' \\ 2");
    assertThat(rows.get(0).get(TASKS.REQUIREMENTS)).containsExactly("skill-2", "x,\"y\"");
    assertThat(rows.get(0).get(TASKS.BLOCKED)).isTrue();
    assertThat(rows.get(1).get(TASKS.BLOCKED)).isFalse();
    assertThat(select.fetch(ctx, fields, prefix + "%", 0L, 1))
        .extracting(r -> r.get(TASKS.ID))
        .containsExactly(prefix + 1);
    // rendered once: every statement the listener saw has the cached text
    if (observed) {
      assertThat(seen).contains(select.sql()).hasSize(6); // the set_config, 3 inserts, 2 selects
    } else {
      assertThat(seen).isEmpty();
    }
    assertThat(select.sql()).contains("\"" + DomainSchemas.schemaName(DOMAIN) + "\".\"tasks\"");
  }

  @Test
  void a_null_value_is_bound_as_sql_null() {
    DSLContext ctx = new RenderMappedDsl(PG.dataSource(), "public", List.of()).forDomain(DOMAIN);
    RenderedStatement.Cache cache = new RenderedStatement.Cache();
    insert(cache, ctx, "n1", "with a null origin", 5, false);
    Slot<String> origin = Slot.of("origin", TASKS.ORIGIN.getDataType());
    RenderedStatement update =
        cache.get(
            ctx,
            "set origin",
            () ->
                DSL.update(TASKS).set(TASKS.ORIGIN, origin.field()).where(TASKS.ID.eq(ID.field())),
            List.of(origin, ID));
    assertThat(update.execute(ctx, "somewhere", "n1")).isEqualTo(1);
    assertThat(update.execute(ctx, null, "n1")).isEqualTo(1);
    TasksRecord row = ctx.selectFrom(TASKS).where(TASKS.ID.eq("n1")).fetchOne();
    assertThat(row.getOrigin()).isNull();
  }

  @Test
  void a_template_with_a_value_that_is_no_slot_is_refused() {
    DSLContext ctx = new RenderMappedDsl(PG.dataSource(), "public", List.of()).forDomain(DOMAIN);
    Query frozen = DSL.update(TASKS).set(TASKS.TITLE, "frozen").where(TASKS.ID.eq(ID.field()));
    assertThatThrownBy(() -> RenderedStatement.render(ctx, frozen, List.of(ID)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("bind value 1")
        .hasMessageContaining("not a slot");
    Query unused = DSL.selectFrom(TASKS).where(TASKS.ID.eq(ID.field()));
    assertThatThrownBy(() -> RenderedStatement.render(ctx, unused, List.of(ID, TITLE)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("slot title is not used");
  }

  @Test
  void a_value_of_the_wrong_type_or_count_is_refused_before_anything_runs() {
    DSLContext ctx = new RenderMappedDsl(PG.dataSource(), "public", List.of()).forDomain(DOMAIN);
    RenderedStatement select =
        new RenderedStatement.Cache()
            .get(
                ctx,
                "by id",
                () -> DSL.select(TASKS.ID).from(TASKS).where(TASKS.ID.eq(ID.field())),
                List.of(ID));
    Field<?>[] fields = {TASKS.ID};
    assertThatThrownBy(() -> select.fetch(ctx, fields, 42L))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("slot id takes String, given Long");
    assertThatThrownBy(() -> select.fetch(ctx, fields, "a", "b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("the statement has 1 slots, given 2 values");
  }

  @Test
  void statements_are_kept_per_render_mapping() {
    RenderMappedDsl contexts = new RenderMappedDsl(PG.dataSource(), "public", List.of());
    RenderedStatement.Cache cache = new RenderedStatement.Cache();
    LedgerMigrations.migrateDomain(PG.dataSource(), DomainSchemas.schemaName("other"));
    List<String> sql = new ArrayList<>();
    for (String domain : List.of(DOMAIN, "other", DOMAIN)) {
      sql.add(
          cache
              .get(
                  contexts.forDomain(domain),
                  "count",
                  () -> DSL.selectCount().from(TASKS).where(TASKS.ID.eq(ID.field())),
                  List.of(ID))
              .sql());
    }
    assertThat(sql.get(0)).contains(DomainSchemas.schemaName(DOMAIN)).isEqualTo(sql.get(2));
    assertThat(sql.get(1)).contains(DomainSchemas.schemaName("other"));
  }

  /**
   * Lead statements go first, in order (one round trip without listeners, one execute each with):
   * the rows returned are the template's, which sees what the leads did; a lead takes slots' values
   * as the template does (the second lead's suffix), and a bind value that is no slot is refused.
   */
  @ParameterizedTest(name = "observed by a listener: {0}")
  @ValueSource(booleans = {false, true})
  void a_lead_statement_runs_first_and_the_templates_rows_are_returned(boolean observed) {
    List<String> seen = new ArrayList<>();
    ExecuteListener listener =
        new ExecuteListener() {
          @Override
          public void executeStart(ExecuteContext ctx) {
            seen.add(ctx.sql());
          }
        };
    RenderMappedDsl contexts =
        new RenderMappedDsl(PG.dataSource(), "public", observed ? List.of(listener) : List.of());
    DSLContext ctx = contexts.forDomain(DOMAIN);
    RenderedStatement.Cache cache = new RenderedStatement.Cache();
    Field<String> got = DSL.field(DSL.name("got"), SQLDataType.CLOB);
    List<String> values = new ArrayList<>();
    ctx.transaction(
        cfg -> {
          RenderedStatement s =
              cache.get(
                  cfg.dsl(),
                  "lead",
                  () ->
                      List.of(
                          DSL.select(DSL.field("set_config('ledger.lead_test', 'le', true)")),
                          DSL.select(
                              DSL.function(
                                  "set_config",
                                  String.class,
                                  DSL.inline("ledger.lead_test"),
                                  DSL.field("current_setting('ledger.lead_test', true)")
                                      .concat(SUFFIX.field()),
                                  DSL.inline(true)))),
                  () ->
                      DSL.select(
                          DSL.field("current_setting('ledger.lead_test', true)")
                              .concat(TITLE.field())
                              .as(got)),
                  List.of(TITLE, SUFFIX));
          for (String v : List.of(" one", " two")) {
            for (Record r : s.fetch(cfg.dsl(), new Field<?>[] {got}, v, "d")) {
              values.add(r.get(got));
            }
          }
          assertThatThrownBy(() -> s.execute(cfg.dsl(), " three", "d"))
              .isInstanceOf(IllegalStateException.class);
        });
    assertThat(values).containsExactly("led one", "led two");
    assertThat(seen).hasSize(observed ? 6 : 0);
    assertThatThrownBy(
            () ->
                RenderedStatement.render(
                    ctx,
                    List.of(DSL.select(DSL.val(1))),
                    DSL.select(TITLE.field()),
                    List.of(TITLE)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("not a slot");
  }

  private static void insert(
      RenderedStatement.Cache cache,
      DSLContext ctx,
      String id,
      String title,
      long priority,
      boolean blocked) {
    RenderedStatement insert =
        cache.get(
            ctx,
            "insert",
            () ->
                DSL.insertInto(TASKS)
                    .set(TASKS.ID, ID.field())
                    .set(TASKS.DOMAIN, DSL.inline(DOMAIN))
                    .set(TASKS.TITLE, TITLE.field())
                    .set(TASKS.BODY, DSL.inline(""))
                    .set(TASKS.REQUIREMENTS, REQUIREMENTS.field())
                    .set(TASKS.DEPENDS_ON, DSL.inline(List.<String>of(), TASKS.DEPENDS_ON))
                    .set(TASKS.CREATED_BY, DSL.inline("test"))
                    .set(TASKS.LABEL_RANK, DSL.inline(0L))
                    .set(TASKS.PRIORITY, PRIORITY.field())
                    .set(TASKS.CREATED, CREATED.field())
                    .set(TASKS.STATUS, DSL.inline("proposed"))
                    .set(TASKS.BLOCKED, BLOCKED.field()),
            List.of(ID, TITLE, REQUIREMENTS, PRIORITY, CREATED, BLOCKED));
    int n =
        insert.execute(
            ctx,
            id,
            title,
            List.of("skill-" + priority, "x,\"y\""),
            priority,
            Instant.parse("2026-11-30T00:00:00.123456Z"),
            blocked);
    assertThat(n).isEqualTo(1);
  }
}
