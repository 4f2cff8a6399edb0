package dev.ledger.read;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_DOMAINS;
import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.PROMOTIONS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.DomainInfo;
import dev.ledger.LoggedEvent;
import dev.ledger.Promotion;
import dev.ledger.Status;
import dev.ledger.Task;
import dev.ledger.TaskNotFoundException;
import dev.ledger.Validation;
import dev.ledger.append.Filing;
import dev.ledger.append.Retries;
import dev.ledger.codegen.convert.StringListConverter;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import dev.ledger.event.EventKind;
import dev.ledger.kernel.Engine;
import dev.ledger.kernel.Rows;
import dev.ledger.kernel.SchemaVersions;
import dev.ledger.kernel.Tx;
import dev.ledger.schema.LedgerMigrations;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Optional;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.OrderField;
import org.jooq.impl.DSL;

/**
 * The reads: a task, lists of a domain's tasks, a task's events, promotions, domains and counts.
 * Each runs on the operation's connection ({@link Tx}), so inside a caller's transaction it sees
 * that transaction's own uncommitted writes. A domain argument is checked first ({@link
 * Validation#domain}). Ports the reference's {@code get}, {@code list}, {@code unposted}, {@code
 * dependents}, {@code filed_from}, {@code with_origin}, {@code find_origin}, {@code history},
 * {@code promotions}, {@code domains}, {@code describe_domains} and {@code event_count}.
 * Thread-safe.
 */
public final class Reads {

  private static final String COMPLETED = Status.COMPLETED.wire();

  private final Engine engine;

  /**
   * Creates the reads.
   *
   * @param engine the ledger's shared state
   */
  public Reads(Engine engine) {
    this.engine = engine;
  }

  /**
   * One task.
   *
   * @param tx the operation's context
   * @param id the task id
   * @return the task
   * @throws TaskNotFoundException when no task has the id
   */
  public Task get(Tx tx, String id) {
    TasksRecord row = engine.taskDomain(tx, id).selectFrom(TASKS).where(TASKS.ID.eq(id)).fetchOne();
    if (row == null) {
      throw new TaskNotFoundException(id);
    }
    return Rows.task(row);
  }

  /**
   * A domain's tasks in a status, in claim order (priority descending, then created).
   *
   * @param tx the operation's context
   * @param domain the domain
   * @param status the status
   * @return the tasks; empty when none or the domain is unknown
   */
  public List<Task> list(Tx tx, String domain, Status status) {
    return select(
        tx,
        domain,
        TASKS.STATUS.eq(status.wire()),
        List.of(TASKS.PRIORITY.desc(), TASKS.CREATED.asc()));
  }

  /**
   * A domain's completed tasks from some origin whose result is not yet posted, oldest first.
   *
   * @param tx the operation's context
   * @param domain the domain
   * @return the tasks
   */
  public List<Task> unposted(Tx tx, String domain) {
    return select(
        tx,
        domain,
        TASKS.STATUS.eq(COMPLETED).and(TASKS.ORIGIN.isNotNull()).and(TASKS.POSTED_TO.isNull()),
        List.of(TASKS.CREATED.asc()));
  }

  /**
   * A domain's tasks filed from an origin, oldest first.
   *
   * @param tx the operation's context
   * @param domain the domain
   * @param origin the origin
   * @return the tasks
   */
  public List<Task> withOrigin(Tx tx, String domain, String origin) {
    return select(tx, domain, TASKS.ORIGIN.eq(origin), List.of(TASKS.CREATED.asc()));
  }

  /**
   * The tasks of a task's domain that depend on it, oldest first.
   *
   * @param tx the operation's context
   * @param id the task id
   * @return the dependents; empty when none or the task is unknown
   */
  public List<Task> dependents(Tx tx, String id) {
    return engine
        .findTaskDomain(tx, id)
        .map(
            ctx ->
                ctx.selectFrom(TASKS)
                    .where(
                        DSL.condition(
                            "{0}::jsonb @> {1}::jsonb",
                            TASKS.DEPENDS_ON, DSL.val(new StringListConverter().to(List.of(id)))))
                    .orderBy(TASKS.CREATED.asc())
                    .fetch(Rows::task))
        .orElse(List.of());
  }

  /**
   * What was filed from a task: its children ({@code task:<id>}), its continuation ({@code
   * continues:<id>}) and its retries ({@code retries:<id>}), in its domain, oldest first.
   *
   * @param tx the operation's context
   * @param parent the task id
   * @return the tasks; empty when none or the task is unknown
   */
  public List<Task> filedFrom(Tx tx, String parent) {
    return engine
        .findTaskDomain(tx, parent)
        .map(
            ctx ->
                ctx.selectFrom(TASKS)
                    .where(
                        TASKS.ORIGIN.in(
                            "task:" + parent, "continues:" + parent, Retries.RETRIES + parent))
                    .orderBy(TASKS.CREATED.asc())
                    .fetch(Rows::task))
        .orElse(List.of());
  }

  /**
   * The task filed from an origin's upstream event, if any.
   *
   * @param tx the operation's context
   * @param domain the domain
   * @param origin the origin
   * @param upstreamEvent the upstream event
   * @return its id, or empty (also when the domain is unknown)
   */
  public Optional<String> findOrigin(Tx tx, String domain, String origin, String upstreamEvent) {
    Validation.domain(domain);
    return engine.domain(tx, domain).flatMap(ctx -> Filing.findOrigin(ctx, origin, upstreamEvent));
  }

  /**
   * The payload of a task's {@code created} event, as stored (format v1 JSON).
   *
   * @param tx the operation's context
   * @param id the task id
   * @return the JSON text
   * @throws TaskNotFoundException when no task has the id
   */
  public String createdPayload(Tx tx, String id) {
    return engine
        .taskDomain(tx, id)
        .select(EVENTS.PAYLOAD)
        .from(EVENTS)
        .where(EVENTS.TASK_ID.eq(id))
        .and(EVENTS.KIND.eq(EventKind.CREATED.wire()))
        .orderBy(EVENTS.SEQ)
        .limit(1)
        .fetchOptional(EVENTS.PAYLOAD)
        .map(Object::toString)
        .orElseThrow(() -> new TaskNotFoundException(id));
  }

  /**
   * A task's events, in order.
   *
   * @param tx the operation's context
   * @param id the task id
   * @return its events, oldest first
   * @throws TaskNotFoundException when no task has the id
   */
  public List<LoggedEvent> history(Tx tx, String id) {
    String schema = engine.schemaOfTask(tx, id);
    // the time is read as stored and parsed here, so a bad one names its event
    org.jooq.Field<String> at = DSL.field(DSL.name("at"), String.class);
    return tx.forSchema(schema)
        .select(EVENTS.SEQ, EVENTS.TASK_ID, EVENTS.KIND, at, EVENTS.PAYLOAD)
        .from(EVENTS)
        .where(EVENTS.TASK_ID.eq(id))
        .orderBy(EVENTS.SEQ)
        .fetch(
            r ->
                new LoggedEvent(
                    r.value1(),
                    r.value2(),
                    r.value3(),
                    storedTime(schema, r.value1(), r.value2(), r.value4()),
                    r.value5().toString()));
  }

  /**
   * An event's stored time.
   *
   * @throws dev.ledger.StoredDataException naming the event when the text is not RFC 3339
   */
  private static java.time.Instant storedTime(String schema, long seq, String task, String text) {
    try {
      return dev.ledger.codegen.convert.Rfc3339.parse(text);
    } catch (IllegalArgumentException e) {
      throw new dev.ledger.StoredDataException(
          "history",
          "event "
              + seq
              + " of task "
              + task
              + " in "
              + schema
              + ".events has the time '"
              + text
              + "', which is not an RFC 3339 time ("
              + e.getMessage()
              + "); correct that row's at",
          e);
    }
  }

  /**
   * An entry's promotions, in the order recorded.
   *
   * @param tx the operation's context
   * @param domain the domain
   * @param entry the entry
   * @return the promotions; empty when none or the domain is unknown
   */
  public List<Promotion> promotions(Tx tx, String domain, String entry) {
    Validation.domain(domain);
    return engine
        .domain(tx, domain)
        .map(
            ctx ->
                ctx.selectFrom(PROMOTIONS)
                    .where(PROMOTIONS.DOMAIN.eq(domain))
                    .and(PROMOTIONS.ENTRY.eq(entry))
                    .orderBy(PROMOTIONS.SEQ)
                    .fetch(Rows::promotion))
        .orElse(List.of());
  }

  /**
   * Every domain with a schema, sorted.
   *
   * @param tx the operation's context
   * @return the domain names
   */
  public static List<String> domains(Tx tx) {
    return tx.directory()
        .select(LEDGER_DOMAINS.DOMAIN)
        .from(LEDGER_DOMAINS)
        .orderBy(LEDGER_DOMAINS.DOMAIN)
        .fetch(LEDGER_DOMAINS.DOMAIN);
  }

  /**
   * Every domain with its schema, version and task counts by status, sorted by domain. Costs one
   * query per domain.
   *
   * @param tx the operation's context
   * @return the domains
   */
  public List<DomainInfo> describeDomains(Tx tx) {
    List<DomainInfo> out = new ArrayList<>();
    for (String domain : domains(tx)) {
      String schema = engine.schemaOf(tx, domain).orElseThrow();
      DSLContext ctx = tx.forSchema(schema);
      EnumMap<Status, Long> counts = new EnumMap<>(Status.class);
      for (Status st : Status.values()) {
        counts.put(st, 0L);
      }
      ctx.select(TASKS.STATUS, DSL.count())
          .from(TASKS)
          .groupBy(TASKS.STATUS)
          .fetch()
          .forEach(r -> counts.put(Status.parse(r.value1()), r.value2().longValue()));
      String version =
          SchemaVersions.latestVersion(ctx, schema, LedgerMigrations.DOMAIN_HISTORY)
              .map(v -> v.getVersion())
              .orElse(null);
      out.add(new DomainInfo(domain, schema, version, Collections.unmodifiableMap(counts)));
    }
    return out;
  }

  /**
   * How many events every domain holds.
   *
   * @param tx the operation's context
   * @return the count
   */
  public long eventCount(Tx tx) {
    long n = 0;
    for (String domain : domains(tx)) {
      n += engine.domain(tx, domain).orElseThrow().fetchCount(EVENTS);
    }
    return n;
  }

  private List<Task> select(
      Tx tx, String domain, Condition where, List<? extends OrderField<?>> order) {
    Validation.domain(domain);
    return engine
        .domain(tx, domain)
        .map(ctx -> ctx.selectFrom(TASKS).where(where).orderBy(order).fetch(Rows::task))
        .orElse(List.of());
  }
}
