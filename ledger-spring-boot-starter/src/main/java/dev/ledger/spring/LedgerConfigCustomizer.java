package dev.ledger.spring;

import dev.ledger.LedgerConfig;

/**
 * A bean that adjusts the {@link LedgerConfig} the starter builds from the {@code ledger.*}
 * properties before the {@code Ledger} bean opens: a clock, jOOQ execute listeners. Customizers run
 * in their {@code @Order}; each is called once, on the thread that starts the context.
 *
 * <pre>{@code
 * @Bean
 * LedgerConfigCustomizer tracing(MyListener listener) {
 *   return builder -> builder.executeListener(listener);
 * }
 * }</pre>
 */
@FunctionalInterface
public interface LedgerConfigCustomizer {

  /**
   * Adjusts the configuration being built.
   *
   * @param builder holds the directory schema and runtime DDL from the properties, not null
   */
  void customize(LedgerConfig.Builder builder);
}
