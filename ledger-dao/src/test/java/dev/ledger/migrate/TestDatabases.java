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
    java.util.Set<Integer> scripts = scriptVersions(latest);
    return java.util.stream.IntStream.rangeClosed(from, Integer.parseInt(latest))
        .filter(scripts::contains)
        .mapToObj(Integer::toString)
        .toList();
  }

  /**
   * The versions of the scripts in the set whose latest version is {@code latest} (the domain set
   * when it is the domain's, else the directory's): the sets have gaps while issues that each took
   * a version number land one by one.
   */
  private static java.util.Set<Integer> scriptVersions(String latest) {
    String dir =
        latest.equals(LedgerMigrations.DOMAIN_VERSION)
            ? "db/ledger/domain/"
            : "db/ledger/directory/";
    java.util.Set<Integer> versions = new java.util.HashSet<>();
    for (int v = 1; v <= Integer.parseInt(latest); v++) {
      versions.add(v);
    }
    java.util.Set<Integer> present = new java.util.HashSet<>();
    java.net.URL url = TestDatabases.class.getClassLoader().getResource(dir);
    try {
      if (url != null && url.getProtocol().equals("file")) {
        try (var files = java.nio.file.Files.list(java.nio.file.Path.of(url.toURI()))) {
          files.forEach(f -> version(f.getFileName().toString(), present));
        }
      } else if (url != null && url.getProtocol().equals("jar")) {
        String jar = url.getPath().substring("file:".length(), url.getPath().indexOf('!'));
        try (var zip = new java.util.zip.ZipFile(java.net.URLDecoder.decode(jar, "UTF-8"))) {
          zip.stream()
              .map(java.util.zip.ZipEntry::getName)
              .filter(n -> n.startsWith(dir))
              .forEach(n -> version(n.substring(dir.length()), present));
        }
      } else {
        return versions;
      }
    } catch (java.io.IOException | java.net.URISyntaxException e) {
      throw new IllegalStateException("cannot list " + dir, e);
    }
    return present;
  }

  private static void version(String file, java.util.Set<Integer> into) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("V(\\d+)__.*").matcher(file);
    if (m.matches()) {
      into.add(Integer.parseInt(m.group(1)));
    }
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
