package dev.ledger.kernel;

import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.impl.DSL;

/**
 * A domain's transaction-scoped advisory lock, the reference's {@code lock_domain}: {@code
 * pg_advisory_xact_lock(hashtext('ledger_domain:' || domain))}, the key the reference stack takes
 * too. It is held until the transaction ends, in one of two modes (issue 26):
 *
 * <ul>
 *   <li><b>exclusive</b> ({@link #lock}, the reference's own mode): provisioning, a promotion, a
 *       scrub and a replay, which need the domain to themselves, and every writer of the reference
 *       stack (its filing included);
 *   <li><b>shared</b> ({@link #lockForFiling}: {@code pg_advisory_xact_lock_shared} on the same
 *       key): a filing into an existing domain. Filings run side by side, and each excludes, and is
 *       excluded by, every exclusive holder. A filing with an origin and upstream event also takes
 *       that pair's own exclusive key, so two filings of one upstream event still run one after the
 *       other and the second finds the first's task.
 * </ul>
 *
 * <p>The origin key is a two-integer advisory key, {@code (hashtext('ledger_origin:' || domain),
 * hashtext(origin || ' ' || upstream_event))}: PostgreSQL keeps two-integer keys apart from the
 * one-{@code bigint} keys that the domain lock, the migration runs and Flyway use, so it can never
 * be taken for one of those. Two pairs whose hashes collide only wait for each other.
 *
 * <pre>{@code
 * DomainLock.lock(ctx, "acme");   // waits for every other holder, held until ctx's transaction ends
 * DomainLock.lockForFiling(ctx, "acme", "shop:orders", "order-77");  // waits for exclusive holders
 * }</pre>
 *
 * <p>Lock order: the domain key, then the origin key; a transaction that holds the domain key
 * shared and then asks for it exclusive (it filed, then scrubs the same domain) waits for every
 * other filing of the domain, and two such transactions deadlock. PostgreSQL ends one of them with
 * {@code 40P01}, which the ledger raises as a {@link dev.ledger.LedgerConflictException} (roll back
 * and run the transaction again).
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

  /**
   * Takes a domain's lock for a filing: the domain key shared (concurrent filings do not wait for
   * one another, an exclusive holder waits for them all and they for it) and, when {@code
   * upstreamEvent} is not null, the origin key of {@code (origin, upstreamEvent)} exclusive, in one
   * statement, in that order. Both are held until the transaction ends.
   *
   * @param ctx a context inside a transaction
   * @param domain the domain
   * @param origin the filing's origin; not null when {@code upstreamEvent} is not
   * @param upstreamEvent the filing's upstream event, or null (no origin key is taken)
   */
  public static void lockForFiling(
      DSLContext ctx, String domain, String origin, String upstreamEvent) {
    ctx.select(filingLocks(domain, origin, upstreamEvent)).fetch();
  }

  /**
   * The select-list fields that take a filing's locks ({@link #lockForFiling}), in the order they
   * are taken, for a statement that does more after them in the same round trip. PostgreSQL
   * evaluates a select list left to right, so what follows them runs once both are held; but a
   * statement's snapshot is taken when it starts, before any wait for them, so a read in the same
   * statement does not see what the transaction it waited for committed.
   *
   * @param domain the domain
   * @param origin the filing's origin; not null when {@code upstreamEvent} is not
   * @param upstreamEvent the filing's upstream event, or null (the domain's key alone)
   * @return one or two fields
   */
  public static java.util.List<Field<?>> filingLocks(
      String domain, String origin, String upstreamEvent) {
    return filingLocks(
        DSL.val(domain),
        upstreamEvent == null ? null : DSL.val(origin),
        upstreamEvent == null ? null : DSL.val(upstreamEvent));
  }

  /**
   * The select-list fields of {@link #filingLocks(String, String, String)} over fields, for a
   * statement rendered once with placeholders ({@link RenderedStatement}).
   *
   * @param domain the domain's field
   * @param origin the origin's field, or null with {@code upstreamEvent}
   * @param upstreamEvent the upstream event's field, or null (the domain's key alone)
   * @return one or two fields
   */
  public static java.util.List<Field<?>> filingLocks(
      Field<String> domain, Field<String> origin, Field<String> upstreamEvent) {
    Field<Object> shared = DSL.function("pg_advisory_xact_lock_shared", Object.class, key(domain));
    if (upstreamEvent == null) {
      return java.util.List.of(shared);
    }
    return java.util.List.of(
        shared,
        DSL.function(
            "pg_advisory_xact_lock",
            Object.class,
            originDomainKey(domain),
            originKey(origin, upstreamEvent)));
  }

  /**
   * Takes a domain's lock shared, for a filing that takes no origin key of its own ({@link
   * dev.ledger.append.BatchFiling}: its origins are kept unique by the unique key {@code
   * tasks_origin}).
   *
   * @param ctx a context inside a transaction
   * @param domain the domain
   */
  public static void lockShared(DSLContext ctx, String domain) {
    lockForFiling(ctx, domain, null, null);
  }

  private static Field<Integer> originDomainKey(Field<String> domain) {
    return DSL.function("hashtext", Integer.class, DSL.inline("ledger_origin:").concat(domain));
  }

  private static Field<Integer> originKey(Field<String> origin, Field<String> upstreamEvent) {
    return DSL.function(
        "hashtext", Integer.class, origin.concat(DSL.inline(" ")).concat(upstreamEvent));
  }

  private static Field<Integer> key(String domain) {
    return key(DSL.val(domain));
  }

  private static Field<Integer> key(Field<String> domain) {
    return DSL.function("hashtext", Integer.class, DSL.inline("ledger_domain:").concat(domain));
  }
}
