package dev.ledger.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code ledger.*} properties of the starter, bound by Spring Boot. Mutable bean for binding;
 * read once, when the context starts. Their metadata (for IDE completion) is generated from this
 * class into {@code META-INF/spring-configuration-metadata.json}.
 *
 * <pre>
 * ledger.directory-schema=public
 * ledger.runtime-ddl=true
 * ledger.migration.enabled=true
 * ledger.migration.order=after-flyway
 * ledger.migration.domains=orders,payments
 * management.health.ledger.enabled=true
 * </pre>
 */
@ConfigurationProperties(prefix = "ledger")
public class LedgerProperties {

  /** Whether the starter configures a Ledger at all. */
  private boolean enabled = true;

  /**
   * Schema of the ledger's routing tables (the directory), unquoted, lowercase. The ledger's
   * history table there is ledger_directory_history, so it never collides with the service's own
   * flyway_schema_history in the same schema.
   */
  private String directorySchema = "public";

  /**
   * Whether the ledger may create a new domain's schema on its first filing (and migrate the
   * directory when it opens). Turn off when the service's database role may not run DDL; then
   * provision domains ahead (ledger.migration.domains or the migration job).
   */
  private boolean runtimeDdl = true;

  private final Migration migration = new Migration();

  private final Timeouts timeouts = new Timeouts();

  /**
   * Whether the starter configures a Ledger.
   *
   * @return true by default
   */
  public boolean isEnabled() {
    return enabled;
  }

  /**
   * Sets whether the starter configures a Ledger.
   *
   * @param enabled false to configure nothing
   */
  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  /**
   * The directory schema.
   *
   * @return unquoted, e.g. {@code public}
   */
  public String getDirectorySchema() {
    return directorySchema;
  }

  /**
   * Sets the directory schema; validated when the ledger is built ({@link
   * dev.ledger.InvalidInputException} naming {@code directorySchema}).
   *
   * @param directorySchema lowercase identifier
   */
  public void setDirectorySchema(String directorySchema) {
    this.directorySchema = directorySchema;
  }

  /**
   * Whether runtime DDL is allowed.
   *
   * @return true by default
   */
  public boolean isRuntimeDdl() {
    return runtimeDdl;
  }

  /**
   * Sets whether runtime DDL is allowed.
   *
   * @param runtimeDdl false for a runtime role without DDL rights
   */
  public void setRuntimeDdl(boolean runtimeDdl) {
    this.runtimeDdl = runtimeDdl;
  }

  /**
   * The startup migration settings.
   *
   * @return never null
   */
  public Migration getMigration() {
    return migration;
  }

  /**
   * The bounds on every wait of a ledger call ({@code ledger.timeouts.*}).
   *
   * @return never null
   */
  public Timeouts getTimeouts() {
    return timeouts;
  }

  /**
   * The bounds on every wait of a ledger call ({@link dev.ledger.Timeouts}); each is a Spring
   * duration ({@code 5s}, {@code 250ms}), checked when the ledger is built ({@link
   * dev.ledger.InvalidInputException} naming it).
   */
  public static class Timeouts {

    /** How long a statement may wait for a lock another transaction holds ("task busy"). */
    private Duration lock = dev.ledger.Timeouts.defaults().lock();

    /** How long one statement may run on the server. */
    private Duration statement = dev.ledger.Timeouts.defaults().statement();

    /** How long to wait for the server to answer at all ("database unreachable"). */
    private Duration network = dev.ledger.Timeouts.defaults().network();

    /**
     * The lock bound.
     *
     * @return 5 s by default
     */
    public Duration getLock() {
      return lock;
    }

    /**
     * Sets the lock bound.
     *
     * @param lock positive
     */
    public void setLock(Duration lock) {
      this.lock = lock;
    }

    /**
     * The statement bound.
     *
     * @return 30 s by default
     */
    public Duration getStatement() {
      return statement;
    }

    /**
     * Sets the statement bound.
     *
     * @param statement positive
     */
    public void setStatement(Duration statement) {
      this.statement = statement;
    }

    /**
     * The network bound.
     *
     * @return 45 s by default
     */
    public Duration getNetwork() {
      return network;
    }

    /**
     * Sets the network bound.
     *
     * @param network positive
     */
    public void setNetwork(Duration network) {
      this.network = network;
    }

    /**
     * These bounds as the ledger's value; getting a connection is bounded by the service's pool
     * ({@code spring.datasource.hikari.connection-timeout}).
     *
     * @return the value
     * @throws dev.ledger.InvalidInputException naming the bound that is not positive
     */
    public dev.ledger.Timeouts toTimeouts() {
      return dev.ledger.Timeouts.defaults()
          .withLock(lock)
          .withStatement(statement)
          .withNetwork(network);
    }
  }

  /** When the ledger's own schema is migrated at startup, relative to the service's Flyway. */
  public enum Order {
    /**
     * After Spring Boot's Flyway auto-configuration has migrated the service's own schema: on a
     * fresh database the service's Flyway finds its schema empty and applies its V1. The default.
     */
    AFTER_FLYWAY,
    /**
     * Before the service's Flyway. On a fresh database with the directory in the service's schema
     * the service's Flyway then finds a non-empty schema without its history and refuses (or, with
     * spring.flyway.baseline-on-migrate, skips its V1): use it only when the directory has a schema
     * of its own or the service's Flyway baselines at version 0.
     */
    BEFORE_FLYWAY
  }

  /** {@code ledger.migration.*}. */
  public static class Migration {

    /**
     * Whether the directory schema is migrated (and ledger.migration.domains provisioned) while the
     * context starts. The Ledger bean is created after it.
     */
    private boolean enabled = true;

    /** When the startup migration runs relative to the service's own Flyway migrations. */
    private Order order = Order.AFTER_FLYWAY;

    /**
     * Domains whose schemas are made (or brought current) at startup, so the first filing of each
     * runs no DDL (needed when runtime DDL is off, and inside a caller's transaction).
     */
    private List<String> domains = new ArrayList<>();

    /**
     * Whether the startup migration runs.
     *
     * @return true by default
     */
    public boolean isEnabled() {
      return enabled;
    }

    /**
     * Sets whether the startup migration runs.
     *
     * @param enabled false to leave migrations to the migration job
     */
    public void setEnabled(boolean enabled) {
      this.enabled = enabled;
    }

    /**
     * The order relative to the service's Flyway.
     *
     * @return {@link Order#AFTER_FLYWAY} by default
     */
    public Order getOrder() {
      return order;
    }

    /**
     * Sets the order relative to the service's Flyway.
     *
     * @param order not null
     */
    public void setOrder(Order order) {
      this.order = order;
    }

    /**
     * The domains provisioned at startup.
     *
     * @return mutable list, empty by default
     */
    public List<String> getDomains() {
      return domains;
    }

    /**
     * Sets the domains provisioned at startup.
     *
     * @param domains domain names, each validated as a filing's domain is
     */
    public void setDomains(List<String> domains) {
      this.domains = domains;
    }
  }
}
