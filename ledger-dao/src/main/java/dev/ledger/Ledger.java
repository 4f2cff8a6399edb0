package dev.ledger;

import dev.ledger.claim.ClaimSql;
import dev.ledger.tx.Engine;
import dev.ledger.tx.Tx;
import java.util.function.Function;
import javax.sql.DataSource;

/**
 * The ledger: an event-sourced task queue on PostgreSQL, one schema per domain. Every operation
 * appends its event and updates the projection in one transaction; {@link #rebuild()} replays the
 * events into the projection again. Ports the reference backend's {@code Db} ({@code
 * crates/ledger/src/postgres.rs}). Thread-safe; share one instance per data source.
 *
 * <p>A thin facade: each operation is a class of its own, taking a transaction context ({@code
 * dev.ledger.tx.Tx}): filing and transitions in {@code dev.ledger.append}, claims and leases in
 * {@code dev.ledger.claim}, erasure in {@code dev.ledger.scrub}, replay in {@code
 * dev.ledger.replay}, reads in {@code dev.ledger.read}. The methods are those of {@link
 * LedgerOperations}.
 *
 * <pre>{@code
 * Ledger ledger = Ledger.open(dataSource, LedgerConfig.defaults());
 * String id = ledger.file(TaskSpec.builder("payments", "Reconcile batch 42").build());
 * ledger.admit(id);
 * Optional<Lease> lease = ledger.claimNext("payments", "worker-1", Duration.ofMinutes(5),
 *     List.of(), Label.PUBLIC);
 * lease.ifPresent(l -> ledger.complete(l, "done"));
 * }</pre>
 *
 * <p>Errors: {@link InvalidInputException} (nothing written), {@link TaskNotFoundException}, {@link
 * WrongStateException}, {@link LeaseLostException}, {@link SchemaVersionException}, and {@link
 * LedgerStorageException} for database failures. The data source should allow at least three
 * connections: provisioning a new domain holds one while Flyway uses others.
 */
public final class Ledger extends LedgerOperations {

  /**
   * The largest window a claim grows to when concurrent transactions hold the rows of a smaller one
   * (see {@link #claimBatch}): far more locked rows than any pool has connections.
   */
  static final int MAX_CLAIM_WINDOW = ClaimSql.MAX_CLAIM_WINDOW;

  private Ledger(DataSource dataSource, LedgerConfig config) {
    super(new Ops(new Engine(dataSource, config)));
  }

  /**
   * Opens the ledger on a data source: checks the directory schema's version and, when runtime DDL
   * is allowed, migrates it.
   *
   * @param dataSource the database, not null; a pool of at least 3 connections
   * @param config the configuration, not null
   * @return the ledger
   * @throws SchemaVersionException when the directory is behind (and runtime DDL is off) or ahead,
   *     or holds a reference-stack ledger that the migration job must adopt first
   * @throws LedgerStorageException when the database cannot be used
   */
  public static Ledger open(DataSource dataSource, LedgerConfig config) {
    Ledger ledger = new Ledger(dataSource, config);
    Engine engine = ledger.ops.engine;
    engine.run(
        "open",
        () -> {
          engine.directory().checkDirectory();
          return null;
        });
    return ledger;
  }

  /**
   * Opens the ledger with {@link LedgerConfig#defaults()}.
   *
   * @param dataSource the database, not null
   * @return the ledger
   * @throws SchemaVersionException see {@link #open(DataSource, LedgerConfig)}
   */
  public static Ledger open(DataSource dataSource) {
    return open(dataSource, LedgerConfig.defaults());
  }

  /**
   * Makes a domain's schema ahead of its first task, for deployments whose runtime role may not run
   * DDL (call it from the migration job). Does nothing when the schema exists and is current.
   *
   * @param domain the domain
   * @return the schema name, unquoted
   * @throws InvalidInputException naming {@code domain}
   * @throws SchemaVersionException when runtime DDL is off in this ledger's configuration
   */
  public String provision(String domain) {
    Validation.domain(domain);
    Engine engine = ops.engine;
    return engine.run("provision", () -> engine.directory().ensure(domain));
  }

  /**
   * How many candidate rows a claim of {@code max} reads ({@link ClaimSql#claimWindow}).
   *
   * @param max the most tasks claimed
   * @return the window's size in rows
   */
  static int claimWindow(int max) {
    return ClaimSql.claimWindow(max);
  }

  @Override
  <T> T write(String operation, Function<Tx, T> body) {
    return ops.engine.write(operation, body);
  }

  @Override
  <T> T read(String operation, Function<Tx, T> body) {
    return ops.engine.read(operation, body);
  }
}
