package dev.ledger.app.diff;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.app.Cli;
import dev.ledger.testing.PostgresExtension;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** Failing migrations, bad input and unreachable servers: exit 2 and one clear line. */
class ErrorsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @TempDir Path temp;

  private Path ok() {
    return DiffFixtures.migrations(
        temp.resolve("ok"), "V1__t.sql", "CREATE TABLE t (id int PRIMARY KEY);\n");
  }

  @Test
  void syntax_error_exits_2_naming_the_file_and_line() {
    Path head =
        DiffFixtures.migrations(
            temp.resolve("head"),
            "V1__t.sql",
            "CREATE TABLE t (id int PRIMARY KEY);\n",
            "V2__broken.sql",
            """
            -- adds a table

            /* a block
               comment */
            CREATE TABLE u (
                a int,
                b int nto null
            );
            """);

    Cli.Result result =
        Cli.run(
            "schema-diff",
            "--base",
            ok().toString(),
            "--head",
            head.toString(),
            "--url",
            PG.jdbcUrl());

    assertThat(result.exit()).isEqualTo(SchemaDiffCommand.ERROR).isEqualTo(2);
    assertThat(result.out()).isEmpty();
    assertThat(result.err())
        .isEqualTo(
            "schema-diff: head: "
                + head
                + "/V2__broken.sql line 7: syntax error at or near \"nto\" (SQL state 42601)\n");
  }

  @Test
  void error_in_a_later_statement_of_a_script_names_the_line_postgresql_points_at() {
    Path base =
        DiffFixtures.migrations(
            temp.resolve("base"),
            "V1__two.sql",
            "CREATE TABLE t (id int);\n\nCREATE VIEW v AS\n  SELECT id,\n    nope FROM t;\n");

    Cli.Result result =
        Cli.run(
            "schema-diff",
            "--base",
            base.toString(),
            "--head",
            ok().toString(),
            "--url",
            PG.jdbcUrl());

    assertThat(result.exit()).isEqualTo(2);
    assertThat(result.err())
        .isEqualTo(
            "schema-diff: base: "
                + base
                + "/V1__two.sql line 5: column \"nope\" does not exist (SQL state 42703)\n");
  }

  @Test
  void error_without_a_position_names_the_line_its_statement_starts_on() {
    Path base =
        DiffFixtures.migrations(
            temp.resolve("base"),
            "V1__two.sql",
            "CREATE TABLE t (id int);\n\nCREATE INDEX t_y ON t (\n  nope);\n");

    Cli.Result result =
        Cli.run(
            "schema-diff",
            "--base",
            base.toString(),
            "--head",
            ok().toString(),
            "--url",
            PG.jdbcUrl());

    assertThat(result.exit()).isEqualTo(2);
    assertThat(result.err())
        .isEqualTo(
            "schema-diff: base: "
                + base
                + "/V1__two.sql line 3: column \"nope\" does not exist (SQL state 42703)\n");
  }

  @Test
  void missing_placeholder_exits_2_and_given_placeholder_is_used() {
    Path set =
        DiffFixtures.migrations(
            temp.resolve("ph"), "V1__t.sql", "CREATE TABLE ${table} (id int);\n");

    Cli.Result missing =
        Cli.run(
            "schema-diff",
            "--base",
            set.toString(),
            "--head",
            set.toString(),
            "--url",
            PG.jdbcUrl());
    assertThat(missing.exit()).isEqualTo(2);
    assertThat(missing.err())
        .startsWith("schema-diff: base: ")
        .contains("No value provided for placeholder: ${table}")
        .endsWith("\n")
        .hasLineCount(1);

    Path empty = DiffFixtures.migrations(temp.resolve("empty"));
    Cli.Result given =
        Cli.run(
            "schema-diff",
            "--base",
            empty.toString(),
            "--head",
            set.toString(),
            "--url",
            PG.jdbcUrl(),
            "--placeholder",
            "table=things",
            "--format",
            "json");
    assertThat(given.err()).isEmpty();
    assertThat(DiffFixtures.changeLines(given.out()))
        .containsExactly("things table things added safe", "things column id added safe");
  }

  @Test
  void path_that_is_neither_directory_nor_jar_exits_2() {
    Path missing = temp.resolve("nowhere");
    Cli.Result result =
        Cli.run("schema-diff", "--base", missing.toString(), "--head", ok().toString());
    assertThat(result.exit()).isEqualTo(2);
    assertThat(result.err())
        .isEqualTo(
            "schema-diff: --base: " + missing + " is neither a migrations directory nor a jar\n");
  }

  @Test
  void unknown_format_is_a_usage_error() {
    Cli.Result result =
        Cli.run(
            "schema-diff",
            "--base",
            ok().toString(),
            "--head",
            ok().toString(),
            "--format",
            "html");
    assertThat(result.exit()).isEqualTo(2);
    assertThat(result.err()).contains("--format").contains("html");
  }

  @Test
  void unreachable_server_exits_2_without_showing_the_password_even_in_the_stack_trace() {
    Cli.Result result =
        Cli.run(
            "schema-diff",
            "--base",
            ok().toString(),
            "--head",
            ok().toString(),
            "--url",
            "jdbc:postgresql://127.0.0.1:1/postgres?user=ledger&password=hunter2-secret",
            "--verbose");
    assertThat(result.exit()).isEqualTo(2);
    assertThat(result.err()).startsWith("schema-diff: --url: cannot connect: ").contains("\tat ");
    assertThat(result.err() + result.out()).doesNotContain("hunter2-secret");
  }

  @Test
  void url_that_is_not_postgresql_is_a_usage_error_that_does_not_echo_it() {
    Cli.Result result =
        Cli.run(
            "schema-diff",
            "--base",
            ok().toString(),
            "--head",
            ok().toString(),
            "--url",
            "jdbc:mysql://db/x?password=hunter2-secret");
    assertThat(result.exit()).isEqualTo(2);
    assertThat(result.err())
        .isEqualTo(
            "schema-diff: --url: expected"
                + " jdbc:postgresql://host[:port]/database[?user=...&password=...]\n");
  }

  @Test
  void verbose_adds_the_stack_trace() {
    Path head =
        DiffFixtures.migrations(temp.resolve("head"), "V1__broken.sql", "CREATE TABLE (;\n");
    Cli.Result result =
        Cli.run(
            "schema-diff",
            "--base",
            ok().toString(),
            "--head",
            head.toString(),
            "--url",
            PG.jdbcUrl(),
            "--verbose");
    assertThat(result.exit()).isEqualTo(2);
    assertThat(result.err())
        .startsWith("schema-diff: head: " + head + "/V1__broken.sql line 1: syntax error")
        .contains("dev.ledger.diff.SchemaDiffException")
        .contains("\tat ");
  }
}
