package dev.ledger.feed;

import dev.ledger.InvalidInputException;
import dev.ledger.Ledger;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.worker.Wakeups;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A follower: one thread that holds a consumer's leases, reads its events and calls a {@link
 * FeedHandler} with each batch, committing the checkpoint in the handler's transaction. It waits
 * for new events on {@code LISTEN ledger_feed} (domain migration V11 notifies it when a followed
 * domain gets events), polling every {@link Builder#pollInterval} as well, and on the pooler rules
 * of the worker pool's wake-ups: behind a transaction-mode pooler, or with a data source of one
 * connection, it polls only. A second runner of the same consumer waits for the first's leases and
 * takes over within a lease when the first stops or dies.
 *
 * <pre>{@code
 * FeedRunner runner = FeedRunner.builder(ledger, FeedSpec.builder("mailer", "orders").build(),
 *         dataSource, (events, tx) -> events.forEach(mailer::send))
 *     .build();
 * runner.start();
 * ...
 * runner.close();   // finishes the batch in hand, gives the leases back
 * }</pre>
 *
 * <p>Thread-safe: {@link #close()} and the counters may be called from any thread.
 */
public final class FeedRunner implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(FeedRunner.class);

  /** The channel domain migration V11's trigger notifies, with the domain schema as payload. */
  public static final String CHANNEL = "ledger_feed";

  private final Ledger ledger;
  private final FeedSpec spec;
  private final DataSource dataSource;
  private final FeedHandler handler;
  private final Duration pollInterval;
  private final Duration stopTimeout;
  private final boolean listen;
  private final boolean acceptLoss;
  private final Set<String> schemas;
  private final Thread thread;
  private final Object signal = new Object();
  private final AtomicLong delivered = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  private final AtomicLong erased = new AtomicLong();
  private final AtomicLong lossesAccepted = new AtomicLong();
  private final AtomicLong batches = new AtomicLong();
  private volatile boolean stopping;
  private volatile boolean woken;
  private volatile Feed feed;
  private Wakeups wakeups;

  private FeedRunner(Builder b) {
    this.ledger = b.ledger;
    this.spec = b.spec;
    this.dataSource = b.dataSource;
    this.handler = b.handler;
    this.pollInterval = b.pollInterval;
    this.stopTimeout = b.stopTimeout;
    this.listen = b.listen;
    this.acceptLoss = b.acceptLoss;
    this.schemas =
        spec.domains().stream().map(DomainSchemas::schemaName).collect(Collectors.toSet());
    this.thread = new Thread(this::run, "ledger-feed-" + spec.consumer());
    this.thread.setDaemon(true);
  }

  /**
   * A builder: polling every second besides the wake-ups, waiting up to 30 s for the batch in hand
   * when stopping.
   *
   * @param ledger the ledger, not null
   * @param spec the consumer and its domains, not null
   * @param dataSource where the handler's transactions (and the listening connection) come from:
   *     the ledger's, not null; at least 2 connections for wake-ups
   * @param handler what is called with each batch, not null
   * @return the builder
   */
  public static Builder builder(
      Ledger ledger, FeedSpec spec, DataSource dataSource, FeedHandler handler) {
    return new Builder(ledger, spec, dataSource, handler);
  }

  /** Starts following. Call once. */
  public void start() {
    if (listen) {
      wakeups =
          Wakeups.onChannels(
              dataSource,
              Map.of(CHANNEL, CHANNEL),
              "ledger-feed-listen-" + spec.consumer(),
              "ledger feed",
              (channel, schema) -> {
                if (schema == null || schemas.contains(schema)) {
                  wake();
                }
              });
      wakeups.start();
    }
    thread.start();
  }

  /**
   * How many times the runner accepted a loss to retention ({@link Builder#acceptLoss(boolean)}).
   *
   * @return the count since start
   */
  public long lossesAccepted() {
    return lossesAccepted.get();
  }

  /**
   * How many {@code erased} items the handler took ({@link FeedHandler#erased}) and whose
   * checkpoint committed.
   *
   * @return the count since start
   */
  public long erased() {
    return erased.get();
  }

  /**
   * How many events the handler took and whose checkpoint committed.
   *
   * @return the count since start
   */
  public long delivered() {
    return delivered.get();
  }

  /**
   * How many batches failed: the handler threw, a checkpoint was refused (the lease was taken), the
   * consumer is behind the retention horizon ({@link FeedBehindRetentionException}, counted at
   * every poll until the loss is accepted) or the database failed.
   *
   * @return the count since start
   */
  public long failures() {
    return failures.get();
  }

  /**
   * How many batches committed.
   *
   * @return the count since start
   */
  public long batches() {
    return batches.get();
  }

  /**
   * The consumer's lag in each of its domains ({@link Feed#lag()}), read now.
   *
   * @return one entry per domain
   * @throws dev.ledger.LedgerStorageException when the database fails
   */
  public List<FeedLag> lag() {
    return ledger.feed(spec).lag();
  }

  /**
   * Whether the runner holds the lease of every domain now (as far as it knows).
   *
   * @return true when it holds them all
   */
  public boolean holdsAll() {
    Feed f = feed;
    return f != null && f.held().size() == spec.domains().size();
  }

  private void wake() {
    synchronized (signal) {
      woken = true;
      signal.notifyAll();
    }
  }

  /** Waits for a wake-up, the poll interval, or the stop; false when stopping. */
  private boolean pause(Duration d) {
    long end = System.nanoTime() + d.toNanos();
    synchronized (signal) {
      while (!woken && !stopping) {
        long left = end - System.nanoTime();
        if (left <= 0) {
          break;
        }
        try {
          signal.wait(Math.max(1, left / 1_000_000));
        } catch (InterruptedException e) {
          return false;
        }
      }
      woken = false;
    }
    return !stopping;
  }

  private void run() {
    Feed f = ledger.feed(spec);
    feed = f;
    try {
      while (!stopping) {
        try {
          f.acquire();
          if (f.held().isEmpty()) {
            // another reader of the consumer holds the leases: try again after a pause
            pause(shorter(pollInterval, spec.lease().dividedBy(4)));
            continue;
          }
          FeedBatch batch = f.poll();
          if (batch.isEmpty()) {
            pause(pollInterval);
            continue;
          }
          deliver(f, batch);
        } catch (FeedFencedException e) {
          failures.incrementAndGet();
          LOG.warn("ledger feed: {}", e.getMessage());
        } catch (FeedBehindRetentionException e) {
          if (acceptLoss) {
            // the builder's choice: go on past the gap, loudly
            LOG.warn("ledger feed: {}; accepting the loss (acceptLoss)", e.getMessage());
            try {
              f.acceptLoss(e.domain());
              lossesAccepted.incrementAndGet();
            } catch (RuntimeException a) {
              failures.incrementAndGet();
              LOG.warn(
                  "ledger feed {}: accepting the loss failed ({}); tried again after a pause",
                  spec.consumer(),
                  a.getClass().getSimpleName());
              pause(pollInterval);
            }
            continue;
          }
          // nothing is delivered until the consumer accepts the loss (Feed.acceptLoss)
          failures.incrementAndGet();
          LOG.error("ledger feed: {}", e.getMessage());
          pause(pollInterval);
        } catch (RuntimeException | SQLException e) {
          failures.incrementAndGet();
          LOG.warn(
              "ledger feed {}: a batch failed ({}: {}); it is delivered again after a pause",
              spec.consumer(),
              e.getClass().getSimpleName(),
              e.getMessage());
          pause(pollInterval);
        } catch (HandlerFailed e) {
          failures.incrementAndGet();
          LOG.warn(
              "ledger feed {}: the handler refused a batch ({}); it is delivered again after a"
                  + " pause",
              spec.consumer(),
              e.getCause().toString());
          pause(pollInterval);
        }
      }
    } finally {
      f.close();
    }
  }

  private void deliver(Feed f, FeedBatch batch) throws SQLException, HandlerFailed {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try {
        try {
          if (!batch.events().isEmpty()) {
            handler.handle(batch.events(), c);
          }
          if (!batch.erasures().isEmpty()) {
            handler.erased(batch.erasures(), c);
          }
        } catch (Exception e) {
          if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
          }
          throw new HandlerFailed(e);
        }
        f.commit(batch, c);
        c.commit();
      } catch (HandlerFailed | RuntimeException | SQLException e) {
        try {
          c.rollback();
        } catch (SQLException r) {
          e.addSuppressed(r);
        }
        throw e;
      } finally {
        try {
          c.setAutoCommit(true);
        } catch (SQLException e) {
          LOG.debug("ledger feed: resetting autocommit failed; the pool discards the connection");
        }
      }
    }
    delivered.addAndGet(batch.size());
    erased.addAndGet(batch.erasures().size());
    batches.incrementAndGet();
  }

  private static Duration shorter(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  /**
   * Stops: the batch in hand is finished (waited for up to the stop timeout, then interrupted), the
   * leases given back, the listening connection closed. Idempotent.
   */
  @Override
  public void close() {
    stopping = true;
    wake();
    try {
      thread.join(Math.max(1, stopTimeout.toMillis()));
      if (thread.isAlive()) {
        LOG.warn(
            "ledger feed {}: the handler did not finish within {}; interrupting it",
            spec.consumer(),
            stopTimeout);
        thread.interrupt();
        thread.join(2000);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      if (wakeups != null) {
        wakeups.close();
      }
    }
  }

  /** The handler threw: carried out of {@link #deliver} to be counted and paused on. */
  private static final class HandlerFailed extends Exception {
    private static final long serialVersionUID = 1L;

    HandlerFailed(Exception cause) {
      super(cause);
    }
  }

  /** Builds a {@link FeedRunner}; not thread-safe. */
  public static final class Builder {
    private final Ledger ledger;
    private final FeedSpec spec;
    private final DataSource dataSource;
    private final FeedHandler handler;
    private Duration pollInterval = Duration.ofSeconds(1);
    private Duration stopTimeout = Duration.ofSeconds(30);
    private boolean listen = true;
    private boolean acceptLoss;

    private Builder(Ledger ledger, FeedSpec spec, DataSource dataSource, FeedHandler handler) {
      this.ledger = ledger;
      this.spec = spec;
      this.dataSource = dataSource;
      this.handler = handler;
    }

    /**
     * Sets how often the runner reads when no wake-up came (and retries after a failure).
     *
     * @param interval 10 ms to 1 h
     * @return this builder
     */
    public Builder pollInterval(Duration interval) {
      this.pollInterval = interval;
      return this;
    }

    /**
     * Sets how long {@link FeedRunner#close()} waits for the batch in hand.
     *
     * @param timeout 0 to 1 h
     * @return this builder
     */
    public Builder stopTimeout(Duration timeout) {
      this.stopTimeout = timeout;
      return this;
    }

    /**
     * Sets whether the runner listens for wake-ups (true, the default) or only polls.
     *
     * @param listen false to poll only
     * @return this builder
     */
    public Builder listen(boolean listen) {
      this.listen = listen;
      return this;
    }

    /**
     * Whether the runner goes on past events a retention purge removed before the consumer received
     * them: on {@link FeedBehindRetentionException} it calls {@link Feed#acceptLoss(String)}, logs
     * a warning and reads on. Default false: every poll is then refused and counted as a failure
     * until someone accepts the loss.
     *
     * @param accept true to accept such losses as they come
     * @return this builder
     */
    public Builder acceptLoss(boolean accept) {
      this.acceptLoss = accept;
      return this;
    }

    /**
     * Builds the runner, not started.
     *
     * @return the runner
     * @throws InvalidInputException naming the field that is missing or out of range ({@code
     *     dataSource} also for a HikariCP pool of one connection while listening)
     */
    public FeedRunner build() {
      if (ledger == null) {
        throw new InvalidInputException("ledger", "must not be null");
      }
      if (spec == null) {
        throw new InvalidInputException("spec", "must not be null");
      }
      if (dataSource == null) {
        throw new InvalidInputException("dataSource", "must not be null");
      }
      if (handler == null) {
        throw new InvalidInputException("handler", "must not be null");
      }
      if (pollInterval == null
          || pollInterval.compareTo(Duration.ofMillis(10)) < 0
          || pollInterval.compareTo(Duration.ofHours(1)) > 0) {
        throw new InvalidInputException("pollInterval", "must be 10 ms to 1 h");
      }
      if (stopTimeout == null
          || stopTimeout.isNegative()
          || stopTimeout.compareTo(Duration.ofHours(1)) > 0) {
        throw new InvalidInputException("stopTimeout", "must be 0 to 1 h");
      }
      if (listen) {
        Wakeups.requireRoomToListen(dataSource);
      }
      return new FeedRunner(this);
    }
  }
}
