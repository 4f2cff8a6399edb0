package dev.ledger.migrate;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_DOMAINS;

import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.LedgerMigrations;
import dev.ledger.schema.RenderMappedDsl;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/** Helpers for the migration tests' databases. */
final class TestDatabases {

  private TestDatabases() {}

  /**
   * A non-pooled data source over a test database.
   *
   * @param db the database name
   * @return the data source
   */
  static PGSimpleDataSource dataSource(String db) {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(TestServer.get().urlFor(db));
    return ds;
  }

  /**
   * Migrates the directory schema and routes the domains (their schemas not made).
   *
   * @param ds the database
   * @param domains the domains to route
   */
  static void route(DataSource ds, List<String> domains) {
    LedgerMigrations.migrateDirectory(ds, "public");
    var ctx = new RenderMappedDsl(ds, "public", List.of()).directory();
    var insert =
        ctx.insertInto(LEDGER_DOMAINS, LEDGER_DOMAINS.DOMAIN, LEDGER_DOMAINS.SCHEMA)
            .values((String) null, (String) null);
    var batch = ctx.batch(insert);
    for (String d : domains) {
      batch.bind(d, DomainSchemas.quotedSchemaName(d));
    }
    batch.execute();
  }

  /**
   * How many advisory locks are held in a database.
   *
   * @param db the database name
   * @return the count over every session
   * @throws SQLException when the query fails
   */
  static long advisoryLocks(String db) throws SQLException {
    try (Connection c = PostgresExtension.connect(db);
        var s =
            c.prepareStatement(
                "SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database"
                    + " WHERE l.locktype = 'advisory' AND d.datname = ?")) {
      s.setString(1, db);
      try (var rs = s.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /**
   * The versions from one to the latest, as strings.
   *
   * @param from the first, e.g. 1
   * @param latest the last, e.g. {@link LedgerMigrations#DOMAIN_VERSION}
   * @return e.g. {@code ["1", "2", "3"]}
   */
  static List<String> versions(int from, String latest) {
    return java.util.stream.IntStream.rangeClosed(from, Integer.parseInt(latest))
        .mapToObj(Integer::toString)
        .toList();
  }

  /** A data source that counts the connections taken from it. */
  static final class Counting implements DataSource {
    private final DataSource delegate;
    final AtomicInteger connections = new AtomicInteger();

    Counting(DataSource delegate) {
      this.delegate = delegate;
    }

    @Override
    public Connection getConnection() throws SQLException {
      connections.incrementAndGet();
      return delegate.getConnection();
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
      connections.incrementAndGet();
      return delegate.getConnection(user, password);
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
      return delegate.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
      delegate.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
      delegate.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
      return delegate.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
      return delegate.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
      return delegate.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
      return delegate.isWrapperFor(iface);
    }
  }
}
