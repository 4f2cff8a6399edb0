package dev.ledger.spring;

import dev.ledger.InvalidInputException;
import dev.ledger.Ledger;
import dev.ledger.feed.FeedRunner;
import dev.ledger.feed.FeedSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.sql.DataSource;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Runs the event feed ({@code dev.ledger.feed}) from handler beans: one {@link FeedRunner} per
 * {@link LedgerFeedHandler} bean over the starter's {@link Ledger}, polling every {@code
 * ledger.feed.poll-interval} (default 1 s) besides its LISTEN/NOTIFY wake-ups. The runners start
 * when the context has started and stop first when it stops, before the {@code DataSource} ({@link
 * LedgerFeedLifecycle}). With Micrometer on the class path and a {@code MeterRegistry} in the
 * context, each runner's meters are registered there: {@code ledger.feed.delivered} and {@code
 * ledger.feed.failures} (function counters, tag {@code consumer}) and {@code ledger.feed.lag} (a
 * gauge of the pending events, tags {@code consumer} and {@code domain}, read from the database
 * when sampled).
 *
 * <p>Only when the feed classes are on the class path, a {@code Ledger} and at least one handler
 * bean exist, and {@code ledger.feed.enabled} is not false. A {@code LedgerFeedLifecycle} bean of
 * the application's own replaces it.
 */
@AutoConfiguration(after = LedgerAutoConfiguration.class)
@ConditionalOnClass(name = "dev.ledger.feed.FeedRunner")
@ConditionalOnBean({Ledger.class, LedgerFeedHandler.class})
@ConditionalOnProperty(prefix = "ledger.feed", name = "enabled", matchIfMissing = true)
public class LedgerFeedAutoConfiguration {

  /** Created by Spring. */
  public LedgerFeedAutoConfiguration() {}

  /**
   * The runners' lifecycle over the handler beans.
   *
   * @param ledger the ledger
   * @param dataSource the service's data source: the handlers' transactions and the listening
   *     connection
   * @param handlers every {@link LedgerFeedHandler} bean
   * @param beans the context, for its {@code MeterRegistry}, looked up when the runners start
   * @param environment the context's properties, for {@code ledger.feed.poll-interval}
   * @return the lifecycle; the runners are built and started by {@link LedgerFeedLifecycle#start()}
   * @throws InvalidInputException naming {@code consumer} when two handler beans share a consumer
   */
  @Bean
  @ConditionalOnMissingBean
  public LedgerFeedLifecycle ledgerFeedLifecycle(
      Ledger ledger,
      DataSource dataSource,
      ObjectProvider<LedgerFeedHandler> handlers,
      ListableBeanFactory beans,
      Environment environment) {
    Duration pollInterval =
        Binder.get(environment)
            .bind("ledger.feed.poll-interval", Duration.class)
            .orElse(Duration.ofSeconds(1));
    List<LedgerFeedHandler> all = handlers.orderedStream().toList();
    Set<String> consumers = new HashSet<>();
    for (LedgerFeedHandler h : all) {
      if (!consumers.add(h.consumer())) {
        throw new InvalidInputException(
            "consumer", "two LedgerFeedHandler beans are consumer " + h.consumer());
      }
    }
    return new LedgerFeedLifecycle(
        () -> {
          List<FeedRunner> runners = new ArrayList<>();
          for (LedgerFeedHandler h : all) {
            FeedSpec spec =
                FeedSpec.builder(h.consumer(), h.domains()).fromStart(h.fromStart()).build();
            FeedRunner r =
                FeedRunner.builder(ledger, spec, dataSource, h).pollInterval(pollInterval).build();
            if (LedgerWorkerMeters.MICROMETER) {
              LedgerFeedMeters.register(beans, spec, r);
            }
            runners.add(r);
          }
          return runners;
        });
  }
}
