package dev.ledger.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Claimer;
import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import dev.ledger.event.Event;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * B5, replay: {@code Ledger.replay()} (events streamed, folded in memory, rows written with {@code
 * COPY}) against a per-event replay over JDBC (one statement per event, as the reference's {@code
 * rebuild_domain} does) and against a server-side floor (one {@code INSERT ... SELECT} that folds
 * the events inside PostgreSQL: no rows cross the wire). The log holds seeded histories of ten
 * events per task plus tasks made live through the API (dependencies, origins, continuations,
 * rescores, releases, handoffs, invalidations, posts). After every replay, of every kind, the
 * projection must equal the one the live operations left, row for row. Targets: rebuild at least
 * 10x the per-event replay and at least 100k events/s.
 */
final class ReplayBench {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String DOMAIN = "b5";

  private ReplayBench() {}

  static void run(Context ctx) throws Exception {
    String db = ctx.server().createDatabase("b5");
    try (HikariDataSource pool = ctx.server().pool(db, 8)) {
      Ledger ledger = Context.ledger(pool);
      String schema = ledger.provision(DOMAIN);
      int tasks = ctx.size(2_000, 100_000);
      seed(pool, schema, tasks);
      live(ledger);
      long events = Context.count(pool, "SELECT count(*) FROM \"" + schema + "\".events");
      Context.execute(
          pool,
          "ANALYZE",
          "CREATE SCHEMA bench_snapshot",
          "CREATE TABLE bench_snapshot.tasks AS TABLE \"" + schema + "\".tasks",
          "CREATE TABLE bench_snapshot.routes AS SELECT * FROM public.ledger_tasks WHERE domain = '"
              + DOMAIN
              + "'");
      List<Double> ours = new ArrayList<>();
      List<Double> perEvent = new ArrayList<>();
      List<Double> floor = new ArrayList<>();
      // full: one round (the per-event replay of 1M events takes minutes); quick: three
      int rounds = ctx.size(3, 1);
      for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < 3; k++) {
          int which = r % 2 == 0 ? k : 2 - k;
          long t0 = System.nanoTime();
          long n;
          String who;
          if (which == 0) {
            who = "rebuild";
            n = ledger.replay();
          } else if (which == 1) {
            who = "per-event replay";
            n = perEvent(pool, schema);
          } else {
            who = "server-side replay";
            n = serverSide(pool, schema);
          }
          double rate = n / ((System.nanoTime() - t0) / 1e9);
          Context.check(n == events, "B5 " + who + " replayed " + n + " of " + events + " events");
          same(pool, schema, who);
          (which == 0 ? ours : which == 1 ? perEvent : floor).add(rate);
        }
      }
      String workload = k(events) + " events / " + k(tasks) + " tasks";
      double o = Stats.median(ours);
      double p = Stats.median(perEvent);
      double f = Stats.median(floor);
      ctx.results()
          .add(
              new Results.Row(
                  "B5",
                  "replay " + workload + ": rebuild vs per-event",
                  "events/s",
                  Results.Kind.RATE,
                  o,
                  p,
                  "one statement per event, JDBC",
                  "≥ 10x",
                  o / p >= 10));
      ctx.results()
          .add(
              new Results.Row(
                  "B5",
                  "replay " + workload + ": rebuild vs server-side floor",
                  "events/s",
                  Results.Kind.RATE,
                  o,
                  f,
                  "one INSERT ... SELECT fold",
                  "≥ 100k events/s",
                  o >= 100_000));
      ctx.results()
          .note(
              "B5: each of the "
                  + rounds * 3
                  + " replays (alternating order) checked: tasks and routes equal the live"
                  + " projection row for row");
    } finally {
      ctx.server().dropDatabase(db);
    }
  }

  private static void seed(HikariDataSource pool, String schema, int tasks) throws Exception {
    Instant until = Instant.parse("2030-01-01T00:00:00Z");
    try (Seeder s = new Seeder(pool, DOMAIN, schema)) {
      for (int i = 0; i < tasks; i++) {
        TaskSpec spec =
            TaskSpec.builder(DOMAIN, "replayed task " + i)
                .body("seeded history number " + i)
                .requirements(i % 3 == 0 ? List.of("sql", "java") : List.of())
                .classification(Label.ofRank(i % 4))
                .priority(i % 7)
                .createdBy("bench")
                .build();
        Instant u = until.plusSeconds(i);
        if (i % 10 == 0) {
          s.add(
              spec,
              new Event.Admitted(),
              new Event.Rescored(i % 11, "triage"),
              new Event.Claimed("w1", u),
              new Event.Heartbeat(u.plusSeconds(60)),
              new Event.Released(),
              new Event.Claimed("w2", u.plusSeconds(120)),
              new Event.Heartbeat(u.plusSeconds(180)),
              new Event.Heartbeat(u.plusSeconds(240)),
              new Event.Invalidated("superseded in the benchmark", null));
        } else {
          s.add(
              spec,
              new Event.Admitted(),
              new Event.Claimed("w1", u),
              new Event.Heartbeat(u.plusSeconds(60)),
              new Event.Heartbeat(u.plusSeconds(120)),
              new Event.Released(),
              new Event.Claimed("w2", u.plusSeconds(180)),
              new Event.Heartbeat(u.plusSeconds(240)),
              new Event.HandoffLeft("halfway: see notes " + i),
              new Event.Completed(i % 2 == 0 ? "done " + i : null));
        }
      }
    }
  }

  /** Tasks made by the live API, so the replay is checked against live operations too. */
  private static void live(Ledger ledger) {
    Duration lease = Duration.ofMinutes(5);
    List<String> done = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      String id =
          ledger.file(
              TaskSpec.builder(DOMAIN, "live " + i)
                  .origin("tracker:bench", "evt-" + i)
                  .dependsOn(done.isEmpty() ? List.of() : List.of(done.get(done.size() - 1)))
                  .priority(1_000 + i)
                  .build());
      ledger.admit(id);
      Lease l = ledger.claimNext(DOMAIN, Claimer.of("live").lease(lease)).orElseThrow();
      Context.check(l.taskId().equals(id), "B5 live: claimed " + l.taskId() + ", not " + id);
      l = ledger.heartbeat(l, lease);
      switch (i % 4) {
        case 0 -> {
          ledger.leaveHandoff(l, "note " + i);
          ledger.complete(l, "done " + i);
          ledger.post(id, "tracker:bench");
          done.add(id);
        }
        case 1 -> {
          ledger.release(l);
          ledger.rescore(id, -5, "later");
        }
        case 2 -> ledger.invalidate(id, "not needed " + i, null);
        default -> {
          ledger.complete(l, null);
          ledger.file(
              TaskSpec.builder(DOMAIN, "continues " + i).origin("continues:" + id, null).build());
          done.add(id);
        }
      }
    }
  }

  private static long perEvent(DataSource ds, String schema) throws SQLException {
    String s = "\"" + schema + "\"";
    long n = 0;
    try (Connection c = ds.getConnection()) {
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        forget(st, s);
      }
      Map<String, PreparedStatement> ps = new HashMap<>();
      try (Statement read = c.createStatement()) {
        read.setFetchSize(5_000);
        try (ResultSet rs =
            read.executeQuery(
                "SELECT task_id, kind, at, payload FROM " + s + ".events ORDER BY seq")) {
          while (rs.next()) {
            apply(c, ps, s, rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4));
            n++;
          }
        }
      } finally {
        for (PreparedStatement p : ps.values()) {
          p.close();
        }
      }
      try (Statement st = c.createStatement()) {
        Seeder.derive(st, schema);
      }
      c.commit();
      c.setAutoCommit(true);
    }
    return n;
  }

  /** What a replay starts from: no projection, no claim classes, no edges, no routes. */
  private static void forget(Statement st, String s) throws SQLException {
    st.execute("DELETE FROM " + s + ".tasks");
    st.execute("DELETE FROM " + s + ".promotions");
    st.execute("DELETE FROM " + s + ".claim_classes");
    st.execute(
        "DELETE FROM public.ledger_dependencies WHERE task_id IN (SELECT id FROM"
            + " public.ledger_tasks WHERE domain = '"
            + DOMAIN
            + "')");
    st.execute("DELETE FROM public.ledger_tasks WHERE domain = '" + DOMAIN + "'");
  }

  private static void apply(
      Connection c,
      Map<String, PreparedStatement> ps,
      String s,
      String id,
      String kind,
      String at,
      String payload)
      throws SQLException {
    JsonNode p;
    try {
      p = JSON.readTree(payload);
    } catch (java.io.IOException e) {
      throw new BenchFailure("B5 per-event: payload of " + id + " is not JSON");
    }
    String set;
    List<Object> args = new ArrayList<>();
    switch (kind) {
      case "created" -> {
        JsonNode spec = p.get("spec");
        PreparedStatement ins =
            prepare(
                c,
                ps,
                "INSERT INTO "
                    + s
                    + ".tasks (id, domain, title, body, requirements, depends_on, origin,"
                    + " upstream_event, created_by, label_rank, priority, created, status, attempts)"
                    + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'proposed', 0)");
        ins.setString(1, p.get("id").asText());
        ins.setString(2, spec.get("domain").asText());
        ins.setString(3, spec.get("title").asText());
        ins.setString(4, spec.get("body").asText());
        ins.setString(5, spec.get("requirements").toString());
        ins.setString(6, spec.get("depends_on").toString());
        text(ins, 7, spec.get("origin"));
        text(ins, 8, spec.get("upstream_event"));
        ins.setString(9, spec.get("created_by").asText());
        ins.setLong(10, Label.parse(spec.get("classification").asText()).rank());
        ins.setLong(11, spec.get("priority").asLong());
        ins.setString(12, at);
        ins.executeUpdate();
        PreparedStatement route =
            prepare(
                c,
                ps,
                "INSERT INTO public.ledger_tasks (id, domain, completed) VALUES (?, ?, false)");
        route.setString(1, p.get("id").asText());
        route.setString(2, spec.get("domain").asText());
        route.executeUpdate();
        return;
      }
      case "admitted" -> set = "status = 'admitted'";
      case "claimed" -> {
        set = "status = 'claimed', holder = ?, lease_until = ?, attempts = attempts + 1";
        args.add(p.get("holder"));
        args.add(p.get("until"));
      }
      case "heartbeat" -> {
        set = "lease_until = ?";
        args.add(p.get("until"));
      }
      case "released" -> set = "status = 'admitted', holder = NULL, lease_until = NULL";
      case "handoff_left" -> {
        set = "handoff = ?";
        args.add(p.get("handoff"));
      }
      case "completed" -> {
        set = "status = 'completed', handoff = ?, lease_until = NULL";
        args.add(p.get("handoff"));
      }
      case "invalidated" -> {
        set = "status = 'invalidated', reason = ?, superseded_by = ?, lease_until = NULL";
        args.add(p.get("reason"));
        args.add(p.get("superseded_by"));
      }
      case "posted" -> {
        set = "posted_to = ?";
        args.add(p.get("to"));
      }
      case "rescored" -> {
        set = "priority = ?";
        args.add(p.get("priority").asLong());
      }
      default -> throw new BenchFailure("B5 per-event: no replay for a " + kind + " event");
    }
    PreparedStatement u = prepare(c, ps, "UPDATE " + s + ".tasks SET " + set + " WHERE id = ?");
    int i = 1;
    for (Object a : args) {
      if (a instanceof Long l) {
        u.setLong(i++, l);
      } else {
        text(u, i++, (JsonNode) a);
      }
    }
    u.setString(i, id);
    u.executeUpdate();
    if ("completed".equals(kind)) {
      PreparedStatement route =
          prepare(c, ps, "UPDATE public.ledger_tasks SET completed = true WHERE id = ?");
      route.setString(1, id);
      route.executeUpdate();
    }
  }

  private static PreparedStatement prepare(
      Connection c, Map<String, PreparedStatement> ps, String sql) throws SQLException {
    PreparedStatement p = ps.get(sql);
    if (p == null) {
      p = c.prepareStatement(sql);
      ps.put(sql, p);
    }
    return p;
  }

  private static void text(PreparedStatement p, int i, JsonNode v) throws SQLException {
    if (v == null || v.isNull()) {
      p.setNull(i, Types.VARCHAR);
    } else {
      p.setString(i, v.asText());
    }
  }

  /** The floor: the whole fold as one statement inside PostgreSQL, over the events_task index. */
  private static long serverSide(DataSource ds, String schema) throws SQLException {
    String s = "\"" + schema + "\"";
    String last =
        "(SELECT %s FROM "
            + s
            + ".events e WHERE e.task_id = c.task_id AND e.kind IN (%s)"
            + " ORDER BY e.seq DESC LIMIT 1)";
    String sql =
        "INSERT INTO "
            + s
            + ".tasks (id, domain, title, body, requirements, depends_on, origin, upstream_event,"
            + " created_by, label_rank, priority, created, status, holder, lease_until, attempts,"
            + " handoff, reason, superseded_by, posted_to)"
            + " SELECT c.task_id, c.sp->>'domain', c.sp->>'title', c.sp->>'body',"
            + " (c.sp->'requirements')::text, (c.sp->'depends_on')::text, c.sp->>'origin',"
            + " c.sp->>'upstream_event', c.sp->>'created_by',"
            + " CASE c.sp->>'classification' WHEN 'public' THEN 0 WHEN 'internal' THEN 1"
            + " WHEN 'confidential' THEN 2 ELSE 3 END,"
            + " COALESCE("
            + String.format(last, "(e.payload::json->>'priority')::bigint", "'rescored'")
            + ", (c.sp->>'priority')::bigint), c.at, COALESCE("
            + String.format(
                last,
                "CASE e.kind WHEN 'released' THEN 'admitted' ELSE e.kind END",
                "'admitted', 'claimed', 'released', 'completed', 'invalidated'")
            + ", 'proposed'), "
            + String.format(
                last,
                "CASE e.kind WHEN 'claimed' THEN e.payload::json->>'holder' END",
                "'claimed', 'released'")
            + ", "
            + String.format(
                last,
                "CASE WHEN e.kind IN ('claimed', 'heartbeat') THEN e.payload::json->>'until' END",
                "'claimed', 'heartbeat', 'released', 'completed', 'invalidated'")
            + ", (SELECT count(*) FROM "
            + s
            + ".events e WHERE e.task_id = c.task_id AND e.kind = 'claimed'), "
            + String.format(last, "e.payload::json->>'handoff'", "'handoff_left', 'completed'")
            + ", "
            + String.format(last, "e.payload::json->>'reason'", "'invalidated'")
            + ", "
            + String.format(last, "e.payload::json->>'superseded_by'", "'invalidated'")
            + ", "
            + String.format(last, "e.payload::json->>'to'", "'posted'")
            + " FROM (SELECT task_id, at, payload::json->'spec' AS sp FROM "
            + s
            + ".events WHERE kind = 'created') c";
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement()) {
      c.setAutoCommit(false);
      forget(st, s);
      st.executeUpdate(sql);
      st.executeUpdate(
          "INSERT INTO public.ledger_tasks (id, domain, completed) SELECT id, domain,"
              + " status = 'completed' FROM "
              + s
              + ".tasks");
      Seeder.derive(st, schema);
      long n;
      try (ResultSet rs = st.executeQuery("SELECT count(*) FROM " + s + ".events")) {
        rs.next();
        n = rs.getLong(1);
      }
      c.commit();
      c.setAutoCommit(true);
      return n;
    }
  }

  private static void same(DataSource ds, String schema, String who) throws SQLException {
    String s = "\"" + schema + "\"";
    long tasks =
        Context.count(
            ds,
            "SELECT count(*) FROM ((TABLE "
                + s
                + ".tasks EXCEPT ALL TABLE bench_snapshot.tasks) UNION ALL"
                + " (TABLE bench_snapshot.tasks EXCEPT ALL TABLE "
                + s
                + ".tasks)) d");
    long routes =
        Context.count(
            ds,
            "SELECT count(*) FROM ((SELECT * FROM public.ledger_tasks WHERE domain = '"
                + DOMAIN
                + "' EXCEPT ALL TABLE bench_snapshot.routes) UNION ALL (TABLE bench_snapshot.routes"
                + " EXCEPT ALL SELECT * FROM public.ledger_tasks WHERE domain = '"
                + DOMAIN
                + "')) d");
    Context.check(
        tasks == 0 && routes == 0,
        "B5 "
            + who
            + ": the replayed projection differs from the live one ("
            + tasks
            + " task rows, "
            + routes
            + " routes differ)");
  }

  private static String k(long n) {
    if (n >= 1_000_000) {
      return String.format(java.util.Locale.ROOT, "%.2fM", n / 1e6);
    }
    return n >= 1000 ? Math.round(n / 1000.0) + "k" : Long.toString(n);
  }
}
