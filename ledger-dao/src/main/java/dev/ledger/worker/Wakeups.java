package dev.ledger.worker;

import dev.ledger.schema.DomainSchemas;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.UUID;
import java.util.function.BiConsumer;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pool's one listening connection: {@code LISTEN} on the channel of each domain it serves (the
 * domain schema's name, which the trigger of domain migration V7 notifies when a task becomes
 * admitted or is filed delayed), on a thread of its own, calling back with the domain and the
 * payload (the new status; null after a reconnect). A lost connection is opened again after a
 * pause. When notifications do not arrive (a transaction-mode pooler between us and PostgreSQL: the
 * {@code LISTEN} runs on a server connection we do not keep), it warns once and stops: the pool
 * then polls. Detected by notifying the pool's own probe channel after listening and waiting for
 * it.
 */
final class Wakeups implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Wakeups.class);
  private static final Duration PROBE_WAIT = Duration.ofSeconds(2);
  private static final Duration RECONNECT_PAUSE = Duration.ofSeconds(1);

  private final DataSource dataSource;
  private final Map<String, String> domainByChannel;
  private final BiConsumer<String, String> wake;
  private final String probe = "ledger_probe_" + UUID.randomUUID().toString().replace("-", "");
  private final Thread thread;
  private volatile boolean closed;
  private volatile boolean listening;
  private volatile Connection connection;

  Wakeups(
      DataSource dataSource,
      Collection<String> domains,
      String name,
      BiConsumer<String, String> wake) {
    this.dataSource = dataSource;
    this.domainByChannel =
        domains.stream()
            .collect(Collectors.toMap(d -> DomainSchemas.schemaName(d), d -> d, (a, b) -> a));
    this.wake = wake;
    this.thread = new Thread(this::run, name);
    this.thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  /** Whether notifications are arriving on a listening connection now. */
  boolean listening() {
    return listening;
  }

  private void run() {
    boolean warnedDown = false;
    while (!closed) {
      try (Connection c = dataSource.getConnection()) {
        connection = c;
        c.setAutoCommit(true);
        DSLContext ctx = DSL.using(c, SQLDialect.POSTGRES);
        for (String channel : domainByChannel.keySet()) {
          ctx.query("LISTEN {0}", DSL.name(channel)).execute();
        }
        ctx.query("LISTEN {0}", DSL.name(probe)).execute();
        PGConnection pg = c.unwrap(PGConnection.class);
        if (!probe(ctx, pg)) {
          LOG.warn(
              "ledger worker: LISTEN/NOTIFY does not reach this connection (a transaction-mode"
                  + " pooler?); polling instead");
          return;
        }
        listening = true;
        warnedDown = false;
        LOG.debug("ledger worker: listening on {} channels", domainByChannel.size());
        // every domain may have had work admitted while we were not listening
        domainByChannel.values().forEach(d -> wake.accept(d, null));
        while (!closed) {
          PGNotification[] got = pg.getNotifications(500);
          if (got == null) {
            continue;
          }
          for (PGNotification n : got) {
            String domain = domainByChannel.get(n.getName());
            if (domain != null) {
              wake.accept(domain, n.getParameter());
            }
          }
        }
      } catch (SQLException | RuntimeException e) {
        listening = false;
        if (closed) {
          return;
        }
        if (!warnedDown) {
          LOG.warn(
              "ledger worker: listening connection lost ({}); polling until it is back",
              e.getClass().getSimpleName());
          warnedDown = true;
        }
        try {
          Thread.sleep(RECONNECT_PAUSE.toMillis());
        } catch (InterruptedException ie) {
          return;
        }
      } finally {
        listening = false;
        connection = null;
      }
    }
  }

  /** Notifies the probe channel from another session and waits for it on the listening one. */
  private boolean probe(DSLContext listener, PGConnection pg) throws SQLException {
    try (Connection other = dataSource.getConnection()) {
      other.setAutoCommit(true);
      DSL.using(other, SQLDialect.POSTGRES)
          .select(DSL.function("pg_notify", Object.class, DSL.val(probe), DSL.val("probe")))
          .fetch();
    }
    long end = System.nanoTime() + PROBE_WAIT.toNanos();
    while (System.nanoTime() < end && !closed) {
      PGNotification[] got = pg.getNotifications(100);
      if (got != null) {
        for (PGNotification n : got) {
          if (probe.equals(n.getName())) {
            return true;
          }
          String domain = domainByChannel.get(n.getName());
          if (domain != null) {
            wake.accept(domain, n.getParameter());
          }
        }
      }
    }
    return false;
  }

  @Override
  public void close() {
    closed = true;
    thread.interrupt();
    try {
      thread.join(2000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    Connection c = connection;
    if (c != null && thread.isAlive()) {
      try {
        c.abort(Runnable::run);
      } catch (SQLException | RuntimeException e) {
        LOG.debug("ledger worker: aborting the listening connection failed", e);
      }
    }
  }
}
