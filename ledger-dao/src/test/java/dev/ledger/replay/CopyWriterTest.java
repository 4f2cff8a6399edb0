package dev.ledger.replay;

import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import dev.ledger.schema.RenderMappedDsl;
import dev.ledger.testing.Fixtures;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TemplateSchemaGuard;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.JSON;
import org.jooq.JSONB;
import org.jooq.Record;
import org.jooq.TableField;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jooq.impl.TableImpl;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link CopyWriter} writes through {@code COPY} exactly what a jOOQ {@code INSERT} with bind
 * values writes, for every value that needs escaping in the text format, and every column type it
 * supports; a value it cannot write cancels the {@code COPY} and leaves the connection usable.
 */
class CopyWriterTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  static final TemplateSchemaGuard GUARD = new TemplateSchemaGuard();
  static final String LONG = long100k();

  /** Texts that need care in COPY's text format (and some that only look like they do). */
  static final List<String> TEXTS =
      List.of(
          "",
          "plain",
          "tab\there\tand\tthere",
          "new\nline\n",
          "carriage\rreturn\r\n",
          "back\\slash \\\\ double, trailing \\",
          "\\N",
          "\\.",
          "line\n\\.\nafter the end marker",
          "\\t \\n \\r \\b \\f \\v \\x41 \\101 (escapes as text)",
          "quotes \" and ' and \"\" , commas,,",
          "semicolon; pipe | percent % underscore _",
          "é ü ß Ω 日本語 한국어 עברית",
          "astral 🚀 𝄞 👩‍👩‍👧",
          "e\u0301 combining, \u200b zero width, \ufeff BOM",
          "controls \u0001\u0007\u0008\u000b\u000c\u001b\u001f\u007f\u0085",
          "null",
          "NULL",
          " leading and trailing spaces ",
          LONG);

  static Ledger ledger;
  static RenderMappedDsl dsl;
  static String schema;
  static String other;

  @BeforeAll
  static void provision() {
    ledger = Ledger.open(PG.dataSource());
    schema = ledger.provision("copy");
    other = ledger.provision("copy by insert");
    dsl = new RenderMappedDsl(PG.dataSource(), "public", List.of(GUARD));
  }

  @Test
  void the_statement_names_the_mapped_schema_and_every_column_quoted_in_the_tables_order()
      throws Exception {
    String sql = CopyWriter.statement(dsl.forSchema(schema), TASKS, List.of(TASKS.fields()));
    List<String> columns = new ArrayList<>();
    try (Connection c = PG.dataSource().getConnection()) {
      for (List<String> r :
          Fixtures.rows(
              c,
              "SELECT column_name FROM information_schema.columns WHERE table_schema = '"
                  + schema
                  + "' AND table_name = 'tasks' ORDER BY ordinal_position")) {
        columns.add("\"" + r.get(0) + "\"");
      }
    }
    assertThat(sql)
        .isEqualTo(
            "COPY \""
                + schema
                + "\".\"tasks\" ("
                + String.join(", ", columns)
                + ") FROM STDIN (FORMAT text)");
    assertThatThrownBy(
            () ->
                CopyWriter.statement(
                    dsl.forSchema(schema),
                    TASKS,
                    List.of(TASKS.ID, DSL.field(DSL.name("nope"), String.class))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("nope");
  }

  @Test
  void texts_lists_times_numbers_and_flags_read_back_as_an_insert_writes_them() throws Exception {
    List<TasksRecord> rows = new ArrayList<>();
    for (int i = 0; i < TEXTS.size(); i++) {
      String t = TEXTS.get(i);
      rows.add(
          new TasksRecord()
              .setId("t" + (100 + i) + t.substring(0, Math.min(t.length(), 30)))
              .setDomain("copy")
              .setTitle(t)
              .setBody(new StringBuilder(t).reverse().toString())
              .setRequirements(List.of(t, "x\"y\\z", "tab\t"))
              .setDependsOn(i % 2 == 0 ? List.of() : List.of(t))
              .setOrigin(i % 3 == 0 ? null : t)
              .setUpstreamEvent(i % 3 == 1 ? "" : null)
              .setCreatedBy(t.isEmpty() ? "x" : t)
              .setLabelRank((long) (i % 4))
              .setPriority(i % 2 == 0 ? Long.MIN_VALUE + i : Long.MAX_VALUE - i)
              .setCreated(Instant.parse("2026-11-29T23:35:59.123456Z").plusSeconds(i))
              .setStatus("claimed")
              .setHolder(i % 2 == 0 ? t : null)
              .setLeaseUntil(i % 2 == 0 ? null : Instant.parse("0001-01-01T00:00:00.000001Z"))
              .setAttempts((long) i)
              .setHandoff(i % 4 == 0 ? "" : t)
              .setReason(i % 4 == 1 ? null : t)
              .setSupersededBy(null)
              .setPostedTo(t)
              .setBlocked(i % 2 == 0)
              .setMaxAttempts(0L));
    }
    // a lone surrogate: pgjdbc writes '?' for a bind value, and so must COPY
    rows.add(
        copyOf(rows.get(1))
            .setId("t-lone")
            .setOrigin(null)
            .setTitle("lone \ud800 high, \udc00 low"));

    long copied =
        dsl.forSchema(schema)
            .transactionResult(
                c -> {
                  // blocked as written, as in a replay: the triggers (domain V8) are off
                  replayMode(c.dsl());
                  return CopyWriter.copy(c.dsl(), TASKS, List.of(TASKS.fields()), rows);
                });
    assertThat(copied).isEqualTo(rows.size());
    dsl.forSchema(other)
        .transaction(
            c -> {
              replayMode(c.dsl());
              c.dsl().batchInsert(rows).execute();
            });

    List<TasksRecord> byCopy = dsl.forSchema(schema).selectFrom(TASKS).orderBy(TASKS.ID).fetch();
    List<TasksRecord> byInsert = dsl.forSchema(other).selectFrom(TASKS).orderBy(TASKS.ID).fetch();
    assertThat(byCopy).hasSize(rows.size());
    for (int i = 0; i < byCopy.size(); i++) {
      assertThat(byCopy.get(i).intoMap()).isEqualTo(byInsert.get(i).intoMap());
    }
    for (TasksRecord r : rows) {
      if (!r.getId().equals("t-lone")) {
        TasksRecord back = dsl.forSchema(schema).fetchOne(TASKS, TASKS.ID.eq(r.getId()));
        assertThat(back.intoMap()).isEqualTo(r.intoMap());
      }
    }
    assertThat(dsl.forSchema(schema).fetchOne(TASKS, TASKS.ID.eq("t-lone")).getTitle())
        .isEqualTo("lone ? high, ? low");
    assertThat(GUARD.checked()).isPositive();
  }

  @Test
  void other_column_types_take_their_postgresql_text_forms() throws Exception {
    try (Connection c = PG.dataSource().getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "CREATE TABLE public.copy_types (id bigint, i integer, s smallint, n numeric,"
              + " b boolean, j jsonb, js json, ts timestamptz, t text)");
    }
    Types t = new Types();
    List<Record> rows = new ArrayList<>();
    rows.add(t.row(1L, null, null, null, null, null, null, null, null));
    rows.add(
        t.row(
            Long.MIN_VALUE,
            Integer.MAX_VALUE,
            Short.MIN_VALUE,
            new BigDecimal("-12345678901234567890.123456789e-3"),
            true,
            JSONB.valueOf("{\"a\": \"tab\\t nl\\n \\\\ \\\"q\\\" 🚀\", \"n\": [1, null]}"),
            JSON.valueOf("{ \"keep\" :  \"my spacing\\\\\" ,\n \"k\": 1 }"),
            OffsetDateTime.of(
                2026, 11, 30, 5, 5, 59, 123_456_789, ZoneOffset.ofHoursMinutes(5, 30)),
            "\\N"));
    rows.add(
        t.row(
            3L,
            0,
            (short) 0,
            BigDecimal.ZERO,
            false,
            JSONB.valueOf("[]"),
            JSON.valueOf("\"\""),
            OffsetDateTime.of(1, 1, 1, 0, 0, 0, 0, ZoneOffset.UTC),
            ""));
    long copied =
        DSL.using(PG.dataSource(), org.jooq.SQLDialect.POSTGRES)
            .transactionResult(c -> CopyWriter.copy(c.dsl(), t, List.of(t.fields()), rows));
    assertThat(copied).isEqualTo(3);
    try (Connection c = PG.dataSource().getConnection()) {
      assertThat(
              Fixtures.rows(
                  c,
                  "SELECT id, i, s, n, b, j::text, js::text, ts AT TIME ZONE 'UTC', t IS NULL, t"
                      + " FROM public.copy_types ORDER BY id"))
          .containsExactly(
              List.of(
                  "-9223372036854775808",
                  "2147483647",
                  "-32768",
                  "-12345678901234567.890123456789",
                  "t",
                  "{\"a\": \"tab\\t nl\\n \\\\ \\\"q\\\" 🚀\", \"n\": [1, null]}",
                  "{ \"keep\" :  \"my spacing\\\\\" ,\n \"k\": 1 }",
                  "2026-11-29 23:35:59.123456",
                  "f",
                  "\\N"),
              nulls(1),
              List.of("3", "0", "0", "0", "f", "[]", "\"\"", "0001-01-01 00:00:00", "f", ""));
    }
  }

  @Test
  void a_nul_midway_cancels_the_copy_and_the_connection_goes_on() throws Exception {
    List<TasksRecord> rows = new ArrayList<>();
    for (int i = 0; i < 3000; i++) {
      rows.add(
          copyOf(sample())
              .setId(String.format("n%05d", i))
              .setTitle(i == 2999 ? "bad \u0000 title" : "fine " + i));
    }
    // one connection only: whatever runs next runs on the connection the COPY used
    try (HikariDataSource one = PostgresExtension.pool(PG.jdbcUrl(), 1)) {
      String s = ledger.provision("copy nul");
      DSLContext ctx = new RenderMappedDsl(one, "public", List.of(GUARD)).forSchema(s);
      assertThatThrownBy(
              () ->
                  ctx.transaction(
                      c -> CopyWriter.copy(c.dsl(), TASKS, List.of(TASKS.fields()), rows)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(
              "COPY into tasks: column title holds U+0000, which PostgreSQL text cannot store");
      assertThat(ctx.fetchCount(TASKS)).isZero();
      long copied =
          ctx.transactionResult(
              c -> CopyWriter.copy(c.dsl(), TASKS, List.of(TASKS.fields()), rows.subList(0, 10)));
      assertThat(copied).isEqualTo(10);
      assertThat(ctx.fetchCount(TASKS)).isEqualTo(10);
    }
  }

  @Test
  void a_row_the_server_refuses_midway_fails_the_transaction_and_the_connection_goes_on()
      throws Exception {
    List<TasksRecord> rows = new ArrayList<>();
    for (int i = 0; i < 3000; i++) {
      rows.add(copyOf(sample()).setId(i == 2999 ? "d00000" : String.format("d%05d", i)));
    }
    try (HikariDataSource one = PostgresExtension.pool(PG.jdbcUrl(), 1)) {
      String s = ledger.provision("copy duplicate");
      DSLContext ctx = new RenderMappedDsl(one, "public", List.of(GUARD)).forSchema(s);
      assertThatThrownBy(
              () ->
                  ctx.transaction(
                      c -> CopyWriter.copy(c.dsl(), TASKS, List.of(TASKS.fields()), rows)))
          .isInstanceOf(org.jooq.exception.DataAccessException.class)
          .satisfies(
              e ->
                  assertThat(((org.jooq.exception.DataAccessException) e).sqlState())
                      .isEqualTo("23505"));
      assertThat(ctx.fetchCount(TASKS)).isZero();
      try (Connection c = one.getConnection();
          Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SELECT 1")) {
        assertThat(rs.next()).isTrue();
      }
    }
  }

  static TasksRecord sample() {
    return new TasksRecord()
        .setId("s")
        .setDomain("copy")
        .setTitle("t")
        .setBody("b")
        .setRequirements(List.of())
        .setDependsOn(List.of())
        .setCreatedBy("c")
        .setLabelRank(0L)
        .setPriority(0L)
        .setCreated(Instant.parse("2026-11-29T23:35:59.123456Z"))
        .setStatus("proposed")
        .setAttempts(0L)
        .setBlocked(false)
        .setMaxAttempts(0L);
  }

  static TasksRecord copyOf(TasksRecord r) {
    return r.copy().setId(r.getId());
  }

  static List<String> nulls(long id) {
    List<String> out = new ArrayList<>();
    out.add(Long.toString(id));
    for (int i = 0; i < 7; i++) {
      out.add(null);
    }
    out.add("t");
    out.add(null);
    return out;
  }

  /** 100,000 characters mixing every kind of text above, so multi-byte characters span buffers. */
  static String long100k() {
    StringBuilder b = new StringBuilder();
    String[] parts = {"a\\b\tc\nd\re ", "é", "日", "🚀", "\"", ","};
    for (int i = 0; b.length() < 99_990; i++) {
      b.append(parts[i % parts.length]);
    }
    return b.toString();
  }

  /** The scratch table {@code public.copy_types}, declared as generated code declares tables. */
  static final class Types extends TableImpl<Record> {
    private static final long serialVersionUID = 1L;

    final TableField<Record, Long> id = createField(DSL.name("id"), SQLDataType.BIGINT, this, "");
    final TableField<Record, Integer> i = createField(DSL.name("i"), SQLDataType.INTEGER, this, "");
    final TableField<Record, Short> s = createField(DSL.name("s"), SQLDataType.SMALLINT, this, "");
    final TableField<Record, BigDecimal> n =
        createField(DSL.name("n"), SQLDataType.NUMERIC, this, "");
    final TableField<Record, Boolean> b = createField(DSL.name("b"), SQLDataType.BOOLEAN, this, "");
    final TableField<Record, JSONB> j = createField(DSL.name("j"), SQLDataType.JSONB, this, "");
    final TableField<Record, JSON> js = createField(DSL.name("js"), SQLDataType.JSON, this, "");
    final TableField<Record, OffsetDateTime> ts =
        createField(DSL.name("ts"), SQLDataType.TIMESTAMPWITHTIMEZONE(6), this, "");
    final TableField<Record, String> t = createField(DSL.name("t"), SQLDataType.CLOB, this, "");

    Types() {
      super(DSL.name("copy_types"), DSL.schema(DSL.name("public")));
    }

    /** A record of this table holding the values, in column order. */
    @SuppressWarnings("unchecked")
    Record row(Object... values) {
      Record r = DSL.using(org.jooq.SQLDialect.POSTGRES).newRecord(this);
      Field<?>[] fields = fields();
      for (int k = 0; k < values.length; k++) {
        r.set((Field<Object>) fields[k], values[k]);
      }
      return r;
    }
  }

  /** Turns the derived-state triggers off for the transaction, as {@code Replay.begin} does. */
  private static void replayMode(org.jooq.DSLContext ctx) {
    ctx.select(org.jooq.impl.DSL.field("set_config('ledger.replay', 'on', true)")).fetch();
  }
}
