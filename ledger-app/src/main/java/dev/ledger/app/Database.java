package dev.ledger.app;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.migrate.Dsn;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import javax.sql.DataSource;

/**
 * An open database for one command: a HikariCP pool over it, its {@link Dsn} (for dedicated
 * connections and redaction), and, for the embedded default, the embedded server, stopped on {@link
 * #close()}.
 */
public final class Database implements AutoCloseable {

  private final Dsn dsn;
  private final HikariDataSource pool;
  private final EmbeddedPostgres embedded;
  private final String description;
  private final String directorySchema;

  Database(
      Dsn dsn,
      HikariDataSource pool,
      EmbeddedPostgres embedded,
      String description,
      String directorySchema) {
    this.dsn = dsn;
    this.pool = pool;
    this.embedded = embedded;
    this.description = description;
    this.directorySchema = directorySchema;
  }

  /**
   * The pooled data source (queries, Flyway runs).
   *
   * @return the pool
   */
  public DataSource dataSource() {
    return pool;
  }

  /**
   * The connection string, for dedicated (non-pooled) connections and for redaction.
   *
   * @return the DSN
   */
  public Dsn dsn() {
    return dsn;
  }

  /**
   * Where the database is, without credentials.
   *
   * @return e.g. {@code 127.0.0.1:5432/demo} or {@code embedded PostgreSQL in /home/u/.ledger}
   */
  public String description() {
    return description;
  }

  /**
   * The directory schema chosen.
   *
   * @return e.g. {@code public}
   */
  public String directorySchema() {
    return directorySchema;
  }

  /** Closes the pool and stops the embedded server, if any. */
  @Override
  public void close() throws IOException {
    try {
      pool.close();
    } finally {
      if (embedded != null) {
        embedded.close();
      }
    }
  }
}
