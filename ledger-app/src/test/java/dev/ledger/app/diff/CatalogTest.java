package dev.ledger.app.diff;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.testing.PostgresExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Catalogs read back from a real PostgreSQL: normalised so the schema's name does not matter, and
 * complete enough that the SQL a diff prints rebuilds the head from the base, both ways.
 */
class CatalogTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  /**
   * Most of what the catalog reader models: keys, identity, generated, collation, partial index.
   */
  static final String RICH =
      """
      CREATE TABLE customers (
          id      bigserial PRIMARY KEY,
          email   text NOT NULL UNIQUE,
          name    varchar(80) COLLATE "C",
          score   numeric(10,2) DEFAULT 0 CHECK (score >= 0),
          created timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE orders (
          id          int GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          customer_id bigint NOT NULL REFERENCES customers (id) ON DELETE CASCADE,
          total       numeric(12,2) NOT NULL,
          total_cents bigint GENERATED ALWAYS AS ((total * 100)::bigint) STORED,
          note        text
      );
      ALTER TABLE orders ADD CONSTRAINT orders_total_positive CHECK (total > 0) NOT VALID;
      CREATE INDEX orders_by_customer ON orders (customer_id) INCLUDE (total) WHERE note IS NULL;
      CREATE INDEX customers_lower_email ON customers (lower(email));
      CREATE SEQUENCE invoice_numbers AS integer START WITH 1000 INCREMENT BY 10 CACHE 5 CYCLE;
      CREATE SCHEMA diff_audit;
      CREATE TABLE diff_audit.log (
          id          bigserial PRIMARY KEY,
          customer_id bigint REFERENCES customers (id),
          at          timestamptz
      );
      """;

  static final String RICH_CHANGED =
      """
      ALTER TABLE customers ALTER COLUMN name TYPE text;
      ALTER TABLE customers DROP COLUMN score;
      ALTER TABLE orders ALTER COLUMN note SET DEFAULT 'none';
      ALTER TABLE orders VALIDATE CONSTRAINT orders_total_positive;
      DROP INDEX customers_lower_email;
      ALTER SEQUENCE invoice_numbers INCREMENT BY 1 NO CYCLE;
      DROP TABLE diff_audit.log;
      DROP SCHEMA diff_audit;
      CREATE TABLE refunds (order_id int REFERENCES orders (id), amount numeric(12,2));
      CREATE UNIQUE INDEX customers_email_name ON customers (email, name);
      """;

  @TempDir Path temp;

  private ScratchPostgres.AppliedSet apply(String role, Path dir) {
    try (ScratchPostgres pg = ScratchPostgres.at(PG.jdbcUrl());
        MigrationSource source = MigrationSource.open("--" + role, dir.toString())) {
      return pg.apply(source, role, Map.of());
    }
  }

  @Test
  void same_set_in_two_differently_named_schemas_gives_equal_catalogs() {
    Path set = Cli.migrations(temp.resolve("rich"), "V1__rich.sql", RICH);

    Catalog base = apply("base", set).catalog();
    Catalog head = apply("head", set).catalog();

    assertThat(base).isEqualTo(head);
    assertThat(base.tables().keySet()).containsExactly("customers", "diff_audit.log", "orders");
    assertThat(base.schemas()).containsExactlyEntriesOf(Map.of("diff_audit", "diff_audit"));
    assertThat(base.sequences().keySet())
        .containsExactly("customers_id_seq", "diff_audit.log_id_seq", "invoice_numbers");
    assertThat(base.toString()).doesNotContain("ledger_diff_");
    assertThat(CatalogDiff.between(base, head).isEmpty()).isTrue();
  }

  @Test
  void catalog_holds_what_postgresql_says() {
    Catalog catalog =
        apply("head", Cli.migrations(temp.resolve("rich"), "V1__rich.sql", RICH)).catalog();

    Catalog.Table orders = catalog.tables().get("orders");
    assertThat(orders.columns().stream().map(Catalog.Column::definition))
        .containsExactly(
            "integer GENERATED ALWAYS AS IDENTITY NOT NULL",
            "bigint NOT NULL",
            "numeric(12,2) NOT NULL",
            "bigint GENERATED ALWAYS AS ((total * 100::numeric)::bigint) STORED",
            "text");
    assertThat(orders.constraints().values().stream().map(c -> c.name() + ": " + c.definition()))
        .containsExactly(
            "orders_customer_id_fkey: FOREIGN KEY (customer_id) REFERENCES customers(id) ON DELETE"
                + " CASCADE",
            "orders_pkey: PRIMARY KEY (id)",
            "orders_total_positive: CHECK (total > 0::numeric) NOT VALID");
    assertThat(orders.indexes().get("orders_by_customer").shape())
        .isEqualTo("btree (customer_id) INCLUDE (total) WHERE note IS NULL");
    assertThat(orders.indexes().get("orders_by_customer").keyColumns())
        .containsExactly("customer_id");
    assertThat(catalog.tables().get("customers").column("name").orElseThrow().definition())
        .isEqualTo("character varying(80) COLLATE \"C\"");
    assertThat(
            catalog.tables().get("customers").indexes().get("customers_lower_email").keyColumns())
        .isEmpty();
    assertThat(catalog.sequences().get("invoice_numbers").options())
        .isEqualTo(
            "AS integer START WITH 1000 INCREMENT BY 10 MINVALUE 1 MAXVALUE 2147483647 CACHE 5"
                + " CYCLE");
    assertThat(catalog.sequences().get("diff_audit.log_id_seq").ownedBySql())
        .isEqualTo("diff_audit.log.id");
  }

  @Test
  void printed_sql_rebuilds_the_head_from_the_base_in_every_direction() throws IOException {
    Path empty = Cli.migrations(temp.resolve("empty"));
    Path rich = Cli.migrations(temp.resolve("rich"), "V1__rich.sql", RICH);
    Path changed =
        Cli.migrations(
            temp.resolve("changed"), "V1__rich.sql", RICH, "V2__changed.sql", RICH_CHANGED);
    List<Path[]> pairs =
        List.of(
            new Path[] {empty, rich},
            new Path[] {rich, empty},
            new Path[] {rich, changed},
            new Path[] {changed, rich});
    for (Path[] pair : pairs) {
      Catalog base = apply("base", pair[0]).catalog();
      Catalog head = apply("head", pair[1]).catalog();
      CatalogDiff diff = CatalogDiff.between(base, head);
      assertThat(diff.isEmpty()).isFalse();

      Path replay = Files.createDirectories(temp.resolve("replay-" + pairs.indexOf(pair)));
      try (Stream<Path> files = Files.list(pair[0])) {
        for (Path f : files.toList()) {
          Files.copy(f, replay.resolve(f.getFileName()));
        }
      }
      Files.writeString(
          replay.resolve("V999999__schema_diff.sql"), String.join("\n", diff.script()) + "\n");
      Catalog replayed = apply("replay", replay).catalog();

      assertThat(CatalogDiff.between(replayed, head).changes())
          .as("%s -> %s", pair[0].getFileName(), pair[1].getFileName())
          .isEmpty();
    }
  }

  @Test
  void drop_order_puts_referencing_tables_first() {
    Catalog rich =
        apply("base", Cli.migrations(temp.resolve("rich"), "V1__rich.sql", RICH)).catalog();
    List<String> drops = new ArrayList<>();
    for (String sql : CatalogDiff.between(rich, Catalog.empty()).script()) {
      if (sql.startsWith("DROP")) {
        drops.add(sql);
      }
    }
    assertThat(drops)
        .containsExactly(
            "DROP TABLE diff_audit.log;",
            "DROP TABLE orders;",
            "DROP TABLE customers;",
            "DROP SEQUENCE invoice_numbers;",
            "DROP SCHEMA diff_audit CASCADE;");
  }

  @Test
  void scratch_schemas_are_dropped_after_success_and_after_failure() throws SQLException {
    apply("base", Cli.migrations(temp.resolve("rich"), "V1__rich.sql", RICH));
    Path broken = Cli.migrations(temp.resolve("broken"), "V1__rich.sql", RICH, "V2__x.sql", "x;");
    assertThatThrownBy(() -> apply("head", broken))
        .isInstanceOf(SchemaDiffException.class)
        .hasMessage(
            "head: "
                + broken
                + "/V2__x.sql line 1: syntax error at or near \"x\" (SQL state 42601)");

    try (Connection c = PostgresExtension.connect(PG.databaseName());
        Statement s = c.createStatement();
        ResultSet r =
            s.executeQuery(
                "SELECT count(*) FROM pg_namespace"
                    + " WHERE nspname LIKE 'ledger_diff_%' OR nspname = 'diff_audit'")) {
      r.next();
      assertThat(r.getInt(1)).isZero();
    }
  }
}
