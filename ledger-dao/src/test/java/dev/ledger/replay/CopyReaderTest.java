package dev.ledger.replay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.SQLDialect;
import org.jooq.Table;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link CopyReader} reads through {@code COPY TO STDOUT (FORMAT binary)} exactly the values a jOOQ
 * fetch of the same select reads, and a failure midway leaves the connection usable.
 */
class CopyReaderTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  static final Table<?> T = DSL.table(DSL.name("public", "copy_read"));
  static final Field<Long> ID = DSL.field(DSL.name("id"), SQLDataType.BIGINT);
  static final Field<String> A = DSL.field(DSL.name("a"), SQLDataType.CLOB);
  static final Field<String> B = DSL.field(DSL.name("b"), SQLDataType.CLOB);

  static DSLContext ctx;

  @BeforeAll
  static void fill() throws Exception {
    ctx = DSL.using(PG.dataSource(), SQLDialect.POSTGRES);
    try (Connection c = PG.dataSource().getConnection()) {
      try (Statement s = c.createStatement()) {
        s.execute("CREATE TABLE public.copy_read (id bigint PRIMARY KEY, a text, b text)");
      }
      try (PreparedStatement ps =
          c.prepareStatement("INSERT INTO public.copy_read VALUES (?, ?, ?)")) {
        List<String> texts = new ArrayList<>(CopyWriterTest.TEXTS);
        texts.add("lone \ud800 surrogate");
        for (int i = 0; i < texts.size(); i++) {
          ps.setLong(1, i);
          ps.setString(2, texts.get(i));
          ps.setString(3, i % 3 == 0 ? null : texts.get(texts.size() - 1 - i));
          ps.addBatch();
        }
        for (int i = 0; i < 30_000; i++) {
          ps.setLong(1, 1_000 + i);
          ps.setString(2, "row " + i + "\t\\ é 🚀");
          ps.setString(3, i % 2 == 0 ? "" : null);
          ps.addBatch();
        }
        ps.executeBatch();
      }
    }
  }

  @Test
  void rows_read_as_a_fetch_reads_them() {
    var select = ctx.select(A, B).from(T).orderBy(ID);
    List<List<String>> read = new ArrayList<>();
    long n =
        ctx.transactionResult(
            c -> CopyReader.forEach(c.dsl(), select, row -> read.add(Arrays.asList(row.clone()))));
    List<List<String>> fetched = new ArrayList<>();
    for (var r : select.fetch()) {
      fetched.add(Arrays.asList(r.value1(), r.value2()));
    }
    assertThat(n).isEqualTo(fetched.size());
    assertThat(read).isEqualTo(fetched);
    assertThat(read.get(0)).containsExactly("", null);
    assertThat(read.get(CopyWriterTest.TEXTS.size() - 1).get(0)).isEqualTo(CopyWriterTest.LONG);
  }

  @Test
  void a_failure_midway_cancels_the_copy_and_the_connection_goes_on() throws Exception {
    // one connection only: whatever runs next runs on the connection the COPY used
    try (HikariDataSource one = PostgresExtension.pool(PG.jdbcUrl(), 1)) {
      DSLContext db = DSL.using(one, SQLDialect.POSTGRES);
      long[] seen = {0};
      assertThatThrownBy(
              () ->
                  db.transaction(
                      c ->
                          CopyReader.forEach(
                              c.dsl(),
                              c.dsl().select(A, B).from(T).orderBy(ID),
                              row -> {
                                if (++seen[0] == 20_000) {
                                  throw new IllegalStateException("stop at 20000");
                                }
                              })))
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("stop at 20000");
      assertThat(seen[0]).isEqualTo(20_000);
      assertThat(db.fetchCount(T)).isEqualTo(30_000 + CopyWriterTest.TEXTS.size() + 1);
      long n =
          db.transactionResult(c -> CopyReader.forEach(c.dsl(), db.select(A).from(T), r -> {}));
      assertThat(n).isEqualTo(30_000 + CopyWriterTest.TEXTS.size() + 1);
    }
  }

  @Test
  void a_server_error_keeps_its_sqlstate_and_other_columns_than_text_are_refused() {
    assertThatThrownBy(
            () ->
                ctx.transaction(
                    c ->
                        CopyReader.forEach(
                            c.dsl(),
                            c.dsl().select(A).from(DSL.table(DSL.name("public", "missing"))),
                            r -> {})))
        .isInstanceOf(DataAccessException.class)
        .satisfies(e -> assertThat(((DataAccessException) e).sqlState()).isEqualTo("42P01"));
    assertThatThrownBy(
            () ->
                ctx.transaction(
                    c -> CopyReader.forEach(c.dsl(), c.dsl().select(ID, A).from(T), r -> {})))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("id");
  }
}
