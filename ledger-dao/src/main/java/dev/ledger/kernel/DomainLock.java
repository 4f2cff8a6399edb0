package dev.ledger.kernel;

import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.impl.DSL;

/**
 * A domain's transaction-scoped advisory lock, the reference's {@code lock_domain}: {@code
 * pg_advisory_xact_lock(hashtext('ledger_domain:' || domain))}, the key the reference stack takes
 * too. Filing, promotion, scrub, replay and provisioning take it; it is held until the transaction
 * ends.
 *
 * <pre>{@code
 * DomainLock.lock(ctx, "acme");   // waits for another holder, held until ctx's transaction ends
 * }</pre>
 */
public final class DomainLock {

  private DomainLock() {}

  /**
   * Takes a domain's transaction-scoped advisory lock, the reference's {@code lock_domain}, waiting
   * for it as long as another transaction holds it.
   *
   * @param ctx a context inside a transaction
   * @param domain the domain
   */
  public static void lock(DSLContext ctx, String domain) {
    ctx.select(DSL.function("pg_advisory_xact_lock", Object.class, key(domain))).fetch();
  }

  /**
   * Tries to take a domain's transaction-scoped advisory lock (the key of {@link #lock}), without
   * waiting.
   *
   * @param ctx a context inside a transaction
   * @param domain the domain
   * @return true when this transaction holds the lock now
   */
  public static boolean tryLock(DSLContext ctx, String domain) {
    return ctx.select(DSL.function("pg_try_advisory_xact_lock", Boolean.class, key(domain)))
        .fetchSingle()
        .value1();
  }

  private static Field<Integer> key(String domain) {
    return DSL.function(
        "hashtext", Integer.class, DSL.inline("ledger_domain:").concat(DSL.val(domain)));
  }
}
