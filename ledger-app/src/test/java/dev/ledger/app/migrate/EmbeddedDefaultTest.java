package dev.ledger.app.migrate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.app.Cli;
import dev.ledger.app.ExitCodes;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** With no URL, {@code migrate} runs on an embedded PostgreSQL whose data persists. */
class EmbeddedDefaultTest {

  @Test
  void migrate_without_a_url_runs_on_an_embedded_postgresql_kept_in_the_ledger_home(
      @TempDir Path home) {
    Cli.Result first = Cli.run("migrate", "--ledger-home", home.toString());
    assertThat(first.exit()).as(first.err()).isEqualTo(ExitCodes.OK);
    assertThat(first.out())
        .contains("embedded PostgreSQL in " + home.resolve("postgres"))
        .contains("public  (directory)  created");
    assertThat(Files.exists(home.resolve("postgres").resolve("PG_VERSION"))).isTrue();

    Cli.Result second = Cli.run("migrate", "--ledger-home", home.toString());
    assertThat(second.exit()).as(second.err()).isEqualTo(ExitCodes.OK);
    assertThat(second.out()).contains("every schema is current").contains("0 Flyway runs");
  }
}
