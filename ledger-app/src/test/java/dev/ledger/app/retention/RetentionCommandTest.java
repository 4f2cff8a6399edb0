package dev.ledger.app.retention;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.Claimer;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.TaskSpec;
import dev.ledger.app.Cli;
import dev.ledger.app.ExitCodes;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.SettableClock;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code retention set, show, run, clear} against PostgreSQL: output, JSON, exit codes. */
class RetentionCommandTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void set_show_run_and_clear() throws Exception {
    // three tasks completed in 2020 and one left open: the purge removes the three
    SettableClock past = new SettableClock(Instant.parse("2020-01-01T00:00:00Z"));
    Ledger ledger = Ledger.open(PG.dataSource(), LedgerConfig.builder().clock(past).build());
    for (int i = 0; i < 3; i++) {
      ledger.fileAndAdmit(TaskSpec.builder("cli", "old " + i).build());
      Lease l = ledger.claimNext("cli", Claimer.of("w")).orElseThrow();
      ledger.complete(l, "ok");
    }
    String open = ledger.fileAndAdmit(TaskSpec.builder("cli", "open").build());

    Cli.Result set = Cli.run("retention", "set", "--domain", "cli", "--keep", "7d", "--url", url());
    assertThat(set.exit()).isEqualTo(ExitCodes.OK);
    assertThat(set.out()).isEqualTo("domain cli keeps terminal tasks for 7d\n");

    Cli.Result run =
        Cli.run("retention", "run", "--domain", "cli", "--batch", "2", "--json", "--url", url());
    assertThat(run.exit()).isEqualTo(ExitCodes.OK);
    JsonNode r = JSON.readTree(run.out());
    assertThat(r.get("tasks_removed").asLong()).isEqualTo(3);
    assertThat(r.get("events_removed").asLong()).isEqualTo(12);
    assertThat(r.get("batches").asLong()).isEqualTo(2);
    assertThat(r.get("domains").get(0).get("domain").asText()).isEqualTo("cli");
    assertThat(r.get("domains").get(0).get("removed_through_seq").asLong()).isEqualTo(12);
    assertThat(ledger.get(open).spec().title()).isEqualTo("open");

    Cli.Result show = Cli.run("retention", "show", "--json", "--url", url());
    JsonNode s = JSON.readTree(show.out()).get("domains").get(0);
    assertThat(s.get("retention_seconds").asLong()).isEqualTo(604_800);
    Cli.Result text = Cli.run("retention", "show", "--url", url());
    assertThat(text.out().lines().toList())
        .containsExactly(
            "DOMAIN                         KEEP      REMOVED  THROUGH_SEQ",
            "cli                              7d            3           12",
            "1 domain(s)");
    assertThat(s.get("tasks_removed").asLong()).isEqualTo(3);

    Cli.Result clear = Cli.run("retention", "clear", "--domain", "cli", "--url", url());
    assertThat(clear.out()).isEqualTo("cleared\n");
    Cli.Result none = Cli.run("retention", "run", "--domain", "cli", "--json", "--url", url());
    assertThat(none.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(none.out()).contains("domain").contains("has no retention");
  }

  @Test
  void a_fraction_of_a_second_is_refused_naming_the_field() {
    Cli.Result r =
        Cli.run(
            "retention", "set", "--domain", "cli", "--create", "--keep", "1500ms", "--url", url());
    assertThat(r.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(r.err())
        .isEqualTo(
            "error: --keep: must be a whole number of seconds (see 'ledger-app retention set"
                + " --help')\n");
  }

  private static String url() {
    return PG.jdbcUrl();
  }
}
