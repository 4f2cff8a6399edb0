package dev.ledger.bench;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The floor under B9 and B12: the rows the reference's event log and projection need for each task,
 * written by raw SQL with nothing else, on the same server and schema as ours. No claim walk over
 * claim classes, no fencing beyond the holder, no derived state (the session runs with {@code
 * session_replication_role = replica}, so no trigger fires: superuser only, as the bench's server
 * is), no Java beyond one loop. No implementation that keeps the reference's log can write less per
 * task, so a target that this floor misses against db-scheduler cannot be met by ours either.
 *
 * <ul>
 *   <li>{@link #drain}: per task, the claim's new row version and its {@code claimed} event, the
 *       completion's new row version, its {@code completed} event and the route's {@code
 *       completed}; claims of 16 from {@code tasks_queue} ({@code FOR UPDATE SKIP LOCKED}) and
 *       their completions, each one statement and one commit, on 2 connections (the fastest of
 *       2x16, 4x8 and 8x4 measured on 2 cores).
 *   <li>{@link #enqueue}: per task, the row (admitted), its {@code filed} and {@code admitted}
 *       events and its route, 1,000 tasks per statement and transaction.
 * </ul>
 */
final class WriteFloor {

  private static final int DRAIN_THREADS = 2;
  private static final int DRAIN_BATCH = 16;

  private WriteFloor() {}

  /**
   * Drains every admitted task of a seeded domain as described above.
   *
   * @param pool the database, at least {@value #DRAIN_THREADS} connections
   * @param schema the domain's schema, bare
   * @param n how many tasks are admitted (checked: every one completed once)
   * @return tasks per second
   * @throws Exception on failure
   */
  static double drain(HikariDataSource pool, String schema, int n) throws Exception {
    String s = "\"" + schema + "\"";
    String claim =
        "WITH c AS (SELECT id FROM "
            + s
            + ".tasks WHERE status = 'admitted' ORDER BY priority DESC, created LIMIT "
            + DRAIN_BATCH
            + " FOR UPDATE SKIP LOCKED),"
            + " u AS (UPDATE "
            + s
            + ".tasks t SET status = 'claimed', holder = ?, lease_until = ?,"
            + " attempts = t.attempts + 1 FROM c WHERE t.id = c.id RETURNING t.id),"
            + " e AS (INSERT INTO "
            + s
            + ".events (task_id, kind, at, payload) SELECT id, 'claimed', ?, ? FROM u)"
            + " SELECT id FROM u";
    String complete =
        "WITH l AS (SELECT id FROM "
            + s
            + ".tasks WHERE id = ANY (?) ORDER BY id FOR UPDATE),"
            + " u AS (UPDATE "
            + s
            + ".tasks t SET status = 'completed', lease_until = NULL FROM l"
            + " WHERE t.id = l.id AND t.status = 'claimed' AND t.holder = ? RETURNING t.id),"
            + " e AS (INSERT INTO "
            + s
            + ".events (task_id, kind, at, payload)"
            + " SELECT id, 'completed', ?, '{\"handoff\":null}' FROM u),"
            + " r AS (UPDATE public.ledger_tasks SET completed = true"
            + " WHERE id IN (SELECT id FROM u))"
            + " SELECT count(*) FROM u";
    AtomicLong done = new AtomicLong();
    List<Exception> failed = java.util.Collections.synchronizedList(new ArrayList<>());
    long t0 = System.nanoTime();
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < DRAIN_THREADS; i++) {
      Thread t =
          new Thread(
              () -> {
                try (Connection c = floorConnection(pool);
                    PreparedStatement pc = c.prepareStatement(claim);
                    PreparedStatement pd = c.prepareStatement(complete)) {
                  while (true) {
                    String now = Instant.now().toString();
                    String until = Instant.now().plusSeconds(300).toString();
                    pc.setString(1, "floor");
                    pc.setString(2, until);
                    pc.setString(3, now);
                    pc.setString(4, "{\"holder\":\"floor\",\"lease_until\":\"" + until + "\"}");
                    List<String> ids = new ArrayList<>(DRAIN_BATCH);
                    try (ResultSet rs = pc.executeQuery()) {
                      while (rs.next()) {
                        ids.add(rs.getString(1));
                      }
                    }
                    c.commit();
                    if (ids.isEmpty()) {
                      return;
                    }
                    pd.setArray(1, c.createArrayOf("text", ids.toArray()));
                    pd.setString(2, "floor");
                    pd.setString(3, now);
                    try (ResultSet rs = pd.executeQuery()) {
                      rs.next();
                      done.addAndGet(rs.getLong(1));
                    }
                    c.commit();
                  }
                } catch (Exception e) {
                  failed.add(e);
                }
              },
              "floor-" + i);
      t.start();
      threads.add(t);
    }
    for (Thread t : threads) {
      t.join();
    }
    double rate = n / ((System.nanoTime() - t0) / 1e9);
    if (!failed.isEmpty()) {
      throw failed.get(0);
    }
    Context.check(done.get() == n, "floor drain: " + done.get() + " completed, expected " + n);
    return rate;
  }

  /**
   * Files {@code n} admitted tasks into a provisioned domain as described above.
   *
   * @param pool the database
   * @param domain the domain, provisioned
   * @param schema its schema, bare
   * @param n how many tasks
   * @param batch tasks per statement and transaction
   * @param round distinguishes the ids of one run's rounds
   * @return tasks per second
   * @throws SQLException on failure
   */
  static double enqueue(
      HikariDataSource pool, String domain, String schema, int n, int batch, int round)
      throws SQLException {
    String s = "\"" + schema + "\"";
    String sql =
        "WITH v AS (SELECT * FROM unnest(?::text[], ?::text[]) AS v (id, created)),"
            + " t AS (INSERT INTO "
            + s
            + ".tasks (id, domain, title, body, requirements, depends_on, created_by, label_rank,"
            + " priority, created, status) SELECT id, ?, 'enqueue', '', '[]', '[]', 'bench', 0, 0,"
            + " created, 'admitted' FROM v),"
            + " r AS (INSERT INTO public.ledger_tasks (id, domain) SELECT id, ? FROM v),"
            + " e AS (INSERT INTO "
            + s
            + ".events (task_id, kind, at, payload)"
            + " SELECT id, k.kind, created, k.payload FROM v,"
            + " (VALUES (1, 'filed', '{}'), (2, 'admitted', '{}')) AS k (o, kind, payload)"
            + " ORDER BY v.id, k.o)"
            + " SELECT count(*) FROM v";
    long t0 = System.nanoTime();
    try (Connection c = floorConnection(pool);
        PreparedStatement p = c.prepareStatement(sql)) {
      for (int i = 0; i < n; i += batch) {
        int size = Math.min(batch, n - i);
        String[] ids = new String[size];
        String[] created = new String[size];
        for (int j = 0; j < size; j++) {
          ids[j] = "floor-" + round + "-" + (i + j);
          created[j] = Instant.now().toString();
        }
        p.setArray(1, c.createArrayOf("text", ids));
        p.setArray(2, c.createArrayOf("text", created));
        p.setString(3, domain);
        p.setString(4, domain);
        try (ResultSet rs = p.executeQuery()) {
          rs.next();
          Context.check(rs.getLong(1) == size, "floor enqueue: a batch wrote " + rs.getLong(1));
        }
        c.commit();
      }
    }
    return n / ((System.nanoTime() - t0) / 1e9);
  }

  /**
   * A connection of its own (not the pool's: the setting must not outlive it) to the pool's
   * database, with triggers off and its own transactions.
   */
  private static Connection floorConnection(HikariDataSource pool) throws SQLException {
    Connection c =
        java.sql.DriverManager.getConnection(pool.getJdbcUrl(), pool.getDataSourceProperties());
    try (Statement st = c.createStatement()) {
      st.execute("SET session_replication_role = replica");
    }
    c.setAutoCommit(false);
    return c;
  }
}
