package dev.ledger.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * The reference-stack ledgers of {@code shared/fixtures} (copied into this module's test resources,
 * {@code fixtures/}), loaded into a database over JDBC as psql would load them, and full-row reads
 * for comparing a ledger before and after a migration.
 */
public final class Fixtures {

  /** Shared {@code public.tasks}/{@code public.events}: 3 domains, 360 tasks, 1,572 events. */
  public static final String SHARED_TABLES = "reference-shared-tables.sql";

  /** Routing tables and one schema per domain without promotions: 360 tasks, 1,561 events. */
  public static final String DOMAIN_SCHEMAS = "reference-domain-schemas.sql";

  /** As above plus first-shape promotions: 2 domains, 160 tasks, 6 promotions, 655 events. */
  public static final String PROMOTIONS_V1 = "reference-promotions-v1.sql";

  private Fixtures() {}

  /**
   * A fixture's SQL text.
   *
   * @param file one of the constants
   * @return the text (UTF-8)
   */
  public static String sql(String file) {
    try (InputStream in = Fixtures.class.getResourceAsStream("/fixtures/" + file)) {
      if (in == null) {
        throw new IllegalArgumentException("no fixture " + file);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Loads a fixture into an empty database of the test server (its own {@code BEGIN}/{@code COMMIT}
   * make it one transaction).
   *
   * @param database the database name
   * @param file one of the constants
   * @throws SQLException when a statement fails
   */
  public static void load(String database, String file) throws SQLException {
    try (Connection c = PostgresExtension.connect(database);
        Statement s = c.createStatement()) {
      s.execute(sql(file));
    }
  }

  /**
   * Every row of a query, every column as PostgreSQL's text (null as null).
   *
   * @param c an open connection
   * @param sql a query with no parameters (test code: names are constants of the test)
   * @return the rows in the query's order
   * @throws SQLException when the query fails
   */
  public static List<List<String>> rows(Connection c, String sql) throws SQLException {
    List<List<String>> out = new ArrayList<>();
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      ResultSetMetaData md = rs.getMetaData();
      while (rs.next()) {
        List<String> row = new ArrayList<>();
        for (int i = 1; i <= md.getColumnCount(); i++) {
          row.add(rs.getString(i));
        }
        out.add(row);
      }
    }
    return out;
  }

  /**
   * One number from a query.
   *
   * @param c an open connection
   * @param sql a query returning one row with one integer column
   * @return the value
   * @throws SQLException when the query fails
   */
  public static long count(Connection c, String sql) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
