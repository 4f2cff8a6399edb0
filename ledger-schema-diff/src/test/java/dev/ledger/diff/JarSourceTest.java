package dev.ledger.diff;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.testing.PostgresExtension;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** Migration sets read from jars: {@code JAR}, {@code JAR!/DIR}, and what goes wrong. */
class JarSourceTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @TempDir Path temp;

  private Path jar(String name, String... entriesAndContents) throws IOException {
    Path jar = temp.resolve(name);
    try (OutputStream file = Files.newOutputStream(jar);
        JarOutputStream out = new JarOutputStream(file)) {
      for (int i = 0; i < entriesAndContents.length; i += 2) {
        out.putNextEntry(new JarEntry(entriesAndContents[i]));
        out.write(entriesAndContents[i + 1].getBytes(StandardCharsets.UTF_8));
        out.closeEntry();
      }
    }
    return jar;
  }

  @Test
  void jar_with_one_migrations_directory_is_read_without_naming_it() throws IOException {
    Path base = jar("app-1.jar", "db/migration/V1__t.sql", "CREATE TABLE t (id int);\n");
    Path head =
        jar(
            "app-2.jar",
            "db/migration/V1__t.sql",
            "CREATE TABLE t (id int);\n",
            "db/migration/V2__u.sql",
            "ALTER TABLE t ADD COLUMN u text;\n",
            "META-INF/MANIFEST.MF",
            "Manifest-Version: 1.0\n");

    DiffReport result = SchemaDiff.run(Diffs.request(base, head, PG.jdbcUrl()));

    assertThat(Diffs.changeLines(result)).containsExactly("t column u added safe");
    assertThat(Diffs.json(result).get("head").asText()).isEqualTo(head + "!/db/migration");
  }

  @Test
  void jar_with_several_directories_needs_one_named() throws IOException {
    Path both =
        jar(
            "ledger.jar",
            "db/ledger/directory/V1__a.sql",
            "CREATE TABLE a (id int);\n",
            "db/ledger/domain/V1__b.sql",
            "CREATE TABLE b (id int);\n");

    assertThatThrownBy(() -> SchemaDiff.run(Diffs.request(both, both, PG.jdbcUrl())))
        .isInstanceOf(SchemaDiffException.class)
        .hasMessage(
            "--base: "
                + both
                + " holds .sql files in db/ledger/directory, db/ledger/domain: name one, e.g. "
                + both
                + "!/db/ledger/directory");

    DiffReport named =
        SchemaDiff.run(
            Diffs.request(
                both + "!/db/ledger/directory", both + "!/db/ledger/domain", PG.jdbcUrl()));
    assertThat(Diffs.changeLines(named))
        .containsExactly(
            "a table a dropped destructive", "b table b added safe", "b column id added safe");
  }

  @Test
  void missing_directory_in_a_jar_is_an_error_naming_it() throws IOException {
    Path jar = jar("app.jar", "db/migration/V1__t.sql", "CREATE TABLE t (id int);\n");
    assertThatThrownBy(() -> SchemaDiff.run(Diffs.request(jar + "!/db/other", jar, PG.jdbcUrl())))
        .isInstanceOf(SchemaDiffException.class)
        .hasMessage("--base: " + jar + " has no directory db/other with files in it");
  }

  @Test
  void failing_script_in_a_jar_is_named_inside_the_jar() throws IOException {
    Path jar =
        jar(
            "app.jar",
            "db/migration/V1__t.sql",
            "CREATE TABLE t (id int);\n",
            "db/migration/V2__broken.sql",
            "ALTER TABLE t\n  ADD COLUMN x nosuchtype;\n");
    assertThatThrownBy(() -> SchemaDiff.run(Diffs.request(jar, jar, PG.jdbcUrl())))
        .isInstanceOf(SchemaDiffException.class)
        .hasMessage(
            "base: "
                + jar
                + "!/db/migration/V2__broken.sql line 2: type \"nosuchtype\" does not exist (SQL"
                + " state 42704)");
  }

  @Test
  void extracted_jars_are_removed() throws IOException {
    Path jar = jar("app.jar", "db/migration/V1__t.sql", "CREATE TABLE t (id int);\n");
    Path directory;
    try (MigrationSource source = MigrationSource.open("--base", jar.toString())) {
      directory = source.directory();
      assertThat(directory.resolve("V1__t.sql")).hasContent("CREATE TABLE t (id int);");
    }
    assertThat(directory).doesNotExist();
  }
}
