package dev.ledger.tenants;

import dev.ledger.LedgerStorageException;
import dev.ledger.migrate.Dsn;
import java.sql.SQLException;

/** Which failures mean "the tenant's database does not answer", and how they are told. */
final class Unreachable {

  private Unreachable() {}

  /**
   * Whether a ledger failure means the database is unreachable: a connection exception (SQLState
   * class {@code 08}), or the server shutting down or starting ({@code 57P01} to {@code 57P03}). A
   * spent connection budget is not ({@value BudgetedDataSource#BUDGET_SQLSTATE}).
   *
   * <p>The whole cause chain is read, not only the error's own SQLState: a wrapper on the way (a
   * pool's, a driver's) may carry no SQLState of its own, and then jOOQ reports {@code 00000} for a
   * statement the server ended with {@code 57P01} while it shut down.
   */
  static boolean matches(LedgerStorageException e) {
    if (matches(e.sqlState())) {
      return true;
    }
    int depth = 0;
    for (Throwable t = e.getCause(); t != null && depth < 64; t = t.getCause(), depth++) {
      if (t instanceof SQLException s && matches(s.getSQLState())) {
        return true;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }

  static boolean matches(String sqlState) {
    return sqlState != null
        && (sqlState.startsWith("08")
            || sqlState.equals("57P01")
            || sqlState.equals("57P02")
            || sqlState.equals("57P03"));
  }

  /** The first line of the deepest cause's message, with the DSN and password redacted. */
  static String describe(Throwable cause, Dsn dsn) {
    Throwable root = cause;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String state =
        root instanceof SQLException s && s.getSQLState() != null ? s.getSQLState() : null;
    String m = String.valueOf(root.getMessage());
    int nl = m.indexOf('\n');
    m = nl < 0 ? m : m.substring(0, nl);
    if (dsn != null) {
      m = dsn.redact(m);
    }
    return state == null ? m : m + " [SQLState " + state + "]";
  }
}
