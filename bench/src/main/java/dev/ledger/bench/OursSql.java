package dev.ledger.bench;

import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The SQL text our code emits for each operation the baseline repeats, captured with a jOOQ {@link
 * SqlCapture} listener on a scratch domain. The baseline ({@link RawLedger}) issues exactly these
 * statements, retargeted to its own schema, with the bind values it computes itself. Before a run
 * trusts them, the statement count, the leading words and the bind count of each are checked
 * against what {@link RawLedger} binds: when our code changes its SQL, the run fails and names the
 * operation instead of comparing against a stale baseline.
 *
 * @param schema the schema the statements were captured on, bare
 * @param file {@code Ledger.file} of a task without origin or dependencies, on a known domain
 * @param admit {@code Ledger.admit}
 * @param claim {@code Ledger.claimNext} / {@code claimBatch} when one task is claimed
 * @param complete {@code Ledger.complete}
 */
record OursSql(
    String schema,
    List<String> file,
    List<String> admit,
    List<String> claim,
    List<String> complete) {

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
    try {
      List<String> file = capture.begin();
      String id = ledger.file(TaskSpec.builder(DOMAIN, "captured").build());
      List<String> admit = capture.begin();
      ledger.admit(id);
      List<String> claim = capture.begin();
      Optional<Lease> lease =
          ledger.claimNext(DOMAIN, "capture", Duration.ofMinutes(5), List.of(), Label.PUBLIC);
      List<String> complete = capture.begin();
      ledger.complete(lease.orElseThrow(), null);
      OursSql sql = new OursSql(schema, file, admit, claim, complete);
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
    shape("file", file, new String[] {"insert into", "insert into", "insert into"}, 4, 20, 3);
    shape("admit", admit, new String[] {"select", "select", "insert into", "update"}, 1, 1, 4, 2);
    shape("claim", claim, new String[] {"with \"candidate\"", "insert into"}, 8, 4);
    shape(
        "complete",
        complete,
        new String[] {"select", "select", "insert into", "update", "update"},
        1,
        1,
        4,
        4,
        2);
    if (!file.get(1).contains(".\"tasks\" (\"id\", \"domain\", \"title\"")
        || !complete.get(3).contains("set \"status\" = ?, \"lease_until\" = ?, \"handoff\" = ?")
        || !claim.get(0).contains("\"t\".\"lease_until\" < ?) and \"t\".\"label_rank\" <= ?")) {
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
