package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.SettableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/**
 * Replay equals the live projection (docs/state-machine.md): for random sequences of operations
 * over several domains, {@link Ledger#rebuild()} yields exactly the {@code tasks}, {@code
 * promotions} and {@code ledger_tasks} rows the live operations produced, row for row and column
 * for column.
 */
class ReplayPropertyTest {

  static final List<String> DOMAINS = List.of("alpha", "Beta Corp/EU", "γάμμα");
  static final List<String> SKILLS = List.of("sql", "java", "gpu");

  static String database;
  static HikariDataSource pool;
  static SettableClock clock;
  static Ledger ledger;

  @BeforeContainer
  static void start() throws Exception {
    database = PostgresExtension.newDatabase();
    pool = PostgresExtension.pool(TestServerUrl.of(database), 8);
    clock = new SettableClock(Instant.parse("2026-03-01T09:00:00Z"));
    ledger = Ledger.open(pool, LedgerConfig.builder().clock(clock).build());
  }

  @AfterContainer
  static void stop() throws Exception {
    pool.close();
    PostgresExtension.dropDatabase(database);
  }

  @Property(tries = 25)
  void replay_reproduces_the_live_projection(@ForAll @Size(min = 1, max = 60) List<Long> script) {
    List<String> tasks = new ArrayList<>(ledger.domains().isEmpty() ? List.of() : allIds());
    List<Lease> leases = new ArrayList<>();
    for (long step : script) {
      run(step & Long.MAX_VALUE, tasks, leases);
    }
    Snapshot live = snapshot();
    long replayed = ledger.rebuild();
    assertThat(replayed).isEqualTo(ledger.eventCount());
    Snapshot rebuilt = snapshot();
    assertThat(rebuilt.tasks()).isEqualTo(live.tasks());
    assertThat(rebuilt.promotions()).isEqualTo(live.promotions());
    assertThat(rebuilt.routes()).isEqualTo(live.routes());
    assertThat(rebuilt.derived()).isEqualTo(live.derived());
  }

  private static void run(long step, List<String> tasks, List<Lease> leases) {
    int op = (int) (step % 15);
    long arg = step / 15;
    String domain = DOMAINS.get((int) (arg % DOMAINS.size()));
    String target = tasks.isEmpty() ? null : tasks.get((int) (arg % tasks.size()));
    try {
      switch (op) {
        case 0, 1 -> {
          TaskSpec.Builder b =
              TaskSpec.builder(domain, "task " + arg)
                  .body(arg % 2 == 0 ? "" : "body\n\t\"quoted\" 🚀 " + arg)
                  .priority(arg % 7 - 3)
                  .classification(Label.values()[(int) (arg % 4)])
                  .requirements(SKILLS.subList(0, (int) (arg % 3)));
          if (target != null && arg % 3 == 0) {
            b.dependsOn(List.of(target));
          }
          if (arg % 6 == 1) {
            b.notBefore(clock.instant().plusSeconds(arg % 40).plusNanos(123_456_789));
          }
          if (arg % 5 == 2) {
            b.maxAttempts((int) (arg % 3) + 1);
          }
          if (target != null && arg % 5 == 0) {
            b.origin("continues:" + target, null);
          } else if (arg % 4 == 0) {
            b.origin("tracker:ops", "evt-" + (arg % 11));
          }
          if (arg % 7 == 3) {
            // a batch: this spec, and a copy from the same origin (filed once) or a second task
            TaskSpec one = b.build();
            TaskSpec two = b.origin(one.origin(), one.upstreamEvent()).build();
            tasks.addAll(ledger.fileAll(List.of(one, two)));
          } else {
            tasks.add(ledger.file(b.build()));
          }
        }
        case 2, 3 -> {
          if (target != null) {
            ledger.admit(target);
          }
        }
        case 4 ->
            ledger
                .claimNext(
                    domain,
                    "w" + (arg % 3),
                    Duration.ofSeconds(30),
                    SKILLS,
                    Label.values()[(int) (arg % 4)])
                .ifPresent(leases::add);
        case 5 ->
            leases.addAll(
                ledger.claimBatch(
                    domain, "batch", Duration.ofSeconds(30), SKILLS, Label.RESTRICTED, 3));
        case 6 -> {
          if (leases.size() >= 2 && arg % 3 == 0) {
            // a batch completion of the first lease's domain (a stale lease is refused, not thrown)
            String d = ledger.get(leases.get(0).taskId()).spec().domain();
            List<Completion> batch = new ArrayList<>();
            for (Lease l : List.copyOf(leases)) {
              if (ledger.get(l.taskId()).spec().domain().equals(d)) {
                batch.add(new Completion(l, batch.size() % 2 == 0 ? null : "batch " + arg));
                leases.remove(l);
              }
            }
            ledger.completeAll(d, batch);
          } else if (!leases.isEmpty()) {
            ledger.complete(
                leases.remove((int) (arg % leases.size())), arg % 2 == 0 ? null : "done " + arg);
          }
        }
        case 7 -> {
          if (!leases.isEmpty()) {
            Lease l = leases.get((int) (arg % leases.size()));
            switch ((int) (arg % 3)) {
              case 0 -> leases.set(leases.indexOf(l), ledger.heartbeat(l, Duration.ofMinutes(1)));
              case 1 -> ledger.leaveHandoff(l, "note " + arg);
              default -> {
                ledger.release(l);
                leases.remove(l);
              }
            }
          }
        }
        case 8 -> clock.advance(Duration.ofSeconds(arg % 90));
        case 9 -> {
          if (target != null) {
            // superseded by the first task, unless that is the target (a task cannot replace
            // itself)
            String by = arg % 2 == 0 || tasks.get(0).equals(target) ? null : tasks.get(0);
            ledger.invalidate(target, "obsolete " + arg, by);
          }
        }
        case 10 -> {
          if (target != null) {
            if (arg % 2 == 0) {
              ledger.rescore(target, arg % 9, "triage");
            } else {
              ledger.post(
                  target, arg % 4 == 1 ? "mailto:ops" + arg + "@example.com" : "tracker:ops");
            }
          }
        }
        case 11 ->
            ledger.recordPromotion(
                new PromotionSpec(
                    domain,
                    "entry/" + (arg % 3),
                    arg % 2 == 0 ? "reviewed" : "canonical",
                    "p" + (arg % 2),
                    "erin",
                    "why " + arg,
                    Label.values()[(int) (arg % 4)],
                    "d" + (arg % 4),
                    arg % 3 == 0 ? "" : "n" + arg));
        case 13 -> {
          if (!leases.isEmpty()) {
            ledger.fail(
                leases.remove((int) (arg % leases.size())),
                arg % 3 == 0 ? "failure " + arg : "smtp 550 <ops" + arg + "@example.com>",
                2,
                Duration.ofSeconds(arg % 20));
            tasks.clear();
            tasks.addAll(allIds());
          }
        }
        case 14 -> {
          if (arg % 2 == 0) {
            ledger.admitDue(domain, 5);
          } else {
            List<Task> dead = ledger.deadLetters(domain);
            if (!dead.isEmpty()) {
              tasks.add(ledger.refile(dead.get((int) (arg % dead.size())).id()));
            }
          }
        }
        default -> {
          if (arg % 2 == 0) {
            ledger.scrubPromotions(domain, "entry/" + (arg % 3));
          } else {
            ledger.scrubTasks(domain, "tracker:ops", Redaction.ERASED);
          }
        }
      }
    } catch (WrongStateException | LeaseLostException e) {
      // refused operations write nothing; the script goes on
    }
  }

  record Snapshot(
      List<Map<String, Object>> tasks,
      List<Map<String, Object>> promotions,
      List<Map<String, Object>> routes,
      List<Map<String, Object>> derived) {}

  private static Snapshot snapshot() {
    DSLContext ctx = DSL.using(pool, org.jooq.SQLDialect.POSTGRES);
    List<Map<String, Object>> tasks = new ArrayList<>();
    List<Map<String, Object>> promotions = new ArrayList<>();
    List<Map<String, Object>> derived = new ArrayList<>();
    for (String domain : ledger.domains()) {
      String s = DomainSchemas.schemaName(domain);
      tasks.addAll(
          ctx.selectFrom(DSL.table(DSL.name(s, "tasks")))
              .orderBy(DSL.field(DSL.name("id")))
              .fetchMaps());
      promotions.addAll(
          ctx.selectFrom(DSL.table(DSL.name(s, "promotions")))
              .orderBy(DSL.field(DSL.name("seq")))
              .fetchMaps());
    }
    List<Map<String, Object>> routes =
        ctx.selectFrom(DSL.table(DSL.name("public", "ledger_tasks")))
            .orderBy(DSL.field(DSL.name("id")))
            .fetchMaps();
    derived.addAll(
        ctx.selectFrom(DSL.table(DSL.name("public", "ledger_dependencies")))
            .orderBy(DSL.field(DSL.name("depends_on")), DSL.field(DSL.name("task_id")))
            .fetchMaps());
    return new Snapshot(tasks, promotions, routes, derived);
  }

  private static List<String> allIds() {
    DSLContext ctx = DSL.using(pool, org.jooq.SQLDialect.POSTGRES);
    return ctx.select(DSL.field(DSL.name("id"), String.class))
        .from(DSL.table(DSL.name("public", "ledger_tasks")))
        .orderBy(DSL.field(DSL.name("id")))
        .fetch(0, String.class);
  }

  /** The JDBC URL of a database of the test server. */
  static final class TestServerUrl {
    static String of(String database) {
      return dev.ledger.testing.TestServer.get().urlFor(database);
    }
  }
}
