package dev.ledger.bench;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.Label;
import dev.ledger.TaskSpec;
import dev.ledger.claim.ClaimSlack;
import dev.ledger.claim.ClaimSql;
import dev.ledger.codegen.convert.Rfc3339;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import javax.sql.DataSource;

/**
 * The baseline: the statements our code emits ({@link OursSql}, captured from jOOQ), issued raw
 * over plain JDBC with the same transaction boundaries, the same bind values and the same checks
 * (status, fencing), and nothing else: no jOOQ rendering, no records, no routing cache. The ratio
 * of ours to this is our overhead. Also the naive claim of B3, {@code ORDER BY ... LIMIT 1 FOR
 * UPDATE SKIP LOCKED} with the filter in {@code WHERE}.
 */
final class RawLedger {

  /** A claimed task: its id and the attempt that is its lease. */
  record Claim(String id, long attempt, long priority, String created) {}

  /** One claim statement's result: the tasks it claimed and how many candidates its window held. */
  private record Window(int rows) {}

  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  private final DataSource dataSource;
  private final String domain;
  private final String schema;
  private final String[] file;

  /** The default bounds our ledger's transactions set, which the baseline's filing sets too. */
  private static final String LOCK_TIMEOUT =
      dev.ledger.Timeouts.setting(dev.ledger.Timeouts.defaults().lock());

  private static final String STATEMENT_TIMEOUT =
      dev.ledger.Timeouts.setting(dev.ledger.Timeouts.defaults().statement());
  private final String[] admit;
  private final String[] claim;
  private final List<OursSql.Role> claimBinds;
  private final String[] complete;
  private final String naive;
  private final String naiveUpdate;

  /**
   * Creates the baseline for one domain.
   *
   * @param dataSource the database (a pool like ours')
   * @param domain the domain, provisioned
   * @param schema its schema, bare
   * @param ours our statements
   */
  RawLedger(DataSource dataSource, String domain, String schema, OursSql ours) {
    this.dataSource = dataSource;
    this.domain = domain;
    this.schema = schema;
    this.file = retarget(ours, ours.file());
    this.admit = retarget(ours, ours.admit());
    this.claim = retarget(ours, ours.claim());
    this.claimBinds = ours.claimBinds();
    this.complete = retarget(ours, ours.complete());
    String s = "\"" + schema + "\"";
    this.naive =
        "SELECT t.id FROM "
            + s
            + ".tasks t WHERE t.status = 'admitted' AND t.label_rank <= ?"
            + " AND t.requirements::jsonb <@ ?::jsonb"
            + " AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(t.depends_on::jsonb) d(dep)"
            + " WHERE NOT EXISTS (SELECT 1 FROM public.ledger_tasks l"
            + " WHERE l.id = d.dep AND l.completed))"
            + " AND NOT EXISTS (SELECT 1 FROM "
            + s
            + ".tasks c WHERE c.origin = 'continues:' || t.id"
            + " AND c.status NOT IN ('completed', 'invalidated'))"
            + " ORDER BY t.priority DESC, t.created LIMIT 1 FOR UPDATE SKIP LOCKED";
    this.naiveUpdate =
        "UPDATE "
            + s
            + ".tasks SET status = 'claimed', holder = ?, lease_until = ?, attempts = attempts + 1"
            + " WHERE id = ? RETURNING attempts";
  }

  private String[] retarget(OursSql ours, List<String> sql) {
    return sql.stream().map(x -> ours.retarget(x, schema)).toArray(String[]::new);
  }

  /**
   * The naive claim of B3, hand-written.
   *
   * @return its SQL text
   */
  String naiveSql() {
    return naive;
  }

  /**
   * Files a task, as {@code Ledger.file} does for a spec without origin or dependencies (so it is
   * never {@code blocked}).
   *
   * @param spec the spec
   * @return the id
   * @throws SQLException when the server refuses
   */
  String file(TaskSpec spec) throws SQLException {
    Instant now = now();
    String id = newId();
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try {
        try (PreparedStatement p = c.prepareStatement(file[0])) {
          // as ours, one statement: the transaction's bounds, then the domain's lock, held to
          // commit, then the row, its created event and its route
          p.setString(1, LOCK_TIMEOUT);
          p.setString(2, STATEMENT_TIMEOUT);
          p.setString(3, spec.domain());
          int o = 3;
          p.setString(o + 1, id);
          p.setString(o + 2, spec.domain());
          p.setString(o + 3, spec.title());
          p.setString(o + 4, spec.body());
          p.setString(o + 5, Seeder.jsonArray(spec.requirements()));
          p.setString(o + 6, Seeder.jsonArray(spec.dependsOn()));
          text(p, o + 7, spec.origin());
          text(p, o + 8, spec.upstreamEvent());
          p.setString(o + 9, spec.createdBy());
          p.setLong(o + 10, spec.classification().rank());
          p.setLong(o + 11, spec.priority());
          p.setString(o + 12, Rfc3339.format(now));
          p.setString(o + 13, "proposed");
          text(p, o + 14, null);
          text(p, o + 15, null);
          p.setLong(o + 16, 0L);
          text(p, o + 17, null);
          text(p, o + 18, null);
          text(p, o + 19, null);
          text(p, o + 20, null);
          p.setBoolean(o + 21, false); // blocked: the baseline files no dependencies
          text(p, o + 22, spec.notBefore() == null ? null : Rfc3339.format(spec.notBefore()));
          p.setLong(o + 23, spec.maxAttempts());
          p.setString(o + 24, Rfc3339.format(now));
          p.setString(o + 25, created(id, spec).toString());
          p.setString(o + 26, spec.domain());
          try (ResultSet rs = p.executeQuery()) {
            rs.next();
            one(rs.getInt(2), "file task");
          }
        }
        c.commit();
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
    return id;
  }

  /**
   * Admits a proposed task.
   *
   * @param id the task
   * @throws SQLException when the server refuses
   */
  void admit(String id) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      route(c, admit[0], id);
      c.setAutoCommit(false);
      try {
        try (PreparedStatement p = c.prepareStatement(admit[1])) {
          p.setString(1, id);
          try (ResultSet rs = p.executeQuery()) {
            if (!rs.next() || !"proposed".equals(rs.getString("status"))) {
              throw new BenchFailure("baseline admit: task " + id + " is not proposed");
            }
          }
        }
        event(c, admit[2], id, "admitted", now(), JSON.objectNode());
        try (PreparedStatement p = c.prepareStatement(admit[3])) {
          p.setString(1, "admitted");
          p.setString(2, id);
          one(p.executeUpdate(), "update task");
        }
        c.commit();
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
  }

  /**
   * Claims up to {@code max} tasks with our claim statement.
   *
   * @param holder who claims
   * @param lease how long
   * @param manifest what the claimer can do
   * @param handling its handling level
   * @param max the most tasks
   * @return the claims, in claim order
   * @throws SQLException when the server refuses
   */
  List<Claim> claim(
      String holder, Duration lease, Collection<String> manifest, Label handling, int max)
      throws SQLException {
    Instant now = now();
    Instant until = now.plus(lease);
    List<Claim> claims = new ArrayList<>(max);
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try {
        // as Ledger.claimBatch: short of max with a full window, look again in one 8 times larger
        int window = ClaimSlack.window(max, slack.current());
        Window w = claimIn(c, now, until, handling, manifest, max, window, holder, claims);
        slack.record(claims.size() < max && w.rows() >= window);
        while (claims.size() < max && window <= MAX_WINDOW / 8 && w.rows() >= window) {
          window *= 8;
          w =
              claimIn(
                  c, now, until, handling, manifest, max - claims.size(), window, holder, claims);
        }
        // the statement logged each claim itself; the claims in claim order, as ours
        claims.sort(
            Comparator.comparingLong(Claim::priority)
                .reversed()
                .thenComparing(Claim::created)
                .thenComparing(Claim::id));
        c.commit();
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
    return claims;
  }

  /** Ledger.MAX_CLAIM_WINDOW: the largest window a claim grows to. */
  private static final int MAX_WINDOW = 1 << 20;

  /** The domain's claim window slack, learnt as ours learns it. */
  private final ClaimSlack slack = new ClaimSlack();

  /**
   * How many candidate rows an uncontended claim of {@code max} reads, as {@code
   * Ledger.claimWindow}.
   *
   * @param max the most tasks
   * @return the window
   */
  static int window(int max) {
    return ClaimSql.claimWindow(max);
  }

  private Window claimIn(
      Connection c,
      Instant now,
      Instant until,
      Label handling,
      Collection<String> manifest,
      int max,
      int window,
      String holder,
      List<Claim> claims)
      throws SQLException {
    try (PreparedStatement p = c.prepareStatement(claim[0])) {
      Object[] values = values(claimBinds, now, until, handling, manifest, max, window, holder);
      for (int i = 0; i < values.length; i++) {
        literal(p, i + 1, values[i]);
      }
      int rows = 0;
      try (ResultSet rs = p.executeQuery()) {
        while (rs.next()) {
          rows = rs.getInt("window_rows");
          if (rs.getString("id") != null) {
            claims.add(
                new Claim(
                    rs.getString("id"),
                    rs.getLong("attempts"),
                    rs.getLong("priority"),
                    rs.getString("created")));
          }
        }
      }
      return new Window(rows);
    }
  }

  /**
   * The bind values of our claim statement for one claim, in order.
   *
   * @param now the claim's time
   * @param until the new lease's end
   * @param handling the claimer's handling level
   * @param manifest the claimer's manifest
   * @param max the most tasks
   * @param holder the claimer
   * @return the values: text, {@code Long} or as our code bound its constants
   */
  Object[] claimValues(
      Instant now,
      Instant until,
      Label handling,
      Collection<String> manifest,
      int max,
      String holder) {
    return values(claimBinds, now, until, handling, manifest, max, window(max), holder);
  }

  private static Object[] values(
      List<OursSql.Role> roles,
      Instant now,
      Instant until,
      Label handling,
      Collection<String> manifest,
      int max,
      int window,
      String holder) {
    Object[] values = new Object[roles.size()];
    for (int i = 0; i < values.length; i++) {
      OursSql.Role role = roles.get(i);
      values[i] =
          switch (role.kind()) {
            case NOW -> Rfc3339.format(now);
            case UNTIL -> Rfc3339.format(until);
            case RANK -> handling.rank();
            case MANIFEST -> Seeder.jsonArray(List.copyOf(manifest));
            case MAX -> (long) max;
            case WINDOW -> (long) window;
            case HOLDER -> holder;
            case PAYLOAD ->
                JSON.objectNode()
                    .put("holder", holder)
                    .put("until", Rfc3339.format(until))
                    .toString();
            case LITERAL -> role.literal();
          };
    }
    return values;
  }

  /**
   * Our claim statement, on this baseline's schema.
   *
   * @return its SQL text
   */
  String claimSql() {
    return claim[0];
  }

  /**
   * The naive claim of one task: the filter in {@code WHERE}, {@code ORDER BY priority DESC,
   * created LIMIT 1 FOR UPDATE SKIP LOCKED}, then the update and the event.
   *
   * @param holder who claims
   * @param lease how long
   * @param manifest what the claimer can do
   * @param handling its handling level
   * @return the claim, or null when nothing is claimable
   * @throws SQLException when the server refuses
   */
  Claim naiveClaim(String holder, Duration lease, Collection<String> manifest, Label handling)
      throws SQLException {
    Instant now = now();
    Instant until = now.plus(lease);
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try {
        String id = null;
        try (PreparedStatement p = c.prepareStatement(naive)) {
          p.setLong(1, handling.rank());
          p.setString(2, Seeder.jsonArray(List.copyOf(manifest)));
          try (ResultSet rs = p.executeQuery()) {
            if (rs.next()) {
              id = rs.getString(1);
            }
          }
        }
        Claim out = null;
        if (id != null) {
          try (PreparedStatement p = c.prepareStatement(naiveUpdate)) {
            p.setString(1, holder);
            p.setString(2, Rfc3339.format(until));
            p.setString(3, id);
            try (ResultSet rs = p.executeQuery()) {
              rs.next();
              out = new Claim(id, rs.getLong(1), 0, "");
            }
          }
          event(
              c,
              admit[2],
              id,
              "claimed",
              now,
              JSON.objectNode().put("holder", holder).put("until", Rfc3339.format(until)));
        }
        c.commit();
        return out;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
  }

  /**
   * Completes a claimed task, fenced on holder and attempt as ours is (the route's {@code
   * completed} and the dependents' {@code blocked} are the database's triggers' work, on either
   * side).
   *
   * @param id the task
   * @param holder the lease's holder
   * @param attempt the lease's attempt
   * @throws SQLException when the server refuses
   * @throws BenchFailure when the lease is not the task's current one
   */
  void complete(String id, String holder, long attempt) throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      route(c, complete[0], id);
      c.setAutoCommit(false);
      try {
        try (PreparedStatement p = c.prepareStatement(complete[1])) {
          p.setString(1, id);
          try (ResultSet rs = p.executeQuery()) {
            if (!rs.next()
                || !"claimed".equals(rs.getString("status"))
                || !holder.equals(rs.getString("holder"))
                || rs.getLong("attempts") != attempt) {
              throw new BenchFailure("baseline complete: lease of " + id + " lost");
            }
          }
        }
        event(c, complete[2], id, "completed", now(), JSON.objectNode().putNull("handoff"));
        try (PreparedStatement p = c.prepareStatement(complete[3])) {
          p.setString(1, "completed");
          text(p, 2, null);
          text(p, 3, null);
          p.setString(4, id);
          one(p.executeUpdate(), "update task");
        }
        c.commit();
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      } finally {
        c.setAutoCommit(true);
      }
    }
  }

  private String route(Connection c, String sql, String id) throws SQLException {
    try (PreparedStatement p = c.prepareStatement(sql)) {
      p.setString(1, id);
      try (ResultSet rs = p.executeQuery()) {
        if (!rs.next() || !domain.equals(rs.getString(1))) {
          throw new BenchFailure("baseline: no route for task " + id);
        }
        return rs.getString(1);
      }
    }
  }

  private static void event(
      Connection c, String sql, String id, String kind, Instant at, ObjectNode payload)
      throws SQLException {
    try (PreparedStatement p = c.prepareStatement(sql)) {
      p.setString(1, id);
      p.setString(2, kind);
      p.setString(3, Rfc3339.format(at));
      p.setString(4, payload.toString());
      one(p.executeUpdate(), "insert event");
    }
  }

  private static ObjectNode created(String id, TaskSpec spec) {
    ObjectNode s = JSON.objectNode();
    s.put("domain", spec.domain());
    s.put("title", spec.title());
    s.put("body", spec.body());
    spec.requirements().forEach(s.putArray("requirements")::add);
    spec.dependsOn().forEach(s.putArray("depends_on")::add);
    s.put("origin", spec.origin());
    s.put("upstream_event", spec.upstreamEvent());
    s.put("created_by", spec.createdBy());
    s.put("classification", spec.classification().wire());
    s.put("priority", spec.priority());
    ObjectNode p = JSON.objectNode();
    p.put("id", id);
    p.set("spec", s);
    return p;
  }

  private static void literal(PreparedStatement p, int i, Object v) throws SQLException {
    if (v == null) {
      p.setNull(i, Types.VARCHAR);
    } else if (v instanceof Long l) {
      p.setLong(i, l);
    } else if (v instanceof Integer n) {
      p.setInt(i, n);
    } else if (v instanceof Boolean b) {
      p.setBoolean(i, b);
    } else if (v instanceof String t) {
      p.setString(i, t);
    } else {
      throw new BenchFailure("our claim binds a " + v.getClass() + "; teach RawLedger to bind it");
    }
  }

  private static void text(PreparedStatement p, int i, String v) throws SQLException {
    if (v == null) {
      p.setNull(i, Types.VARCHAR);
    } else {
      p.setString(i, v);
    }
  }

  private static void one(int n, String what) {
    if (n != 1) {
      throw new BenchFailure("baseline " + what + ": " + n + " rows, expected 1");
    }
  }

  private static Instant now() {
    return Instant.now().truncatedTo(ChronoUnit.MICROS);
  }

  private static String newId() {
    long micros = ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
    return String.format(
        "t%014x-%08x", micros, ThreadLocalRandom.current().nextInt() & 0xffffffffL);
  }
}
