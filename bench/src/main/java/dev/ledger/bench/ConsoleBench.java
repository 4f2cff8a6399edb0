package dev.ledger.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import dev.ledger.console.Console;
import dev.ledger.console.Request;
import dev.ledger.console.Response;
import dev.ledger.event.Event;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * B15, the operator console at scale: the overview and a domain's queue page (claim order, keyset)
 * with 1,000,000 tasks in the domain against the same pages with 1,000, and the queue page at a
 * deep position against the naive {@code ORDER BY ... LIMIT 50 OFFSET n} query that reaches the
 * same rows. Each side is one request to {@link Console#handle} (rendering included) in its own
 * database, so the overview reads one domain of each size. Correctness, checked in every mode: the
 * keyset page at depth lists exactly the rows the {@code OFFSET} query lists, in the same order;
 * the overview shows the planner's estimate ({@code ≈}, past the 1,000 cap) for the large domain
 * and the exact count for the small one. {@code --quick} seeds 12,000 tasks (past the 10,000 cap)
 * instead of 1,000,000 and asserts nothing about speed.
 */
final class ConsoleBench {

  private static final String DOMAIN = "b15";
  private static final int PAGE = 50;
  private static final Pattern ROW_ID =
      Pattern.compile("<a class=\"task\" href=\"[^\"]*\">([^<]+)</a>");

  private ConsoleBench() {}

  /** One database with one domain of {@code tasks} admitted tasks, and a console over it. */
  private record Side(
      String db, HikariDataSource pool, String schema, Console console, int tasks) {}

  /**
   * Runs B15.
   *
   * @param ctx the run
   * @throws Exception on failure
   */
  static void run(Context ctx) throws Exception {
    int large = ctx.size(12_000, 1_000_000);
    int small = 1_000;
    // 100 a side: a page takes a few ms, and at 30 the 1k baseline alone moved by 60% between runs
    int samples = ctx.size(3, 100);
    int deepSamples = ctx.size(3, 10);
    Side s = side(ctx, "b15s", small);
    Side l = side(ctx, "b15l", large);
    try {
      // correctness first: the keyset page at depth is the OFFSET page
      int depth = large / 2;
      String token = cursorAt(l, depth - 1);
      List<String> keyset =
          ids(get(l, "/domains/" + DOMAIN + "/queue", "status=admitted&after=" + token));
      List<String> offset = offsetPage(l, depth);
      Context.check(
          keyset.size() == PAGE && keyset.equals(offset),
          "B15: the keyset page at depth "
              + depth
              + " differs from the OFFSET page: "
              + keyset
              + " vs "
              + offset);
      String overviewLarge = get(l, "/", null);
      Context.check(
          overviewLarge.contains("<td class=\"n\">≈"),
          "B15: the overview of "
              + large
              + " admitted tasks (analyzed) does not show the planner's estimate (≈)");
      Context.check(
          get(s, "/", null).contains("<td class=\"n\">" + small + "</td>"),
          "B15: the overview of " + small + " admitted tasks does not show their count");

      for (int i = 0; i < 3; i++) { // warm-up: the JIT, the caches of both databases
        get(s, "/", null);
        get(l, "/", null);
        get(l, "/domains/" + DOMAIN + "/queue", "status=admitted&after=" + token);
        offsetPage(l, depth);
      }
      double[] overview =
          Context.alternate(
              5,
              () -> time(samples, () -> get(l, "/", null)),
              () -> time(samples, () -> get(s, "/", null)));
      row(
          ctx,
          "overview page, " + k(large) + " vs 1k tasks",
          overview,
          "same page at 1k tasks",
          large);
      String first = "status=admitted";
      double[] queue =
          Context.alternate(
              5,
              () -> time(samples, () -> get(l, "/domains/" + DOMAIN + "/queue", first)),
              () -> time(samples, () -> get(s, "/domains/" + DOMAIN + "/queue", first)));
      row(ctx, "queue page 1, " + k(large) + " vs 1k tasks", queue, "same page at 1k tasks", large);
      String deep = "status=admitted&after=" + token;
      double[] deepPage =
          Context.alternate(
              3,
              // the OFFSET side takes ~0.5 s a call: 10 a side is plenty for a 100x gap
              () -> time(deepSamples, () -> get(l, "/domains/" + DOMAIN + "/queue", deep)),
              () -> time(deepSamples, () -> offsetPage(l, depth)));
      ctx.results()
          .add(
              new Results.Row(
                  "B15",
                  "queue page at row " + k(depth) + " of " + k(large) + ": keyset vs OFFSET",
                  "ms",
                  Results.Kind.TIME,
                  deepPage[0],
                  deepPage[1],
                  "naive LIMIT 50 OFFSET n (query only)",
                  ctx.quick() ? "" : "≥ 10x",
                  ctx.quick() ? null : deepPage[1] / deepPage[0] >= 10));
      manyDomains(ctx, s, samples);
      Files.writeString(
          ctx.out().resolve("b15-explain-offset.txt"),
          Explain.analyze(l.pool(), offsetSql(l.schema()), PAGE, depth),
          StandardCharsets.UTF_8);
    } finally {
      close(ctx, s);
      close(ctx, l);
    }
  }

  /**
   * The overview with many domains (100, or 10 in {@code --quick}; 100 tasks each) against the same
   * page with one domain of 1,000 tasks: the overview reads each domain (its counts, oldest
   * admitted task, dead letters, last hour, controls and retention), so its cost grows with the
   * domains, not with their tasks. Checked: every domain is listed.
   */
  private static void manyDomains(Context ctx, Side one, int samples) throws Exception {
    int domains = ctx.size(10, 100);
    String db = ctx.server().createDatabase("b15d");
    HikariDataSource pool = ctx.server().pool(db, 4);
    try {
      Ledger ledger = Context.ledger(pool);
      List<String> names = new ArrayList<>();
      for (int d = 0; d < domains; d++) {
        String domain = String.format("b15-%03d", d);
        names.add(domain);
        String schema = ledger.provision(domain);
        try (Seeder seeder = new Seeder(pool, domain, schema)) {
          for (int i = 0; i < 100; i++) {
            seeder.add(
                TaskSpec.builder(domain, "task " + i).priority(i % 10).createdBy("bench").build(),
                new Event.Admitted());
          }
        }
      }
      Context.execute(pool, "ANALYZE");
      Side many =
          new Side(
              db,
              pool,
              null,
              Console.builder(ledger, pool).trustCaller(true).build(),
              domains * 100);
      String page = get(many, "/", null);
      for (String name : names) {
        Context.check(
            page.contains(">" + name + "<"),
            "B15: the overview of " + domains + " domains does not list " + name);
      }
      for (int i = 0; i < 3; i++) {
        get(many, "/", null);
        get(one, "/", null);
      }
      double[] m =
          Context.alternate(
              5,
              () -> time(samples, () -> get(many, "/", null)),
              () -> time(samples, () -> get(one, "/", null)));
      ctx.results()
          .add(
              new Results.Row(
                  "B15",
                  "overview page, " + domains + " domains of 100 tasks vs 1 domain of 1k",
                  "ms",
                  Results.Kind.TIME,
                  m[0],
                  m[1],
                  "same page, 1 domain of 1k tasks",
                  "",
                  null));
    } finally {
      pool.close();
      ctx.server().dropDatabase(db);
    }
  }

  private static void row(Context ctx, String workload, double[] m, String baseline, int large) {
    ctx.results()
        .add(
            new Results.Row(
                "B15",
                workload,
                "ms",
                Results.Kind.TIME,
                m[0],
                m[1],
                baseline,
                ctx.quick() ? "" : "within 2x (ratio ≥ 0.5)",
                ctx.quick() ? null : m[1] / m[0] >= 0.5));
  }

  private static Side side(Context ctx, String purpose, int tasks) throws Exception {
    String db = ctx.server().createDatabase(purpose);
    HikariDataSource pool = ctx.server().pool(db, 4);
    Ledger ledger = Context.ledger(pool);
    String schema = ledger.provision(DOMAIN);
    try (Seeder seeder = new Seeder(pool, DOMAIN, schema)) {
      for (int i = 0; i < tasks; i++) {
        seeder.add(
            TaskSpec.builder(DOMAIN, "task " + i).priority(i % 10).createdBy("bench").build(),
            new Event.Admitted());
      }
    }
    Context.execute(
        pool,
        "VACUUM ANALYZE \"" + schema + "\".tasks",
        "VACUUM ANALYZE \"" + schema + "\".events");
    Console console = Console.builder(ledger, pool).trustCaller(true).build();
    return new Side(db, pool, schema, console, tasks);
  }

  private static void close(Context ctx, Side side) throws SQLException {
    side.pool().close();
    ctx.server().dropDatabase(side.db());
  }

  private static String get(Side side, String path, String query) {
    Response r = side.console().handle(Request.of("GET", path, query, Map.of(), null));
    if (r.status() != 200) {
      throw new BenchFailure("B15: GET " + path + " answered " + r.status() + ": " + r.bodyText());
    }
    return r.bodyText();
  }

  private static List<String> ids(String html) {
    List<String> out = new ArrayList<>();
    Matcher m = ROW_ID.matcher(html);
    while (m.find()) {
      out.add(m.group(1));
    }
    return out;
  }

  private static String offsetSql(String schema) {
    return "SELECT id, title, status, label_rank, priority, created, requirements, origin, holder,"
        + " lease_until, attempts FROM \""
        + schema
        + "\".tasks WHERE status = 'admitted' ORDER BY priority DESC, created, id LIMIT ? OFFSET ?";
  }

  /** The naive page: the same rows as the console's keyset page, reached with OFFSET. */
  private static List<String> offsetPage(Side side, int offset) throws SQLException {
    List<String> out = new ArrayList<>();
    try (Connection c = side.pool().getConnection();
        PreparedStatement st = c.prepareStatement(offsetSql(side.schema()))) {
      st.setInt(1, PAGE);
      st.setInt(2, offset);
      try (ResultSet rs = st.executeQuery()) {
        while (rs.next()) {
          out.add(rs.getString(1));
        }
      }
    }
    return out;
  }

  /** The console's cursor (its "after" token) of the row at a position in claim order. */
  private static String cursorAt(Side side, int position) throws SQLException {
    try (Connection c = side.pool().getConnection();
        PreparedStatement st =
            c.prepareStatement(
                "SELECT priority, created, id FROM \""
                    + side.schema()
                    + "\".tasks WHERE status = 'admitted' ORDER BY priority DESC, created, id"
                    + " LIMIT 1 OFFSET ?")) {
      st.setInt(1, position);
      try (ResultSet rs = st.executeQuery()) {
        rs.next();
        Instant created = Instant.parse(rs.getString(2)); // stored as RFC 3339 text
        String plain = rs.getLong(1) + "\n" + created + "\n" + rs.getString(3);
        return Base64.getUrlEncoder()
            .withoutPadding()
            .encodeToString(plain.getBytes(StandardCharsets.UTF_8));
      }
    }
  }

  /** One request or query, timed. */
  @FunctionalInterface
  private interface Call {
    Object run() throws Exception;
  }

  /** The median time of some calls, in ms. */
  private static double time(int samples, Call call) throws Exception {
    List<Double> ms = new ArrayList<>();
    for (int i = 0; i < samples; i++) {
      long t0 = System.nanoTime();
      call.run();
      ms.add((System.nanoTime() - t0) / 1e6);
    }
    return Stats.median(ms);
  }

  private static String k(int n) {
    return n >= 1_000_000 ? (n / 1_000_000) + "M" : (n / 1_000) + "k";
  }
}
