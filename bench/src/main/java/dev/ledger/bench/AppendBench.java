package dev.ledger.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import java.util.concurrent.atomic.AtomicLong;

/**
 * B1, append: {@code file} + {@code admit} of a task (two transactions, each appending its event
 * and writing the projection), at 1, 4 and 8 clients; ours ({@link Ledger}) against the same
 * statements over raw JDBC ({@link RawLedger}). Target: ours at least 0.85x the baseline.
 */
final class AppendBench {

  private AppendBench() {}

  static void run(Context ctx) throws Exception {
    String db = ctx.server().createDatabase("b1");
    try (HikariDataSource pool = ctx.server().pool(db, 16)) {
      OursSql sql = Context.captureSql(pool);
      Ledger ledger = Context.ledger(pool);
      String oursDomain = "b1-ours";
      String baseDomain = "b1-baseline";
      String oursSchema = ledger.provision(oursDomain);
      String baseSchema = ledger.provision(baseDomain);
      RawLedger raw = new RawLedger(pool, baseDomain, baseSchema, sql);
      int perRound = ctx.size(600, 12_000);
      int rounds = ctx.size(2, 3);
      AtomicLong oursFiled = new AtomicLong();
      AtomicLong baseFiled = new AtomicLong();
      // warm-up, not measured: JIT, the pool, both schemas' caches
      for (int i = 0; i < ctx.size(100, 300); i++) {
        ledger.admit(ledger.file(spec(oursDomain, 99, i)));
        raw.admit(raw.file(spec(baseDomain, 99, i)));
        oursFiled.incrementAndGet();
        baseFiled.incrementAndGet();
      }
      for (int clients : new int[] {1, 4, 8}) {
        long steps = perRound / clients;
        double[] m =
            Context.alternate(
                rounds,
                () ->
                    Workers.fixed(
                        clients,
                        steps,
                        (w, i) -> {
                          String id = ledger.file(spec(oursDomain, w, i));
                          ledger.admit(id);
                          oursFiled.incrementAndGet();
                          return 1;
                        }),
                () ->
                    Workers.fixed(
                        clients,
                        steps,
                        (w, i) -> {
                          String id = raw.file(spec(baseDomain, w, i));
                          raw.admit(id);
                          baseFiled.incrementAndGet();
                          return 1;
                        }));
        ctx.results()
            .add(
                new Results.Row(
                    "B1",
                    "file+admit, " + clients + " client" + (clients == 1 ? "" : "s"),
                    "tasks/s",
                    Results.Kind.RATE,
                    m[0],
                    m[1],
                    "raw JDBC, same SQL",
                    "≥ 0.85x",
                    m[0] / m[1] >= 0.85));
      }
      check(pool, oursSchema, "ours", oursFiled.get());
      check(pool, baseSchema, "baseline", baseFiled.get());
      ctx.results()
          .note(
              "B1: "
                  + oursFiled.get()
                  + " tasks filed and admitted by ours, "
                  + baseFiled.get()
                  + " by the baseline ("
                  + rounds
                  + " alternating rounds of "
                  + perRound
                  + " per client count; median shown)");
    } finally {
      ctx.server().dropDatabase(db);
    }
  }

  private static TaskSpec spec(String domain, int worker, long i) {
    return TaskSpec.builder(domain, "append " + worker + "/" + i)
        .body("filed by the append benchmark")
        .priority(i % 10)
        .createdBy("bench")
        .build();
  }

  private static void check(HikariDataSource pool, String schema, String who, long filed)
      throws Exception {
    String s = "\"" + schema + "\"";
    long admitted =
        Context.count(pool, "SELECT count(*) FROM " + s + ".tasks WHERE status = 'admitted'");
    long events = Context.count(pool, "SELECT count(*) FROM " + s + ".events");
    Context.check(
        admitted == filed && events == 2 * filed,
        "B1 "
            + who
            + ": "
            + filed
            + " filed, but "
            + admitted
            + " admitted rows and "
            + events
            + " events");
  }
}
