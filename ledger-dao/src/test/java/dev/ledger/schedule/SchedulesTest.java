package dev.ledger.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.InvalidInputException;
import dev.ledger.Label;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.Status;
import dev.ledger.Task;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.SettableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Schedules on PostgreSQL: the API's round trip, bad input, catch-up, DST and racing filers. */
class SchedulesTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private SettableClock clock;
  private Ledger ledger;
  private Schedules schedules;

  @BeforeEach
  void open() {
    clock = new SettableClock(Instant.parse("2026-01-01T00:00:00.250Z"));
    ledger = Ledger.open(PG.dataSource(), LedgerConfig.builder().clock(clock).build());
    schedules = ledger.schedules();
    schedules.list().forEach(s -> schedules.remove(s.name()));
  }

  private static List<String> upstreamEvents(Ledger ledger, String domain, String name) {
    return ledger.withOrigin(domain, Schedules.origin(name)).stream()
        .map(t -> t.spec().upstreamEvent())
        .sorted()
        .toList();
  }

  @Test
  void round_trip_add_get_update_pause_resume_remove() {
    ScheduleSpec spec =
        ScheduleSpec.builder(
                "nightly", "reports", Timing.cron("30 2 * * *", "Europe/Berlin"), "Build")
            .body("the nightly report")
            .requirements(List.of("sql"))
            .label(Label.INTERNAL)
            .priority(7)
            .maxAttempts(3)
            .catchUp(5)
            .build();
    Schedule added = schedules.add(spec);
    assertThat(added.spec()).isEqualTo(spec);
    assertThat(added.paused()).isFalse();
    assertThat(added.lastTick()).isNull();
    assertThat(added.nextTick()).isEqualTo(Instant.parse("2026-01-01T01:30:00Z"));
    assertThat(added.created()).isEqualTo(Instant.parse("2026-01-01T00:00:00.250Z"));
    assertThat(schedules.get("nightly")).contains(added);

    // the same timing: the next tick stays; another timing: the first of it after now
    clock.advance(Duration.ofMinutes(10));
    Schedule retitled = schedules.update(spec.toBuilder().title("Build it").build());
    assertThat(retitled.spec().title()).isEqualTo("Build it");
    assertThat(retitled.nextTick()).isEqualTo(added.nextTick());
    // the ledger's clock, kept strictly increasing by a microsecond where it stood still
    assertThat(retitled.updated())
        .isBetween(
            Instant.parse("2026-01-01T00:10:00.250Z"), Instant.parse("2026-01-01T00:10:00.251Z"));
    Schedule hourly =
        schedules.update(
            retitled.spec().toBuilder().timing(Timing.every(Duration.ofHours(1))).build());
    assertThat(hourly.nextTick()).isEqualTo(Instant.parse("2026-01-01T01:00:00Z"));

    assertThat(schedules.pause("nightly").paused()).isTrue();
    clock.advance(Duration.ofHours(3)); // 03:10:00.25: three ticks pass while paused
    assertThat(schedules.fileDue("reports")).isZero();
    Schedule resumed = schedules.resume("nightly");
    assertThat(resumed.paused()).isFalse();
    assertThat(resumed.nextTick()).isEqualTo(Instant.parse("2026-01-01T04:00:00Z"));
    assertThat(ledger.withOrigin("reports", "schedule:nightly")).isEmpty();

    clock.advance(Duration.ofHours(1)); // 04:10
    assertThat(schedules.fileDue("reports")).isEqualTo(1);
    Task task = ledger.withOrigin("reports", "schedule:nightly").get(0);
    assertThat(task.status()).isEqualTo(Status.ADMITTED);
    assertThat(task.spec().title()).isEqualTo("Build it");
    assertThat(task.spec().body()).isEqualTo("the nightly report");
    assertThat(task.spec().requirements()).containsExactly("sql");
    assertThat(task.spec().classification()).isEqualTo(Label.INTERNAL);
    assertThat(task.spec().priority()).isEqualTo(7);
    assertThat(task.spec().maxAttempts()).isEqualTo(3);
    assertThat(task.spec().upstreamEvent()).isEqualTo("2026-01-01T04:00:00Z");
    assertThat(task.spec().createdBy()).isEqualTo(Schedules.FILED_BY);
    assertThat(schedules.get("nightly").orElseThrow().lastTick())
        .isEqualTo(Instant.parse("2026-01-01T04:00:00Z"));

    schedules.remove("nightly");
    assertThat(schedules.get("nightly")).isEmpty();
    assertThat(schedules.list()).isEmpty();
    assertThat(ledger.withOrigin("reports", "schedule:nightly")).hasSize(1); // its tasks stay
    assertThatThrownBy(() -> schedules.remove("nightly"))
        .isInstanceOf(ScheduleNotFoundException.class);
    assertThatThrownBy(() -> schedules.pause("nightly"))
        .isInstanceOf(ScheduleNotFoundException.class);
  }

  @Test
  void put_adds_then_changes_only_what_differs() {
    ScheduleSpec spec =
        ScheduleSpec.builder("put", "reports", Timing.every(Duration.ofMinutes(5)), "Put").build();
    Schedule first = schedules.put(spec);
    clock.advance(Duration.ofSeconds(1));
    assertThat(schedules.put(spec)).isEqualTo(first); // unchanged: not even updated_at
    assertThat(schedules.put(spec.toBuilder().priority(3).build()).spec().priority()).isEqualTo(3);
  }

  private static ScheduleSpec spec(
      String name, String domain, String title, int attempts, int catchUp) {
    return new ScheduleSpec(
        name,
        domain,
        Timing.every(Duration.ofMinutes(1)),
        title,
        "",
        List.of(),
        Label.PUBLIC,
        0,
        attempts,
        catchUp);
  }

  @Test
  void bad_input_names_the_field_and_writes_nothing() {
    List<Object[]> cases =
        List.of(
            new Object[] {"name", spec("", "reports", "T", 0, 1)},
            new Object[] {"name", spec("has space", "reports", "T", 0, 1)},
            new Object[] {"name", spec("x".repeat(201), "reports", "T", 0, 1)},
            new Object[] {"domain", spec("ok", "", "T", 0, 1)},
            new Object[] {"domain", spec("ok", "nul\u0000", "T", 0, 1)},
            new Object[] {"title", spec("ok", "reports", "", 0, 1)},
            new Object[] {"max_attempts", spec("ok", "reports", "T", 1001, 1)},
            new Object[] {"catch_up", spec("ok", "reports", "T", 0, 0)},
            new Object[] {"catch_up", spec("ok", "reports", "T", 0, 1001)},
            new Object[] {
              "timing",
              new ScheduleSpec("ok", "reports", null, "T", "", List.of(), Label.PUBLIC, 0, 0, 1)
            });
    for (Object[] c : cases) {
      assertThatThrownBy(() -> schedules.add((ScheduleSpec) c[1]))
          .as("%s", c[0])
          .isInstanceOf(InvalidInputException.class)
          .extracting(e -> ((InvalidInputException) e).field())
          .isEqualTo(c[0]);
    }
    assertThatThrownBy(() -> schedules.pause("no such/name"))
        .isInstanceOf(InvalidInputException.class)
        .extracting(e -> ((InvalidInputException) e).field())
        .isEqualTo("name");
    assertThat(schedules.list()).isEmpty();
  }

  @Test
  void duplicate_names_are_refused() {
    ScheduleSpec spec =
        ScheduleSpec.builder("twice", "reports", Timing.every(Duration.ofMinutes(1)), "T").build();
    schedules.add(spec);
    assertThatThrownBy(() -> schedules.add(spec.toBuilder().title("Other").build()))
        .isInstanceOf(InvalidInputException.class)
        .hasMessage("name: a schedule named 'twice' exists already");
    assertThat(schedules.get("twice").orElseThrow().spec().title()).isEqualTo("T");
  }

  @Test
  void after_downtime_the_catch_up_policy_files_the_latest_ticks_only() {
    Timing minutely = Timing.every(Duration.ofMinutes(1));
    for (int catchUp : List.of(1, 3, 100)) {
      schedules.add(
          ScheduleSpec.builder("c" + catchUp, "catch-up", minutely, "T").catchUp(catchUp).build());
    }
    clock.advance(Duration.ofMinutes(10)); // 00:10:00.25: ticks 00:01 to 00:10 are due
    assertThat(schedules.fileDue("catch-up")).isEqualTo(1 + 3 + 10);
    assertThat(upstreamEvents(ledger, "catch-up", "c1")).containsExactly("2026-01-01T00:10:00Z");
    assertThat(upstreamEvents(ledger, "catch-up", "c3"))
        .containsExactly("2026-01-01T00:08:00Z", "2026-01-01T00:09:00Z", "2026-01-01T00:10:00Z");
    assertThat(upstreamEvents(ledger, "catch-up", "c100"))
        .hasSize(10)
        .first()
        .isEqualTo("2026-01-01T00:01:00Z");
    assertThat(schedules.fileDue("catch-up")).isZero(); // nothing due until 00:11
    for (int catchUp : List.of(1, 3, 100)) {
      Schedule s = schedules.get("c" + catchUp).orElseThrow();
      assertThat(s.lastTick()).isEqualTo(Instant.parse("2026-01-01T00:10:00Z"));
      assertThat(s.nextTick()).isEqualTo(Instant.parse("2026-01-01T00:11:00Z"));
    }
    clock.advance(Duration.ofMinutes(1));
    assertThat(schedules.fileDue("catch-up")).isEqualTo(3); // one tick each, none skipped
    assertThat(upstreamEvents(ledger, "catch-up", "c1"))
        .containsExactly("2026-01-01T00:10:00Z", "2026-01-01T00:11:00Z");
    assertThat(schedules.fileDue("other-domain")).isZero();
  }

  private List<String> runHourly(String domain, String name, Instant until) {
    while (clock.instant().isBefore(until)) {
      clock.advance(Duration.ofMinutes(10));
      schedules.fileDue(domain);
    }
    return upstreamEvents(ledger, domain, name);
  }

  @Test
  void a_0230_schedule_runs_once_on_the_day_new_york_skips_0230() {
    clock.set(Instant.parse("2026-03-07T12:00:00Z"));
    schedules.add(
        ScheduleSpec.builder(
                "spring", "dst-spring", Timing.cron("30 2 * * *", "America/New_York"), "T")
            .build());
    assertThat(runHourly("dst-spring", "spring", Instant.parse("2026-03-10T12:00:00Z")))
        .containsExactly(
            "2026-03-08T07:00:00Z", // 03:00 EDT: the end of the gap that skipped 02:30
            "2026-03-09T06:30:00Z",
            "2026-03-10T06:30:00Z");
  }

  @Test
  void a_repeated_hour_runs_once() {
    clock.set(Instant.parse("2026-10-30T12:00:00Z"));
    schedules.add(
        ScheduleSpec.builder(
                "fall", "dst-fall", Timing.cron("*/20 1 * * *", "America/New_York"), "T")
            .build());
    assertThat(runHourly("dst-fall", "fall", Instant.parse("2026-11-02T00:00:00Z")))
        .containsExactly(
            "2026-10-31T05:00:00Z", // Saturday 01:00 EDT
            "2026-10-31T05:20:00Z",
            "2026-10-31T05:40:00Z",
            "2026-11-01T05:00:00Z", // Sunday: the first pass of 01:00 to 02:00 only
            "2026-11-01T05:20:00Z",
            "2026-11-01T05:40:00Z");
  }

  @Test
  void racing_filers_of_two_ledgers_file_each_tick_once() throws Exception {
    Ledger other = Ledger.open(PG.dataSource(), LedgerConfig.builder().clock(clock).build());
    schedules.add(
        ScheduleSpec.builder("race", "race", Timing.every(Duration.ofSeconds(1)), "T")
            .catchUp(1000)
            .build());
    int threads = 8;
    int rounds = 5;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      int filed = 0;
      for (int round = 0; round < rounds; round++) {
        clock.advance(Duration.ofSeconds(200)); // 200 ticks due, filed by one of the 8
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Future<Integer>> results = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
          Schedules s = (i % 2 == 0 ? ledger : other).schedules();
          Callable<Integer> call =
              () -> {
                start.await(30, TimeUnit.SECONDS);
                return s.fileDue("race");
              };
          results.add(pool.submit(call));
        }
        for (Future<Integer> f : results) {
          filed += f.get(2, TimeUnit.MINUTES);
        }
      }
      List<String> ticks = upstreamEvents(ledger, "race", "race");
      assertThat(filed).isEqualTo(rounds * 200);
      assertThat(ticks).hasSize(rounds * 200).doesNotHaveDuplicates();
      assertThat(ticks.get(0)).isEqualTo("2026-01-01T00:00:01Z");
      assertThat(ticks.get(ticks.size() - 1)).isEqualTo("2026-01-01T00:16:40Z");
      assertThat(
              new dev.ledger.testing.DomainLog(PG.dataSource(), "race")
                  .countOf("created").values().stream().mapToInt(Integer::intValue).sum())
          .isEqualTo(rounds * 200);
    } finally {
      pool.shutdownNow();
    }
  }
}
