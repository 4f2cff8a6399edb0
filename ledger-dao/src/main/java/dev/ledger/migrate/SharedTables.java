package dev.ledger.migrate;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_DOMAINS;
import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_TASKS;
import static org.jooq.impl.DSL.count;
import static org.jooq.impl.DSL.field;
import static org.jooq.impl.DSL.name;
import static org.jooq.impl.DSL.select;
import static org.jooq.impl.DSL.table;

import dev.ledger.codegen.db.ledger_template.tables.Events;
import dev.ledger.codegen.db.ledger_template.tables.Tasks;
import dev.ledger.replay.ClaimIndex;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.RenderMappedDsl;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record2;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultConnectionProvider;

/**
 * A ledger from before domains had schemas keeps everything in the directory schema's {@code tasks}
 * and {@code events}. The move (ports the reference's {@code migrate_shared_tables}): each domain's
 * new schema is made by Flyway first; then, in one transaction, each domain's task rows are copied
 * exactly and its events copied in sequence order into its schema, the domain and its tasks are
 * routed ({@code ledger_tasks.completed} set for completed tasks), and the shared tables are
 * renamed {@value #TASKS_KEPT} and {@value #EVENTS_KEPT}, kept rather than dropped.
 *
 * <p>The reference replays the moved events to rebuild each projection; this copies the rows, which
 * the fixtures' contract makes identical ("the tasks rows are exactly what replaying the events
 * gives"), and keeps what an older binary wrote byte for byte. What later migrations derive from
 * the rows (claim classes, dependency edges, the {@code blocked} flag) is computed in the same
 * transaction by {@link ClaimIndex}, the code the live operations and the replay use, so the moved
 * projection is the one a replay gives. The rename is the one DDL statement outside a migration
 * script: it must commit in the same transaction as the data.
 */
final class SharedTables {

  /** The shared tasks table. */
  static final String TASKS = "tasks";

  /** The shared events table. */
  static final String EVENTS = "events";

  private static final Tasks TASKS_TABLE = dev.ledger.codegen.db.ledger_template.Tables.TASKS;
  private static final Events EVENTS_TABLE = dev.ledger.codegen.db.ledger_template.Tables.EVENTS;

  /** What the shared tasks table is renamed to. */
  static final String TASKS_KEPT = "tasks_before_domain_schemas";

  /** What the shared events table is renamed to. */
  static final String EVENTS_KEPT = "events_before_domain_schemas";

  private final String directorySchema;
  private final Table<?> tasks;
  private final Table<?> events;
  private final Field<String> taskId;
  private final Field<String> taskDomain;
  private final Field<String> taskStatus;
  private final Field<Long> eventSeq;
  private final Field<String> eventTaskId;

  /**
   * Creates the mover for one directory schema.
   *
   * @param directorySchema the directory schema, unquoted
   */
  SharedTables(String directorySchema) {
    this.directorySchema = directorySchema;
    this.tasks = table(name(directorySchema, TASKS)).as("t");
    this.events = table(name(directorySchema, EVENTS)).as("e");
    this.taskId = field(name("t", "id"), String.class);
    this.taskDomain = field(name("t", "domain"), String.class);
    this.taskStatus = field(name("t", "status"), String.class);
    this.eventSeq = field(name("e", "seq"), Long.class);
    this.eventTaskId = field(name("e", "task_id"), String.class);
  }

  /**
   * Whether the directory schema's {@code tasks} and {@code events} are a ledger's: every column
   * they have is a column of a domain schema's table of the same name, type and nullability, and
   * every column of the domain schema's table they lack is nullable or has a default (a column a
   * later migration added, such as {@code tasks.blocked}), so their rows fit.
   *
   * @param directoryLines the directory schema's catalog lines
   * @return true when both tables fit
   */
  static boolean shapeMatches(Set<String> directoryLines) {
    return fits(TASKS_TABLE, directoryLines) && fits(EVENTS_TABLE, directoryLines);
  }

  private static boolean fits(Table<?> table, Set<String> lines) {
    String prefix = "column " + table.getName() + ".";
    Set<String> expected =
        ExpectedCatalog.linesOf(table).stream()
            .filter(l -> l.startsWith(prefix))
            .collect(Collectors.toSet());
    Set<String> actual =
        lines.stream().filter(l -> l.startsWith(prefix)).collect(Collectors.toSet());
    if (actual.isEmpty() || !expected.containsAll(actual)) {
      return false;
    }
    for (Field<?> f : table.fields()) {
      boolean present = actual.stream().anyMatch(l -> l.startsWith(prefix + f.getName() + " "));
      if (!present && !f.getDataType().nullable() && !f.getDataType().defaulted()) {
        return false;
      }
    }
    return true;
  }

  /**
   * The names of the columns of the shared {@code tasks}.
   *
   * @param directoryLines the directory schema's catalog lines
   * @return the column names
   */
  static Set<String> taskColumns(Set<String> directoryLines) {
    String prefix = "column " + TASKS + ".";
    return directoryLines.stream()
        .filter(l -> l.startsWith(prefix))
        .map(l -> l.substring(prefix.length(), l.indexOf(' ', prefix.length())))
        .collect(Collectors.toSet());
  }

  /**
   * What the shared tables hold, per domain (two statements).
   *
   * @param ctx a context over the database
   * @param directoryLines the directory schema's catalog lines (for the shared columns)
   * @return each domain with its task and event counts, in domain order, and the events that belong
   *     to no task
   */
  Census census(DSLContext ctx, Set<String> directoryLines) {
    List<SharedTablesReport.MovedDomain> domains = new ArrayList<>();
    List<Record2<String, Integer>> taskCounts =
        ctx.select(taskDomain, count()).from(tasks).groupBy(taskDomain).orderBy(taskDomain).fetch();
    var eventCounts =
        ctx.select(taskDomain, count())
            .from(events)
            .leftJoin(tasks)
            .on(taskId.eq(eventTaskId))
            .groupBy(taskDomain)
            .fetchMap(taskDomain, count());
    for (Record2<String, Integer> r : taskCounts) {
      String domain = r.value1();
      domains.add(
          new SharedTablesReport.MovedDomain(
              domain,
              DomainSchemas.schemaName(domain),
              r.value2(),
              eventCounts.getOrDefault(domain, 0)));
    }
    long orphans = eventCounts.getOrDefault(null, 0);
    return new Census(domains, orphans, taskColumns(directoryLines));
  }

  /**
   * What the shared tables hold.
   *
   * @param domains per domain, its counts and new schema
   * @param orphanEvents events whose task is in no shared task row
   * @param taskColumns the columns of the shared {@code tasks} (those copied)
   */
  record Census(
      List<SharedTablesReport.MovedDomain> domains, long orphanEvents, Set<String> taskColumns) {}

  /**
   * Moves the data of every domain into its (already made, empty) schema, in one transaction, under
   * a transaction-level advisory lock so two runs never move twice.
   *
   * @param dataSource where the transaction's connection comes from
   * @param plain a context whose configuration (listeners) the transaction's statements reuse
   * @param mapped render-mapped contexts, whose configurations the transaction derives from
   * @param census what to move
   * @return false when another run moved the tables first (nothing done), true when moved
   * @throws SQLException when the connection fails
   * @throws MoveRefusedException when a target schema already holds rows or a domain is routed to
   *     another schema (nothing committed)
   * @throws org.jooq.exception.DataAccessException when a statement fails (nothing committed)
   */
  boolean move(DataSource dataSource, DSLContext plain, RenderMappedDsl mapped, Census census)
      throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      c.setAutoCommit(false);
      try {
        DSLContext ctx = DSL.using(plain.configuration().derive(new DefaultConnectionProvider(c)));
        ctx.select(
                DSL.function(
                    "pg_advisory_xact_lock",
                    Object.class,
                    DSL.val(
                        AdvisoryLocks.tenantLockKey("ledger-shared-tables:" + directorySchema))))
            .fetch();
        boolean stillShared =
            ctx.fetchExists(
                select(DSL.one())
                    .from(table(name("pg_catalog", "pg_tables")))
                    .where(field(name("schemaname"), String.class).eq(directorySchema))
                    .and(field(name("tablename"), String.class).eq(TASKS)));
        if (!stillShared) {
          c.rollback();
          return false;
        }
        for (SharedTablesReport.MovedDomain d : census.domains()) {
          moveDomain(onTransaction(mapped, d.schema(), c), d, census.taskColumns());
        }
        // blocked needs every domain's routes (a dependency may be in another domain)
        for (SharedTablesReport.MovedDomain d : census.domains()) {
          ClaimIndex.recomputeBlocked(onTransaction(mapped, d.schema(), c));
        }
        ctx.alterTable(table(name(directorySchema, TASKS))).renameTo(name(TASKS_KEPT)).execute();
        ctx.alterTable(table(name(directorySchema, EVENTS))).renameTo(name(EVENTS_KEPT)).execute();
        c.commit();
        return true;
      } catch (SQLException | RuntimeException e) {
        c.rollback();
        throw e;
      }
    }
  }

  private static DSLContext onTransaction(RenderMappedDsl mapped, String schema, Connection c) {
    return DSL.using(
        mapped.forSchema(schema).configuration().derive(new DefaultConnectionProvider(c)));
  }

  private void moveDomain(
      DSLContext ctx, SharedTablesReport.MovedDomain d, Set<String> sharedTaskColumns) {
    if (ctx.fetchExists(TASKS_TABLE) || ctx.fetchExists(EVENTS_TABLE)) {
      throw new MoveRefusedException(
          "schema "
              + d.schema()
              + " of domain "
              + d.domain()
              + " already holds tasks or events; the shared tables were not moved (nothing"
              + " changed): move or drop that schema's rows by hand, then run again");
    }
    String routed =
        ctx.select(LEDGER_DOMAINS.SCHEMA)
            .from(LEDGER_DOMAINS)
            .where(LEDGER_DOMAINS.DOMAIN.eq(d.domain()))
            .fetchOne(LEDGER_DOMAINS.SCHEMA);
    if (routed == null) {
      ctx.insertInto(LEDGER_DOMAINS)
          .set(LEDGER_DOMAINS.DOMAIN, d.domain())
          .set(LEDGER_DOMAINS.SCHEMA, DomainSchemas.quotedSchemaName(d.domain()))
          .execute();
    } else if (!DomainSchemas.unquote(routed).equals(d.schema())) {
      throw new MoveRefusedException(
          "domain "
              + d.domain()
              + " is routed to "
              + routed
              + ", not to "
              + d.schema()
              + "; the shared tables were not moved (nothing changed)");
    }
    List<Field<?>> target = new ArrayList<>();
    List<Field<?>> source = new ArrayList<>();
    for (Field<?> f : TASKS_TABLE.fields()) {
      if (sharedTaskColumns.contains(f.getName())) {
        target.add(f);
        source.add(field(name("t", f.getName()), f.getDataType()));
      }
    }
    ctx.insertInto(TASKS_TABLE)
        .columns(target)
        .select(select(source).from(tasks).where(taskDomain.eq(d.domain())))
        .execute();
    ctx.insertInto(
            EVENTS_TABLE,
            EVENTS_TABLE.TASK_ID,
            EVENTS_TABLE.KIND,
            EVENTS_TABLE.AT,
            EVENTS_TABLE.PAYLOAD)
        .select(
            select(
                    eventTaskId,
                    field(name("e", "kind"), EVENTS_TABLE.KIND.getDataType()),
                    field(name("e", "at"), EVENTS_TABLE.AT.getDataType()),
                    field(name("e", "payload"), EVENTS_TABLE.PAYLOAD.getDataType()))
                .from(events)
                .join(tasks)
                .on(taskId.eq(eventTaskId))
                .where(taskDomain.eq(d.domain()))
                .orderBy(eventSeq))
        .execute();
    ctx.insertInto(LEDGER_TASKS, LEDGER_TASKS.ID, LEDGER_TASKS.DOMAIN, LEDGER_TASKS.COMPLETED)
        .select(
            select(taskId, taskDomain, field(taskStatus.eq("completed")))
                .from(tasks)
                .where(taskDomain.eq(d.domain())))
        .execute();
    // what claims derive from the rows (claim classes, dependency edges), by the code the live
    // operations and the replay use
    ClaimIndex.rebuildDomain(ctx, d.domain(), ctx.selectFrom(TASKS_TABLE).fetch());
  }

  /** The move was refused before anything changed (a target holds rows, a route disagrees). */
  static final class MoveRefusedException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    MoveRefusedException(String message) {
      super(message);
    }
  }
}
