package dev.ledger.bench;

import dev.ledger.Claimer;
import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The SQL text our code emits for each operation the baseline repeats, captured with a jOOQ {@link
 * SqlCapture} listener on a scratch domain. The baseline ({@link RawLedger}) issues exactly these
 * statements, retargeted to its own schema, with the bind values it computes itself. Before a run
 * trusts them, the statement count, the leading words and the bind count of each are checked
 * against what {@link RawLedger} binds (the claim's binds are recognised by value, whatever the
 * query's shape): when our code changes its SQL, the run fails and names the operation instead of
 * comparing against a stale baseline.
 *
 * @param schema the schema the statements were captured on, bare
 * @param file {@code Ledger.file} of a task without origin or dependencies, on a known domain: the
 *     bounds, the lock, the row, its event and its route in one statement (issue 26)
 * @param admit {@code Ledger.admit}
 * @param claim {@code Ledger.claimBatch} short of its max: the one claim statement (it claims, logs
 *     the claims and returns the rows with the size of its window)
 * @param claimBinds what each bind value of the claim statement stands for
 * @param complete {@code Ledger.complete}
 */
record OursSql(
    String schema,
    List<String> file,
    List<String> admit,
    List<String> claim,
    List<OursSql.Role> claimBinds,
    List<String> complete) {

  /**
   * What a bind value of the claim statement stands for, recognised from the distinctive values the
   * capture claims with, so the baseline binds the claim statement whatever its shape.
   *
   * @param kind what it is
   * @param literal the value to bind as is, for {@link Kind#LITERAL}
   */
  record Role(Kind kind, Object literal) {}

  /** The kinds of bind values of the claim statement. */
  enum Kind {
    /** the claim's time (leases that ended before it are expired). */
    NOW,
    /** the new lease's end. */
    UNTIL,
    /** the claimer's handling level, as a label rank. */
    RANK,
    /** the claimer's manifest, as a JSON array. */
    MANIFEST,
    /** the most tasks to claim. */
    MAX,
    /** how many candidate rows the claim reads (grows 8 times when full of locked rows). */
    WINDOW,
    /** the claimer. */
    HOLDER,
    /** the payload of the {@code claimed} events: the holder and the lease's end. */
    PAYLOAD,
    /** a constant of our code, bound as captured. */
    LITERAL
  }

  private static final String HOLDER = "capture-holder";
  private static final List<String> MANIFEST = List.of("capture-skill");
  private static final Label HANDLING = Label.CONFIDENTIAL;
  private static final int MAX = 7;

  /** The scratch domain statements are captured on. */
  static final String DOMAIN = "bench-sql-capture";

  /**
   * Runs each operation once on the scratch domain and keeps its statements.
   *
   * @param ledger a ledger configured with {@code capture}
   * @param capture the listener
   * @return the statements, checked
   * @throws BenchFailure when a statement's shape is not what the baseline binds
   */
  static OursSql capture(Ledger ledger, SqlCapture capture) {
    String schema = ledger.provision(DOMAIN);
    ledger.file(TaskSpec.builder(DOMAIN, "warm-up").build());
    // a second admitted task, so the captured claim logs a batch of claims
    ledger.admit(ledger.file(TaskSpec.builder(DOMAIN, "claimed too").build()));
    try {
      List<String> file = capture.begin();
      String id = ledger.file(TaskSpec.builder(DOMAIN, "captured").build());
      List<String> admit = capture.begin();
      ledger.admit(id);
      List<String> claim = capture.begin();
      List<Lease> leases =
          ledger.claimBatch(
              DOMAIN,
              Claimer.of(HOLDER).lease(Duration.ofMinutes(5)).manifest(MANIFEST).handling(HANDLING),
              MAX);
      List<Role> claimBinds = roles(capture.binds().get(0));
      Optional<Lease> lease = leases.stream().findFirst();
      List<String> complete = capture.begin();
      ledger.complete(lease.orElseThrow(), null);
      OursSql sql = new OursSql(schema, file, admit, claim, claimBinds, complete);
      sql.check();
      return sql;
    } finally {
      capture.end();
    }
  }

  /**
   * One captured statement, retargeted to another domain schema.
   *
   * @param statement the captured text
   * @param target the target schema, bare
   * @return the text naming {@code target} where ours named the scratch schema
   */
  String retarget(String statement, String target) {
    return statement.replace("\"" + schema + "\"", "\"" + target + "\"");
  }

  private void check() {
    shape("file", file, new String[] {"with l as materialized (select \"set_config\""}, 29);
    shape("admit", admit, new String[] {"select", "select", "insert into", "update"}, 1, 1, 4, 2);
    shape("claim", claim, new String[] {"with \"classes\""}, count(claim.get(0)));
    for (Kind k :
        new Kind[] {Kind.NOW, Kind.UNTIL, Kind.MAX, Kind.HOLDER, Kind.WINDOW, Kind.PAYLOAD}) {
      if (claimBinds.stream().noneMatch(r -> r.kind() == k)) {
        throw new BenchFailure("our claim statement binds no " + k + "; update OursSql");
      }
    }
    shape(
        "complete",
        complete,
        new String[] {"select", "select", "insert into", "update"},
        1,
        1,
        4,
        4);
    if (!file.get(0).contains("pg_advisory_xact_lock")
        || !file.get(0).contains(".\"tasks\" (\"id\", \"domain\", \"title\"")
        || !file.get(0)
            .contains("\"posted_to\", \"blocked\", \"not_before\", \"max_attempts\") select")
        || !complete.get(3).contains("set \"status\" = ?, \"lease_until\" = ?, \"handoff\" = ?")
        || !claim.get(0).contains("insert into \"" + schema + "\".\"events\"")
        || !claim.get(0).contains("\"window_rows\"")) {
      throw new BenchFailure("our SQL changed its column order; update RawLedger's binds");
    }
  }

  private static void shape(String op, List<String> sql, String[] starts, int... binds) {
    boolean ok = sql.size() == starts.length;
    for (int i = 0; ok && i < starts.length; i++) {
      ok = sql.get(i).startsWith(starts[i]) && count(sql.get(i)) == binds[i];
    }
    if (!ok) {
      throw new BenchFailure(
          "our "
              + op
              + " no longer emits the statements the baseline repeats (update RawLedger): "
              + sql);
    }
  }

  /** Recognises each bind value of the captured claim by the distinctive value it was given. */
  private static List<Role> roles(List<Object> values) {
    Instant until = null;
    for (Object v : values) {
      if (v instanceof Instant i && (until == null || i.isAfter(until))) {
        until = i;
      }
    }
    String manifest = Seeder.jsonArray(MANIFEST);
    List<Role> roles = new ArrayList<>();
    for (Object v : values) {
      Kind k;
      if (v instanceof Instant i) {
        k = i.equals(until) ? Kind.UNTIL : Kind.NOW;
      } else if (HOLDER.equals(v)) {
        k = Kind.HOLDER;
      } else if (v instanceof com.fasterxml.jackson.databind.JsonNode
          || (v instanceof String t && t.startsWith("{\"holder\":"))) {
        k = Kind.PAYLOAD;
      } else if (manifest.equals(v)) {
        k = Kind.MANIFEST;
      } else if (Long.valueOf(HANDLING.rank()).equals(v)) {
        k = Kind.RANK;
      } else if (Long.valueOf(MAX).equals(v) || Integer.valueOf(MAX).equals(v)) {
        k = Kind.MAX;
      } else if (Long.valueOf(RawLedger.window(MAX)).equals(v)
          || Integer.valueOf(RawLedger.window(MAX)).equals(v)) {
        k = Kind.WINDOW;
      } else {
        k = Kind.LITERAL;
      }
      roles.add(new Role(k, k == Kind.LITERAL ? v : null));
    }
    return List.copyOf(roles);
  }

  private static int count(String sql) {
    int n = 0;
    for (int i = 0; i < sql.length(); i++) {
      if (sql.charAt(i) == '?') {
        n++;
      }
    }
    return n;
  }
}
