package dev.ledger.worker;

import com.zaxxer.hikari.HikariConfigMXBean;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import dev.ledger.InvalidInputException;
import dev.ledger.schema.DomainSchemas;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
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
 * {@code LISTEN} runs on a server connection we do not keep; or a server too busy to deliver the
 * probe within {@link #PROBE_WAIT}), it warns once, gives the connection back and tries again every
 * {@link #RELISTEN_MAX_PAUSE}: the pool polls meanwhile. Detected by notifying the pool's own probe
 * channel after listening and waiting for it. When the data source has no second connection for
 * that probe, it gives the listening one back, warns once, polls, and tries again later (a HikariCP
 * pool: once it has room for two connections; any other data source: after waits that double up to
 * a minute). A connection goes back to the data source unsubscribed ({@code UNLISTEN *}).
 *
 * <p>Public for the event feed ({@code dev.ledger.feed.FeedRunner}), which listens on a channel of
 * its own through {@link #onChannels}; not meant for applications. Thread-safe.
 */
public final class Wakeups implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Wakeups.class);
  private static final Duration PROBE_WAIT = Duration.ofSeconds(2);
  private static final Duration RECONNECT_PAUSE = Duration.ofSeconds(1);

  /**
   * How often a pool whose data source had no second connection for the probe tries to listen
   * again.
   */
  static final Duration RELISTEN_PAUSE = Duration.ofSeconds(2);

  /** The longest wait between two such tries on a data source that does not say its room. */
  static final Duration RELISTEN_MAX_PAUSE = Duration.ofMinutes(1);

  private final DataSource dataSource;
  private final Map<String, String> domainByChannel;
  private final String what;
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
    this(
        dataSource,
        domains.stream()
            .collect(Collectors.toMap(d -> DomainSchemas.schemaName(d), d -> d, (a, b) -> a)),
        name,
        "ledger worker",
        wake);
  }

  private Wakeups(
      DataSource dataSource,
      Map<String, String> keyByChannel,
      String name,
      String what,
      BiConsumer<String, String> wake) {
    this.dataSource = dataSource;
    this.domainByChannel = Map.copyOf(keyByChannel);
    this.what = what;
    this.wake = wake;
    this.thread = new Thread(this::run, name);
    this.thread.setDaemon(true);
  }

  /**
   * Wake-ups on channels of the caller's choosing, not started yet.
   *
   * @param dataSource the data source the listening connection (and the probe's) come from, not
   *     null
   * @param keyByChannel each channel (an identifier, quoted when listened on) and the key the
   *     callback is given for it, not empty
   * @param name the listening thread's name
   * @param what who listens, the prefix of the log lines, e.g. {@code ledger feed}
   * @param wake called on the listening thread with the channel's key and the payload (null after
   *     the listening connection was opened again: anything may have been missed); must be quick
   * @return the wake-ups; {@link #start()} them, {@link #close()} them
   */
  public static Wakeups onChannels(
      DataSource dataSource,
      Map<String, String> keyByChannel,
      String name,
      String what,
      BiConsumer<String, String> wake) {
    return new Wakeups(dataSource, keyByChannel, name, what, wake);
  }

  /** Starts the listening thread. Call once. */
  public void start() {
    thread.start();
  }

  /**
   * Refuses a data source that cannot give the listening connection and one more: the listening
   * connection is held for the pool's life, so with a pool of one connection every claim would wait
   * for it (HikariCP's connection timeout, then a failed claim, over and over), and the start's
   * probe (a {@code NOTIFY} from a second connection) could never run. Only a HikariCP pool (or one
   * wrapping it, as Spring's proxies do) says its size; any other data source passes.
   *
   * @param dataSource the pool's data source for wake-ups
   * @throws InvalidInputException naming {@code dataSource} for a HikariCP pool of fewer than 2
   *     connections
   */
  public static void requireRoomToListen(DataSource dataSource) {
    HikariConfigMXBean hikari;
    try {
      hikari =
          dataSource.isWrapperFor(HikariConfigMXBean.class)
              ? dataSource.unwrap(HikariConfigMXBean.class)
              : null;
    } catch (SQLException | RuntimeException e) {
      return; // a data source that cannot say: nothing to check
    }
    if (hikari != null && hikari.getMaximumPoolSize() < 2) {
      throw new InvalidInputException(
          "dataSource",
          "a HikariCP pool of "
              + hikari.getMaximumPoolSize()
              + " connection cannot serve a worker pool's wake-ups: the listening connection is"
              + " held for good and every claim would wait for it. Give it at least 2 connections"
              + " (one listens), or no data source to poll only");
    }
  }

  /**
   * Whether notifications are arriving on a listening connection now.
   *
   * @return true while listening; false while polling instead
   */
  public boolean listening() {
    return listening;
  }

  private void run() {
    boolean warnedDown = false;
    boolean warnedNoRoom = false;
    int noRoom = 0; // tries in a row that found no second connection
    boolean unreached = false; // the last probe did not arrive
    while (!closed) {
      if (noRoom > 0 && !waitForRoom(noRoom)) {
        return;
      }
      if (unreached && !pause(RELISTEN_MAX_PAUSE)) {
        return;
      }
      try (Connection c = dataSource.getConnection()) {
        connection = c;
        try {
          c.setAutoCommit(true);
          DSLContext ctx = DSL.using(c, SQLDialect.POSTGRES);
          for (String channel : domainByChannel.keySet()) {
            ctx.query("LISTEN {0}", DSL.name(channel)).execute();
          }
          ctx.query("LISTEN {0}", DSL.name(probe)).execute();
          PGConnection pg = c.unwrap(PGConnection.class);
          boolean arrives;
          try {
            arrives = probe(ctx, pg);
          } catch (NoRoomToListen e) {
            noRoom++;
            if (!warnedNoRoom) {
              LOG.warn(
                  what
                      + ": the data source gave no second connection while the listening"
                      + " one was held ({}); the listening connection is given back and the pool"
                      + " polls, trying to listen again from time to time. Give it at least 2"
                      + " connections for wake-ups",
                  e.getCause().getClass().getSimpleName());
              warnedNoRoom = true;
            }
            continue;
          }
          if (!arrives) {
            if (!unreached) {
              LOG.warn(
                  what
                      + ": LISTEN/NOTIFY does not reach this connection within {} s (a"
                      + " transaction-mode pooler, or a very busy server?); polling instead, and"
                      + " probing again every {} s",
                  PROBE_WAIT.toSeconds(),
                  RELISTEN_MAX_PAUSE.toSeconds());
              unreached = true;
            }
            continue; // the connection goes back before the pause
          }
          if (unreached) {
            LOG.info(what + ": notifications arrive now; listening instead of polling");
            unreached = false;
          }
          listening = true;
          noRoom = 0;
          warnedDown = false;
          if (warnedNoRoom) {
            LOG.info(what + ": a connection came free; listening again instead of polling");
            warnedNoRoom = false;
          }
          LOG.debug(what + ": listening on {} channels", domainByChannel.size());
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
        } finally {
          listening = false;
          unlisten(c);
        }
      } catch (SQLException | RuntimeException e) {
        listening = false;
        if (closed) {
          return;
        }
        if (!warnedDown) {
          LOG.warn(
              what + ": listening connection lost ({}); polling until it is back",
              e.getClass().getSimpleName());
          warnedDown = true;
        }
        if (!pause(RECONNECT_PAUSE)) {
          return;
        }
      } finally {
        listening = false;
        connection = null;
      }
    }
  }

  /**
   * Unsubscribes a listening connection before it goes back to the caller's pool, which would
   * otherwise hand it out still subscribed to the domains' and the probe's channels (its session
   * queueing their notifications for whoever borrows it next). A broken connection is left as it
   * is: the pool discards it.
   */
  private static void unlisten(Connection c) {
    boolean interrupted = Thread.interrupted(); // close() interrupts; the statement must still run
    try {
      if (!c.isClosed()) {
        DSL.using(c, SQLDialect.POSTGRES).query("UNLISTEN *").execute();
      }
    } catch (SQLException | RuntimeException e) {
      LOG.debug("ledger worker: unsubscribing the listening connection failed", e);
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Waits until it is worth trying to listen again after the data source had no second connection.
   * A HikariCP pool is asked every {@link #RELISTEN_PAUSE} until it has room for two connections
   * (idle ones, or room to open them), so a try does not hold one connection while it waits for
   * another, starving the claims meanwhile. Any other data source cannot say, so the waits between
   * tries double from {@link #RELISTEN_PAUSE} to {@link #RELISTEN_MAX_PAUSE}: each try may hold a
   * connection for the data source's own timeout.
   *
   * @param tries how many tries found no room so far, from 1
   * @return false when the pool closed meanwhile
   */
  private boolean waitForRoom(int tries) {
    HikariDataSource hikari = hikari();
    if (hikari == null) {
      Duration pause = RELISTEN_PAUSE.multipliedBy(1L << Math.min(tries - 1, 8));
      return pause(pause.compareTo(RELISTEN_MAX_PAUSE) > 0 ? RELISTEN_MAX_PAUSE : pause);
    }
    do {
      if (!pause(RELISTEN_PAUSE)) {
        return false;
      }
    } while (!closed && room(hikari) < 2);
    return !closed;
  }

  /** How many connections a HikariCP pool could lend now: idle ones, and ones it may open. */
  private static int room(HikariDataSource hikari) {
    HikariPoolMXBean pool = hikari.getHikariPoolMXBean();
    if (pool == null) {
      return 0;
    }
    return pool.getIdleConnections()
        + Math.max(0, hikari.getMaximumPoolSize() - pool.getTotalConnections());
  }

  private HikariDataSource hikari() {
    try {
      if (dataSource.isWrapperFor(HikariDataSource.class)) {
        return dataSource.unwrap(HikariDataSource.class);
      }
    } catch (SQLException | RuntimeException e) {
      LOG.debug("ledger worker: the data source does not say its pool's state", e);
    }
    return null;
  }

  /** Sleeps; false when interrupted (the pool closes). */
  private boolean pause(Duration pause) {
    try {
      Thread.sleep(pause.toMillis());
      return !closed;
    } catch (InterruptedException ie) {
      return false;
    }
  }

  /**
   * Notifies the probe channel from another session and waits for it on the listening one. A data
   * source that gives no second connection while the listening one is held (a pool of one, which
   * {@link #requireRoomToListen} cannot see in a pool other than HikariCP) would starve the claims
   * the same way: it is reported as such, and the pool polls.
   */
  private boolean probe(DSLContext listener, PGConnection pg) throws SQLException {
    try (Connection other = dataSource.getConnection()) {
      other.setAutoCommit(true);
      DSL.using(other, SQLDialect.POSTGRES)
          .select(DSL.function("pg_notify", Object.class, DSL.val(probe), DSL.val("probe")))
          .fetch();
    } catch (SQLTransientConnectionException e) {
      throw new NoRoomToListen(e);
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

  /** The probe's second connection was refused: the data source has no room for it. */
  private static final class NoRoomToListen extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NoRoomToListen(SQLTransientConnectionException cause) {
      super(cause);
    }
  }

  /** Stops listening: the thread ends (waited for up to 2 s), the connection goes back. */
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
