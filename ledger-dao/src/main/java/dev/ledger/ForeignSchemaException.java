package dev.ledger;

import java.util.Collection;
import java.util.List;
import java.util.TreeSet;

/**
 * A domain's schema name is taken by a schema that holds tables that are not a ledger's: no ledger
 * migration history, and not the reference stack's {@code events} and {@code tasks}. The ledger
 * leaves it alone (it never adopts or baselines such a schema) and the operation wrote nothing. The
 * message names the schema, the domain and the tables, and says what to do: move the tables out of
 * the schema or drop it. {@code ledger-app} exits 7.
 */
public final class ForeignSchemaException extends LedgerException {

  private static final long serialVersionUID = 1L;

  private final String schema;
  private final String domain;
  private final List<String> tables;

  /**
   * Creates the error.
   *
   * @param schema the schema, unquoted
   * @param domain the domain whose schema it would be
   * @param tables the tables it holds
   */
  public ForeignSchemaException(String schema, String domain, Collection<String> tables) {
    super(message(schema, domain, tables));
    this.schema = schema;
    this.domain = domain;
    this.tables = List.copyOf(new TreeSet<>(tables));
  }

  /**
   * The message of such a schema, as this exception and the migration job's report give it.
   *
   * @param schema the schema
   * @param domain its domain
   * @param tables the tables it holds
   * @return e.g. {@code foreign schema: ledger_acme_1a2b3c4d (domain acme) exists and holds tables
   *     [invoices] that are not a ledger's ...}
   */
  public static String message(String schema, String domain, Collection<String> tables) {
    return "foreign schema: "
        + schema
        + " (domain "
        + domain
        + ") exists and holds tables "
        + new TreeSet<>(tables)
        + " that are not a ledger's (no ledger migration history, not the reference stack's"
        + " events and tasks); it was left alone. Move those tables out of "
        + schema
        + " or drop it, then run again";
  }

  /**
   * The schema.
   *
   * @return its name, unquoted
   */
  public String schema() {
    return schema;
  }

  /**
   * The domain whose schema it would be.
   *
   * @return the domain
   */
  public String domain() {
    return domain;
  }

  /**
   * The tables it holds.
   *
   * @return their names, sorted
   */
  public List<String> tables() {
    return tables;
  }
}
