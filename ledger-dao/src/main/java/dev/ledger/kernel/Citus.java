package dev.ledger.kernel;

import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/**
 * Citus mode: a ledger database with the {@code citus} extension (its coordinator) makes each new
 * domain schema a distributed schema (Citus 12+ schema-based sharding: the schema's tables on one
 * node, co-located). The switch is the extension itself, looked up in {@code pg_extension} when a
 * domain is provisioned; nothing to configure ({@code docs/scale-out.md}).
 *
 * <p>The schema is made local first and distributed after its migrations ran, in the same
 * transaction: {@code citus.enable_schema_based_sharding} is turned off for that transaction (a
 * schema distributed at {@code CREATE SCHEMA} refuses the domain set's triggers), and {@code
 * citus.enable_unsafe_triggers} on, without which {@code citus_schema_distribute} refuses a table
 * with triggers. The domain's triggers then run on the node that holds the schema: those that touch
 * only the schema's own tables (claim classes, the wake-up's {@code pg_notify} there) keep working;
 * those that write the directory (which stays on the coordinator) find none there and do nothing,
 * so the ledger's own statements keep that state instead ({@link CitusDirectory}).
 *
 * <p>Stateless and thread-safe.
 */
public final class Citus {

  private Citus() {}

  /**
   * Whether the database is a Citus coordinator, i.e. has the {@code citus} extension.
   *
   * @param ctx a context on the ledger's database
   * @return true in Citus mode
   */
  public static boolean installed(DSLContext ctx) {
    return ctx.fetchExists(
        DSL.selectOne()
            .from(DSL.table(DSL.name("pg_catalog", "pg_extension")))
            .where(DSL.field(DSL.name("extname"), String.class).eq(DSL.inline("citus"))));
  }

  /**
   * Before a domain schema is made in this transaction: schema-based sharding off for the
   * transaction, so the schema stays local while its migrations run.
   *
   * @param ctx a context inside the provisioning transaction, in Citus mode
   */
  public static void keepLocal(DSLContext ctx) {
    setLocal(ctx, "citus.enable_schema_based_sharding", "off");
  }

  /**
   * Distributes a migrated domain schema ({@code citus_schema_distribute}), allowing its triggers
   * for the transaction, and disables its notifying triggers (domain V7's {@code
   * tasks_notify_workers}, replaced by {@link CitusDirectory#wake}, and domain V11's {@code
   * feed_events_inserted}); nothing when it is distributed already.
   *
   * @param ctx a context inside the provisioning transaction, in Citus mode
   * @param schema the bare schema name (checked by its caller: {@code DomainSchemas})
   */
  public static void distribute(DSLContext ctx, String schema) {
    if (distributed(ctx, schema)) {
      return;
    }
    setLocal(ctx, "citus.enable_unsafe_triggers", "on");
    ctx.select(
            DSL.function(
                "citus_schema_distribute",
                Object.class,
                DSL.field("{0}::regnamespace", Object.class, DSL.val(quoted(schema)))))
        .fetch();
    // domain V7's wake-up would notify on the domain's node, where no pool listens, and a
    // transaction that notified cannot be prepared (a two-node commit fails): the ledger's own
    // writes notify on the coordinator instead (CitusDirectory.wake)
    ctx.execute(
        "ALTER TABLE {0} DISABLE TRIGGER {1}",
        DSL.name(schema, "tasks"), DSL.name("tasks_notify_workers"));
    // domain V11's feed notification: a statement trigger reading its transition table, which
    // Citus cannot plan on a distributed table ("unrecognized RTE kind"), and a NOTIFY on the
    // domain's node besides; the event feed is not supported on Citus (docs/scale-out.md)
    ctx.execute(
        "ALTER TABLE {0} DISABLE TRIGGER {1}",
        DSL.name(schema, "events"), DSL.name("feed_events_inserted"));
  }

  /**
   * Whether a schema is a distributed schema ({@code pg_dist_schema}).
   *
   * @param ctx a context on the coordinator, in Citus mode
   * @param schema the bare schema name
   * @return true when Citus distributes it
   */
  public static boolean distributed(DSLContext ctx, String schema) {
    return ctx.fetchExists(
        DSL.selectOne()
            .from(DSL.table(DSL.name("pg_catalog", "pg_dist_schema")))
            .where(
                DSL.field(DSL.name("schemaid"), Object.class)
                    .eq(DSL.field("{0}::regnamespace", Object.class, DSL.val(quoted(schema))))));
  }

  /** The schema's name as a quoted identifier, for a {@code regnamespace} cast. */
  private static String quoted(String schema) {
    return '"' + schema.replace("\"", "\"\"") + '"';
  }

  private static void setLocal(DSLContext ctx, String setting, String value) {
    ctx.select(
            DSL.function(
                "set_config",
                String.class,
                DSL.inline(setting),
                DSL.inline(value),
                DSL.inline(true)))
        .fetch();
  }
}
