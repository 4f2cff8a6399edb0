package dev.ledger.diff;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.testing.PostgresExtension;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

class SchemaSnapshotTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @TempDir Path temp;

  @Test
  void snapshot_is_the_canonical_ddl_of_each_set_sorted_by_name() {
    Path set =
        Diffs.migrations(
            temp.resolve("set"),
            "V1__b.sql",
            "CREATE TABLE zebra (id bigserial PRIMARY KEY, name text NOT NULL);\n",
            "V2__a.sql",
            "CREATE TABLE apple (zebra bigint REFERENCES zebra (id));\n"
                + "CREATE INDEX apple_zebra ON apple (zebra);\n");
    ScratchPostgres.AppliedSet applied;
    try (ScratchPostgres pg = ScratchPostgres.at(PG.jdbcUrl());
        MigrationSource source = MigrationSource.open("set", set.toString())) {
      applied = pg.apply(source, "snapshot", Map.of());
    }

    String text =
        SchemaSnapshot.render(
            List.of("Test snapshot.", ""),
            List.of(new SchemaSnapshot.Section("fruit set", applied)));

    assertThat(text)
        .isEqualTo(
            """
            -- Test snapshot.
            --

            -- fruit set, at version 2

            CREATE SEQUENCE zebra_id_seq AS bigint START WITH 1 INCREMENT BY 1 MINVALUE 1\
             MAXVALUE 9223372036854775807 CACHE 1 NO CYCLE;

            CREATE TABLE apple (
                zebra bigint
            );

            CREATE TABLE zebra (
                id bigint DEFAULT nextval('zebra_id_seq'::regclass) NOT NULL,
                name text NOT NULL,
                CONSTRAINT zebra_pkey PRIMARY KEY (id)
            );

            CREATE INDEX apple_zebra ON apple USING btree (zebra);

            ALTER TABLE apple ADD CONSTRAINT apple_zebra_fkey FOREIGN KEY (zebra) REFERENCES\
             zebra(id);

            ALTER SEQUENCE zebra_id_seq OWNED BY zebra.id;
            """);
  }
}
