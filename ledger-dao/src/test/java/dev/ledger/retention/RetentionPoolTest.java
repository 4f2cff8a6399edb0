package dev.ledger.retention;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.InvalidInputException;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.SettableClock;
import dev.ledger.worker.Outcome;
import dev.ledger.worker.WorkerPool;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A worker pool told to purge its domains does, on its own thread; the setting is checked. */
class RetentionPoolTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @Test
  void a_pool_with_purge_every_purges_its_domains_that_have_a_retention() throws Exception {
    SettableClock clock = new SettableClock(Instant.parse("2026-03-01T09:00:00Z"));
    Ledger ledger = Ledger.open(PG.dataSource(), LedgerConfig.builder().clock(clock).build());
    for (int i = 0; i < 4; i++) {
      RetentionTest.completed(ledger, "pooled", "old " + i, b -> b);
      RetentionTest.completed(ledger, "unset", "old " + i, b -> b);
    }
    clock.advance(Duration.ofHours(2));
    ledger.retention().set("pooled", Duration.ofHours(1));
    String s = RetentionTest.schema("pooled");

    try (WorkerPool pool =
        WorkerPool.builder(ledger)
            .pollInterval(Duration.ofMillis(200))
            .purgeEvery(Duration.ofSeconds(1))
            .domain("pooled", (task, ctx) -> Outcome.done())
            .domain("unset", (task, ctx) -> Outcome.done())
            .start()) {
      long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (count("SELECT count(*) FROM " + s + ".tasks") > 0 && System.nanoTime() < deadline) {
        Thread.sleep(100);
      }
    }
    assertThat(count("SELECT count(*) FROM " + s + ".tasks")).isZero();
    assertThat(ledger.retention().get("pooled").orElseThrow().tasksRemoved()).isEqualTo(4);
    // a domain without a retention keeps everything
    assertThat(count("SELECT count(*) FROM " + RetentionTest.schema("unset") + ".tasks"))
        .isEqualTo(4);
  }

  private static long count(String sql) throws java.sql.SQLException {
    try (java.sql.Connection c = PostgresExtension.connect(PG.databaseName())) {
      return dev.ledger.testing.Fixtures.count(c, sql);
    }
  }

  @Test
  void purge_every_out_of_range_is_refused_naming_the_field() {
    Ledger ledger = Ledger.open(PG.dataSource());
    for (Duration bad : new Duration[] {null, Duration.ofMillis(999), Duration.ofDays(2)}) {
      assertThatThrownBy(() -> WorkerPool.builder(ledger).purgeEvery(bad))
          .isInstanceOfSatisfying(
              InvalidInputException.class, e -> assertThat(e.field()).isEqualTo("purge_every"));
    }
  }
}
