package dev.ledger.app.migrate;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.migrate.Operation;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ProgressTest {

  @Test
  void a_tick_shows_done_over_total_and_what_is_in_flight() {
    StringWriter err = new StringWriter();
    try (Progress p =
        new Progress(
            new PrintWriter(err), "ledger-app migrate", "schemas", null, Duration.ofSeconds(1))) {
      p.tick();
      p.started(Operation.MIGRATE, 3);
      p.schemaStarted("ledger_a_00000001");
      p.schemaFinished("ledger_a_00000001", false);
      p.schemaStarted("ledger_b_00000002");
      p.tick();
    }
    assertThat(err.toString().lines())
        .containsExactly(
            "ledger-app migrate: reading the database (0 s)",
            "ledger-app migrate: 1/3 schemas, working on ledger_b_00000002 (0 s)");
  }

  @Test
  void a_run_shorter_than_the_threshold_prints_nothing() {
    StringWriter err = new StringWriter();
    try (Progress p = Progress.on(new PrintWriter(err), "ledger-app migrate", "schemas")) {
      p.started(Operation.MIGRATE, 1);
    }
    assertThat(err.toString()).isEmpty();
  }
}
