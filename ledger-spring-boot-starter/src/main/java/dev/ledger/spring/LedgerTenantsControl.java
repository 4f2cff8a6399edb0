package dev.ledger.spring;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.migrate.Dsn;
import javax.sql.DataSource;

/**
 * The control database's small pool behind the starter's {@link
 * dev.ledger.tenants.TenantDirectory}, made from {@code ledger.tenants.control-url}. Deliberately
 * not a {@code DataSource} bean (it would compete with the application's own); closed after the
 * directory. Its {@link #toString()} shows no URL.
 */
public final class LedgerTenantsControl implements AutoCloseable {

  private final HikariDataSource pool;

  /**
   * Opens the pool (no connection is made yet).
   *
   * @param url a {@code jdbc:postgresql://} URL or a {@code postgresql://} URI
   * @param size the most connections
   * @throws IllegalArgumentException when the URL is no PostgreSQL connection string (the message
   *     holds no part of it)
   */
  public LedgerTenantsControl(String url, int size) {
    Dsn dsn;
    try {
      dsn = Dsn.parse(url);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "ledger.tenants.control-url: not a jdbc:postgresql:// URL or postgresql:// URI");
    }
    HikariConfig config = new HikariConfig();
    config.setDataSource(dsn.dataSource());
    config.setPoolName("ledger-tenants-control");
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(0);
    config.setInitializationFailTimeout(-1);
    this.pool = new HikariDataSource(config);
  }

  /**
   * The control database.
   *
   * @return its pooled data source
   */
  public DataSource dataSource() {
    return pool;
  }

  /** Closes the pool. */
  @Override
  public void close() {
    pool.close();
  }

  @Override
  public String toString() {
    return "LedgerTenantsControl[url redacted]";
  }
}
