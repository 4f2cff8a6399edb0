package dev.ledger.replay;

import dev.ledger.kernel.Engine;
import dev.ledger.kernel.Tx;
import dev.ledger.read.Reads;
import java.util.List;

/**
 * Replay: every domain's events folded into a fresh projection ({@code tasks}, {@code promotions},
 * the domain's routes in {@code ledger_tasks}, and the derived claim classes, dependency edges and
 * {@code blocked} flags), all domains in the operation's transaction, so a failure anywhere leaves
 * every old projection as it was. One domain at a time is replayed by {@link Replay}. Ports the
 * reference's {@code rebuild}. Thread-safe.
 *
 * <p>Every domain's lock is taken first, in domain order, and held until the transaction ends
 * ({@link Replay#begin}): a scrub, filing or promotion of any domain, by this ledger or the
 * reference stack, waits for the replay and then sees the rebuilt projection.
 */
public final class Rebuild {

  private final Engine engine;

  /**
   * Creates the operation.
   *
   * @param engine the ledger's shared state
   */
  public Rebuild(Engine engine) {
    this.engine = engine;
  }

  /**
   * Replays every domain in {@code tx}. The caller forgets the directory's cached routes once the
   * transaction has committed ({@code Directory.forget}).
   *
   * @param tx the operation's transaction context
   * @return how many events were replayed
   * @throws org.jooq.exception.DataAccessException when the database fails or refuses a replayed
   *     row; the transaction is then to be rolled back
   * @throws dev.ledger.LedgerException when a stored event is not format v1, or a task has two
   *     {@code created} events
   */
  public long rebuild(Tx tx) {
    List<String> domains = Reads.domains(tx);
    Replay.begin(tx.directory(), domains);
    long count = 0;
    for (String domain : domains) {
      String schema = engine.schemaOf(tx, domain).orElseThrow();
      count += Replay.domain(tx.forSchema(schema), domain, schema);
    }
    for (String domain : domains) {
      if (engine.citus()) {
        ClaimIndex.recomputeBlockedApart(engine.domain(tx, domain).orElseThrow());
      } else {
        ClaimIndex.recomputeBlocked(engine.domain(tx, domain).orElseThrow());
      }
    }
    Replay.finish(tx.directory());
    return count;
  }
}
