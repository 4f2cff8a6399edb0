package dev.ledger.app.fleet;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_DOMAINS;

import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.LedgerMigrations;
import dev.ledger.schema.RenderMappedDsl;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/** Tenant databases for the fleet tests. */
final class Tenants {

  private static final Pattern PASSWORD = Pattern.compile("[?&]password=([^&]+)");

  private Tenants() {}

  /**
   * A tenant's DSN with a password: the given secret (the test server trusts, so any password
   * connects), or the server's own when its URL has one (Testcontainers).
   *
   * @param database the database name
   * @param secret the password to add
   * @return the DSN
   */
  static String dsn(String database, String secret) {
    String url = TestServer.get().urlFor(database);
    if (PASSWORD.matcher(url).find()) {
      return url;
    }
    return url + (url.contains("?") ? "&" : "?") + "password=" + secret;
  }

  /**
   * The password a DSN carries.
   *
   * @param dsn the DSN
   * @return its password
   */
  static String password(String dsn) {
    Matcher m = PASSWORD.matcher(dsn);
    if (!m.find()) {
      throw new IllegalArgumentException("no password in the DSN");
    }
    return m.group(1);
  }

  /**
   * A non-pooled data source over a test database.
   *
   * @param database the database name
   * @return the data source
   */
  static DataSource dataSource(String database) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(TestServer.get().urlFor(database));
    return ds;
  }

  /**
   * Migrates the directory and routes the domains, their schemas not made.
   *
   * @param database the database name
   * @param domains the domains
   */
  static void route(String database, List<String> domains) {
    DataSource ds = dataSource(database);
    LedgerMigrations.migrateDirectory(ds, "public");
    var ctx = new RenderMappedDsl(ds, "public", List.of()).directory();
    for (String d : domains) {
      ctx.insertInto(LEDGER_DOMAINS)
          .set(LEDGER_DOMAINS.DOMAIN, d)
          .set(LEDGER_DOMAINS.SCHEMA, DomainSchemas.quotedSchemaName(d))
          .execute();
    }
  }

  /**
   * Advisory locks held in a database, by any session.
   *
   * @param database the database name
   * @return how many
   * @throws SQLException when the query fails
   */
  static long advisoryLocks(String database) throws SQLException {
    try (Connection c = PostgresExtension.connect(database);
        PreparedStatement s =
            c.prepareStatement(
                "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database"
                    + " WHERE l.locktype = 'advisory' AND d.datname = ?")) {
      s.setString(1, database);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }
}
