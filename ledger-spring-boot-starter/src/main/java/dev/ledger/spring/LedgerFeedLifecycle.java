package dev.ledger.spring;

import dev.ledger.feed.FeedRunner;
import java.util.List;
import java.util.function.Supplier;
import org.springframework.context.SmartLifecycle;

/**
 * Starts the feed runners when the application context has started and closes them when it stops.
 * It is in the last phase, so it starts after every other lifecycle bean and stops before them: no
 * handler runs on a half-started or half-stopped service, and each runner finishes its batch and
 * gives its leases back before the {@code DataSource} closes. Thread-safe.
 */
public class LedgerFeedLifecycle implements SmartLifecycle {

  private final Supplier<List<FeedRunner>> factory;
  private List<FeedRunner> runners;

  /**
   * Creates the lifecycle; nothing runs before {@link #start()}.
   *
   * @param factory builds the runners, not yet started; called by each {@link #start()}
   */
  public LedgerFeedLifecycle(Supplier<List<FeedRunner>> factory) {
    this.factory = factory;
  }

  /**
   * Builds and starts the runners.
   *
   * @throws dev.ledger.InvalidInputException naming the field of a handler's invalid settings
   */
  @Override
  public synchronized void start() {
    if (runners == null) {
      List<FeedRunner> rs = factory.get();
      rs.forEach(FeedRunner::start);
      runners = rs;
    }
  }

  /** Closes the runners: each finishes its batch in hand and gives its leases back. */
  @Override
  public synchronized void stop() {
    if (runners != null) {
      try {
        runners.forEach(FeedRunner::close);
      } finally {
        runners = null;
      }
    }
  }

  @Override
  public synchronized boolean isRunning() {
    return runners != null;
  }

  /**
   * The running runners.
   *
   * @return one per handler bean, or an empty list when not running
   */
  public synchronized List<FeedRunner> runners() {
    return runners == null ? List.of() : List.copyOf(runners);
  }
}
