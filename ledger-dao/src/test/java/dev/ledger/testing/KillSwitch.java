package dev.ledger.testing;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.jooq.ExecuteContext;
import org.jooq.ExecuteListener;
import org.postgresql.PGConnection;

/**
 * A jOOQ listener that, once armed, terminates the database session running the next statement
 * whose SQL matches, just before that statement is sent ({@code pg_terminate_backend} from a
 * connection of its own, waiting until the session is gone). The statement then fails on a dead
 * connection, in the middle of the ledger operation's transaction: what the operation wrote before
 * it must be rolled back by the server. Fires once per arming.
 *
 * <pre>{@code
 * KillSwitch kill = new KillSwitch(PG.databaseName());
 * Ledger ledger = Ledger.open(ds, LedgerConfig.builder().executeListener(kill).build());
 * kill.arm(KillSwitch.insertInto("events"));
 * }</pre>
 */
public final class KillSwitch implements ExecuteListener {

  private static final long serialVersionUID = 1L;

  private final String database;
  private final transient AtomicReference<Predicate<String>> armed = new AtomicReference<>();
  private final transient AtomicInteger fired = new AtomicInteger();

  /**
   * Creates the switch, disarmed.
   *
   * @param database the database the sessions belong to (for the terminating connection)
   */
  public KillSwitch(String database) {
    this.database = database;
  }

  /**
   * Arms the switch for the next statement whose SQL matches.
   *
   * @param when the condition on the rendered SQL
   */
  public void arm(Predicate<String> when) {
    armed.set(when);
  }

  /**
   * Disarms the switch if it did not fire.
   *
   * @return true when it was still armed
   */
  public boolean disarm() {
    return armed.getAndSet(null) != null;
  }

  /**
   * How often the switch fired.
   *
   * @return the count since creation
   */
  public int fired() {
    return fired.get();
  }

  /**
   * Matches an {@code INSERT} into a table of that name (in whatever schema).
   *
   * @param table the table, e.g. {@code events}
   * @return the condition
   */
  public static Predicate<String> insertInto(String table) {
    return sql -> sql.startsWith("insert into ") && names(sql, table);
  }

  /**
   * Matches a data-modifying {@code WITH} statement that inserts into a table of that name (in
   * whatever schema), e.g. the filing's one write of a task's row, events and route.
   *
   * @param table the table, e.g. {@code tasks}
   * @return the condition
   */
  public static Predicate<String> withInsertInto(String table) {
    return sql -> sql.startsWith("with ") && sql.contains(".\"" + table + "\" (");
  }

  /**
   * Matches a statement that takes a transaction-scoped advisory lock (a domain's, an origin's).
   *
   * @return the condition
   */
  public static Predicate<String> advisoryLock() {
    return sql -> sql.contains("pg_advisory_xact_lock");
  }

  /**
   * Matches a plain {@code UPDATE} of a table of that name (in whatever schema).
   *
   * @param table the table, e.g. {@code tasks}
   * @return the condition
   */
  public static Predicate<String> update(String table) {
    return sql -> sql.startsWith("update ") && names(sql, table);
  }

  private static boolean names(String sql, String table) {
    // the statement's target: its text up to the column list or the SET clause
    int end = sql.length();
    for (String stop : new String[] {" (", " set "}) {
      int at = sql.indexOf(stop);
      if (at > 0 && at < end) {
        end = at;
      }
    }
    return sql.substring(0, end).endsWith(".\"" + table + "\"");
  }

  @Override
  public void executeStart(ExecuteContext ctx) {
    String sql = ctx.sql();
    Predicate<String> when = armed.get();
    if (sql == null || when == null || !when.test(sql) || !armed.compareAndSet(when, null)) {
      return;
    }
    try {
      int pid = ctx.connection().unwrap(PGConnection.class).getBackendPID();
      try (Connection admin = PostgresExtension.connect(database);
          PreparedStatement s = admin.prepareStatement("SELECT pg_terminate_backend(?, 10000)")) {
        s.setInt(1, pid);
        try (ResultSet rs = s.executeQuery()) {
          rs.next();
          if (!rs.getBoolean(1)) {
            throw new IllegalStateException("session " + pid + " did not end in 10 s");
          }
        }
      }
      fired.incrementAndGet();
    } catch (SQLException e) {
      throw new IllegalStateException("could not terminate the session", e);
    }
  }
}
