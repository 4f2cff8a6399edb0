package dev.ledger;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.jooq.ExecuteListener;

/**
 * How a {@link Ledger} runs; immutable once built, validated in {@link Builder#build()}.
 *
 * <pre>{@code
 * LedgerConfig config = LedgerConfig.builder().directorySchema("public").runtimeDdl(false).build();
 * }</pre>
 *
 * @param directorySchema the schema of the routing tables, unquoted; {@code public} by default
 * @param runtimeDdl whether the ledger may create a new domain's schema (and migrate the directory)
 *     itself; when false, an unknown domain is a {@link SchemaVersionException} that says to run
 *     the migration job. True by default
 * @param clock the time source for event times and leases; the system UTC clock by default
 * @param executeListeners jOOQ listeners added to every statement (logging, tests); none by default
 * @param timeouts the bounds on every wait of a call (lock, statement, network, connect); {@link
 *     Timeouts#defaults()} by default
 */
public record LedgerConfig(
    String directorySchema,
    boolean runtimeDdl,
    Clock clock,
    List<ExecuteListener> executeListeners,
    Timeouts timeouts) {

  private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]{0,62}");

  /** Validates, see {@link Builder#build()}. */
  public LedgerConfig {
    if (directorySchema == null || !IDENTIFIER.matcher(directorySchema).matches()) {
      throw new InvalidInputException(
          "directorySchema",
          "must be a lowercase PostgreSQL identifier ([a-z_][a-z0-9_]*, at most 63 bytes)");
    }
    if (clock == null) {
      throw new InvalidInputException("clock", "must not be null");
    }
    executeListeners = List.copyOf(executeListeners == null ? List.of() : executeListeners);
    if (timeouts == null) {
      throw new InvalidInputException("timeouts", "must not be null");
    }
  }

  /**
   * The configuration of before the timeouts, with {@link Timeouts#defaults()}.
   *
   * @param directorySchema the directory schema
   * @param runtimeDdl whether runtime DDL is allowed
   * @param clock the clock
   * @param executeListeners jOOQ listeners
   * @deprecated use {@link #builder()}, or the canonical constructor with {@link Timeouts}
   */
  @Deprecated
  public LedgerConfig(
      String directorySchema,
      boolean runtimeDdl,
      Clock clock,
      List<ExecuteListener> executeListeners) {
    this(directorySchema, runtimeDdl, clock, executeListeners, Timeouts.defaults());
  }

  /**
   * The defaults: directory {@code public}, runtime DDL allowed, system UTC clock, {@link
   * Timeouts#defaults()}.
   *
   * @return the default configuration
   */
  public static LedgerConfig defaults() {
    return builder().build();
  }

  /**
   * A builder starting from the defaults.
   *
   * @return the builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Builds a {@link LedgerConfig}; not thread-safe. */
  public static final class Builder {
    private String directorySchema = "public";
    private boolean runtimeDdl = true;
    private Clock clock = Clock.systemUTC();
    private final List<ExecuteListener> listeners = new ArrayList<>();
    private Timeouts timeouts = Timeouts.defaults();

    private Builder() {}

    /**
     * Sets the directory schema.
     *
     * @param schema lowercase identifier, e.g. {@code public}
     * @return this
     */
    public Builder directorySchema(String schema) {
      this.directorySchema = schema;
      return this;
    }

    /**
     * Allows or forbids runtime DDL.
     *
     * @param allowed false for deployments whose runtime role may not run DDL
     * @return this
     */
    public Builder runtimeDdl(boolean allowed) {
      this.runtimeDdl = allowed;
      return this;
    }

    /**
     * Sets the clock.
     *
     * @param clock the time source, not null
     * @return this
     */
    public Builder clock(Clock clock) {
      this.clock = clock;
      return this;
    }

    /**
     * Adds a jOOQ execute listener.
     *
     * @param listener the listener, not null
     * @return this
     */
    public Builder executeListener(ExecuteListener listener) {
      this.listeners.add(listener);
      return this;
    }

    /**
     * Sets the bounds on every wait of a call.
     *
     * @param timeouts the bounds, not null; e.g. {@code Timeouts.defaults().withLock(...)}
     * @return this
     */
    public Builder timeouts(Timeouts timeouts) {
      this.timeouts = timeouts;
      return this;
    }

    /**
     * Builds and validates.
     *
     * @return the configuration
     * @throws InvalidInputException naming the invalid setting
     */
    public LedgerConfig build() {
      return new LedgerConfig(directorySchema, runtimeDdl, clock, listeners, timeouts);
    }
  }
}
