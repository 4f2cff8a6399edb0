package dev.ledger.feed;

import dev.ledger.InvalidInputException;
import dev.ledger.Validation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.UUID;

/**
 * What a feed reader follows: a named consumer, the domains it reads, and how. Immutable; build one
 * with {@link #builder(String, String...)}.
 *
 * <pre>{@code
 * FeedSpec spec = FeedSpec.builder("search-index", "payments")
 *     .batchSize(500).lease(Duration.ofSeconds(30)).fromStart(true).build();
 * }</pre>
 *
 * @param consumer the consumer's name (its checkpoints are kept under it), 1 to 200 characters
 * @param domains the domains it reads, at least one, no duplicates, in the order given
 * @param batchSize the most events a {@link Feed#poll()} returns per domain, 1 to 10,000
 * @param lease how long a reader's lease of a domain lasts without renewal (every poll and commit
 *     renews it), 1 s to 1 h
 * @param holder this reader's name, shown in the consumer's row (default: a random one)
 * @param fromStart where a consumer with no checkpoint yet in a domain starts: at the domain's
 *     first event (true), or at the events written from its first lease on (false)
 */
public record FeedSpec(
    String consumer,
    List<String> domains,
    int batchSize,
    Duration lease,
    String holder,
    boolean fromStart) {

  /** The longest consumer and holder name, in characters. */
  public static final int MAX_NAME_LENGTH = 200;

  /** The largest batch. */
  public static final int MAX_BATCH_SIZE = 10_000;

  /**
   * Checks and copies the fields.
   *
   * @throws InvalidInputException naming the field that is out of range
   */
  public FeedSpec {
    name("consumer", consumer);
    name("holder", holder);
    if (domains == null || domains.isEmpty()) {
      throw new InvalidInputException("domains", "must name at least one domain");
    }
    for (String d : domains) {
      Validation.domain(d);
    }
    if (new LinkedHashSet<>(domains).size() != domains.size()) {
      throw new InvalidInputException("domains", "must not name a domain twice");
    }
    domains = Collections.unmodifiableList(new ArrayList<>(domains));
    if (batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
      throw new InvalidInputException("batchSize", "must be 1 to " + MAX_BATCH_SIZE);
    }
    if (lease == null
        || lease.compareTo(Duration.ofSeconds(1)) < 0
        || lease.compareTo(Duration.ofHours(1)) > 0) {
      throw new InvalidInputException("lease", "must be 1 s to 1 h");
    }
  }

  private static void name(String field, String value) {
    if (value == null || value.isEmpty()) {
      throw new InvalidInputException(field, "must not be empty");
    }
    if (value.codePointCount(0, value.length()) > MAX_NAME_LENGTH) {
      throw new InvalidInputException(field, "longer than " + MAX_NAME_LENGTH + " characters");
    }
    if (value.indexOf('\0') >= 0) {
      throw new InvalidInputException(field, "must not contain U+0000 (NUL)");
    }
  }

  /**
   * A builder with the defaults: batches of 500, a lease of 30 s, a random holder name, new
   * consumers starting at the events written from their first lease on.
   *
   * @param consumer the consumer's name
   * @param domains the domains, at least one
   * @return the builder
   */
  public static Builder builder(String consumer, String... domains) {
    return new Builder(consumer, domains == null ? List.of() : java.util.Arrays.asList(domains));
  }

  /**
   * A builder with the defaults of {@link #builder(String, String...)}.
   *
   * @param consumer the consumer's name
   * @param domains the domains, at least one, not null
   * @return the builder
   */
  public static Builder builder(String consumer, List<String> domains) {
    return new Builder(consumer, domains);
  }

  /** Builds a {@link FeedSpec}; not thread-safe. */
  public static final class Builder {
    private final String consumer;
    private final List<String> domains;
    private int batchSize = 500;
    private Duration lease = Duration.ofSeconds(30);
    private String holder = "reader-" + UUID.randomUUID().toString().substring(0, 8);
    private boolean fromStart;

    private Builder(String consumer, List<String> domains) {
      this.consumer = consumer;
      this.domains = domains;
    }

    /**
     * Sets the most events a poll returns per domain.
     *
     * @param size 1 to {@value FeedSpec#MAX_BATCH_SIZE}
     * @return this builder
     */
    public Builder batchSize(int size) {
      this.batchSize = size;
      return this;
    }

    /**
     * Sets the lease a reader holds on each domain.
     *
     * @param lease 1 s to 1 h
     * @return this builder
     */
    public Builder lease(Duration lease) {
      this.lease = lease;
      return this;
    }

    /**
     * Sets this reader's name.
     *
     * @param holder 1 to 200 characters
     * @return this builder
     */
    public Builder holder(String holder) {
      this.holder = holder;
      return this;
    }

    /**
     * Sets where a consumer with no checkpoint starts.
     *
     * @param fromStart true: at the domain's first event; false: at the events written from now on
     * @return this builder
     */
    public Builder fromStart(boolean fromStart) {
      this.fromStart = fromStart;
      return this;
    }

    /**
     * Builds the spec.
     *
     * @return the spec
     * @throws InvalidInputException naming the field out of range
     */
    public FeedSpec build() {
      return new FeedSpec(
          consumer, domains == null ? List.of() : domains, batchSize, lease, holder, fromStart);
    }
  }
}
