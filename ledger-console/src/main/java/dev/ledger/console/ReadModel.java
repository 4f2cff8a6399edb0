package dev.ledger.console;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_DOMAINS;
import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.Label;
import dev.ledger.Status;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.SQLDialect;
import org.jooq.conf.MappedSchema;
import org.jooq.conf.RenderMapping;
import org.jooq.conf.Settings;
import org.jooq.impl.DSL;

/**
 * The console's own reads, where the ledger's API has none that stays fast at depth: a domain list
 * with schemas, keyset-paginated queue pages, delayed and running tasks (the overview's figures are
 * {@link OverviewReads}'). Through jOOQ and the classes generated from the migrations,
 * render-mapped to each domain's schema; bind values only.
 *
 * <p>Every read is bounded: no {@code COUNT(*)} over a whole table, no {@code OFFSET}. Which index
 * serves which read is in {@code docs/console.md}. Thread-safe (stateless but for its settings).
 */
final class ReadModel {

  /** The most rows a list page (delayed, running) shows. */
  static final int LIST_LIMIT = 500;

  private static final String TEMPLATE = "ledger_template";
  private static final String DIRECTORY = "ledger_directory";

  private final DataSource dataSource;
  private final String directorySchema;
  private final Clock clock;
  private final int queryTimeoutSeconds;

  ReadModel(DataSource dataSource, String directorySchema, Clock clock, int queryTimeoutSeconds) {
    this.dataSource = dataSource;
    this.directorySchema = directorySchema;
    this.clock = clock;
    this.queryTimeoutSeconds = queryTimeoutSeconds;
  }

  /** The console's database. */
  DataSource dataSource() {
    return dataSource;
  }

  /** A context render-mapped to a domain schema (or the directory only, when null). */
  DSLContext dsl(String domainSchema) {
    return DSL.using(dataSource, SQLDialect.POSTGRES, settings(domainSchema));
  }

  /** As {@link #dsl(String)}, on a connection the caller holds (several reads, one checkout). */
  DSLContext dsl(Connection connection, String domainSchema) {
    return DSL.using(connection, SQLDialect.POSTGRES, settings(domainSchema));
  }

  private Settings settings(String domainSchema) {
    RenderMapping mapping =
        new RenderMapping()
            .withSchemata(new MappedSchema().withInput(DIRECTORY).withOutput(directorySchema));
    if (domainSchema != null) {
      mapping.withSchemata(new MappedSchema().withInput(TEMPLATE).withOutput(domainSchema));
    }
    Settings settings =
        new Settings()
            .withRenderMapping(mapping)
            .withQueryTimeout(queryTimeoutSeconds)
            .withExecuteLogging(false);
    return settings;
  }

  /**
   * A domain and its schema.
   *
   * @param name the domain
   * @param schema its schema, unquoted
   */
  record Domain(String name, String schema) {}

  /** Every domain with a schema, sorted by name: one read of the directory. */
  List<Domain> domains() {
    return dsl(null)
        .select(LEDGER_DOMAINS.DOMAIN, LEDGER_DOMAINS.SCHEMA)
        .from(LEDGER_DOMAINS)
        .orderBy(LEDGER_DOMAINS.DOMAIN)
        .fetch(r -> new Domain(r.value1(), unquote(r.value2())));
  }

  /** One domain, or null when it has no schema. */
  Domain domain(String name) {
    return dsl(null)
        .select(LEDGER_DOMAINS.DOMAIN, LEDGER_DOMAINS.SCHEMA)
        .from(LEDGER_DOMAINS)
        .where(LEDGER_DOMAINS.DOMAIN.eq(name))
        .fetchOptional(r -> new Domain(r.value1(), unquote(r.value2())))
        .orElse(null);
  }

  private static String unquote(String schema) {
    if (schema.length() >= 2 && schema.startsWith("\"") && schema.endsWith("\"")) {
      return schema.substring(1, schema.length() - 1).replace("\"\"", "\"");
    }
    return schema;
  }

  /**
   * A queue page's filters.
   *
   * @param statuses the statuses shown, not empty
   * @param label only tasks of this label, or null
   * @param requirement only tasks needing this requirement, or null
   * @param origin only tasks of this origin (exact, or a prefix when it ends with {@code *}), or
   *     null
   * @param text only tasks whose title or body contains this (case-insensitive), among those within
   *     the handling label; or null
   */
  record QueueFilter(
      Set<Status> statuses, Label label, String requirement, String origin, String text) {}

  /**
   * A position in claim order (priority descending, then created, then id): the last row of a page.
   *
   * @param priority the row's priority
   * @param created its creation time
   * @param id its id
   */
  record Cursor(long priority, Instant created, String id) {
    String token() {
      String plain = priority + "\n" + created + "\n" + id;
      return Base64.getUrlEncoder()
          .withoutPadding()
          .encodeToString(plain.getBytes(StandardCharsets.UTF_8));
    }

    static Cursor parse(String token) {
      if (token == null || token.isBlank()) {
        return null;
      }
      try {
        String plain = new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
        String[] p = plain.split("\n", 3);
        return new Cursor(Long.parseLong(p[0]), Instant.parse(p[1]), p[2]);
      } catch (RuntimeException e) {
        throw new IllegalArgumentException("after: not a cursor this console gave");
      }
    }
  }

  /**
   * A row of a queue page.
   *
   * @param id the task id
   * @param title its title
   * @param status its status
   * @param label its label
   * @param priority its priority
   * @param created when it was filed
   * @param requirements its requirements
   * @param origin its origin, or null
   * @param holder its lease holder, or null
   * @param leaseUntil its lease's end, or null
   * @param attempts its attempts so far
   */
  record QueueRow(
      String id,
      String title,
      Status status,
      Label label,
      long priority,
      Instant created,
      List<String> requirements,
      String origin,
      String holder,
      Instant leaseUntil,
      long attempts) {
    Cursor cursor() {
      return new Cursor(priority, created, id);
    }
  }

  /**
   * A queue page.
   *
   * @param rows the rows, in claim order
   * @param next the cursor of the next page, or null when this is the last
   */
  record Page(List<QueueRow> rows, Cursor next) {}

  /**
   * One page of a domain's queue in claim order, after a cursor: one index range scan per status
   * ({@code tasks_queue}: status, priority desc, created), merged. Never {@code OFFSET}.
   *
   * @param d the domain
   * @param filter the filters
   * @param after where the page starts (exclusive), or null for the first page
   * @param limit the page's size, 1 to 500
   * @param handling the console's handling label (the text filter looks only at tasks within it)
   * @return the page
   */
  Page queue(Domain d, QueueFilter filter, Cursor after, int limit, Label handling) {
    DSLContext ctx = dsl(d.schema());
    List<QueueRow> merged = new ArrayList<>();
    for (Status s : filter.statuses()) {
      Condition where = TASKS.STATUS.eq(DSL.inline(s.wire()));
      if (filter.label() != null) {
        where = where.and(TASKS.LABEL_RANK.eq(filter.label().rank()));
      }
      if (filter.requirement() != null) {
        Field<String> raw = DSL.field(TASKS.REQUIREMENTS.getQualifiedName(), String.class);
        where = where.and(raw.contains("\"" + jsonEscape(filter.requirement()) + "\""));
      }
      if (filter.origin() != null) {
        String o = filter.origin();
        where =
            where.and(
                o.endsWith("*")
                    ? TASKS.ORIGIN.startsWith(o.substring(0, o.length() - 1))
                    : TASKS.ORIGIN.eq(o));
      }
      if (filter.text() != null) {
        where =
            where
                .and(TASKS.LABEL_RANK.le(handling.rank()))
                .and(
                    TASKS
                        .TITLE
                        .containsIgnoreCase(filter.text())
                        .or(TASKS.BODY.containsIgnoreCase(filter.text())));
      }
      if (after == null) {
        merged.addAll(page(ctx, where, limit));
      } else {
        // two index ranges, not one OR: the rest of the cursor's priority (an index range from its
        // created on, `created >= c` spelled out so the index bounds the scan), then the lower
        // priorities. With the OR alone, PostgreSQL bounds the scan by priority only and filters
        // every row of the cursor's priority before it (measured by B15: 229 ms at row 500,000)
        merged.addAll(
            page(
                ctx,
                where
                    .and(TASKS.PRIORITY.eq(after.priority()))
                    .and(TASKS.CREATED.ge(after.created()))
                    .and(TASKS.CREATED.gt(after.created()).or(TASKS.ID.gt(after.id()))),
                limit));
        merged.addAll(page(ctx, where.and(TASKS.PRIORITY.lt(after.priority())), limit));
      }
    }
    merged.sort(CLAIM_ORDER);
    if (merged.size() <= limit) {
      return new Page(List.copyOf(merged), null);
    }
    List<QueueRow> rows = List.copyOf(merged.subList(0, limit));
    return new Page(rows, rows.get(limit - 1).cursor());
  }

  private static List<QueueRow> page(DSLContext ctx, Condition where, int limit) {
    return ctx.select(ROW)
        .from(TASKS)
        .where(where)
        .orderBy(TASKS.PRIORITY.desc(), TASKS.CREATED.asc(), TASKS.ID.asc())
        .limit(limit + 1)
        .fetch(ReadModel::row);
  }

  static final Comparator<QueueRow> CLAIM_ORDER =
      Comparator.comparingLong(QueueRow::priority)
          .reversed()
          .thenComparing(QueueRow::created)
          .thenComparing(QueueRow::id);

  private static String jsonEscape(String s) {
    return s.replace("\\", "\\\\").replace("\"", "\\\"");
  }

  /** The columns {@link #row} reads: one list, for every query of queue rows. */
  private static final List<Field<?>> ROW =
      List.of(
          TASKS.ID,
          TASKS.TITLE,
          TASKS.STATUS,
          TASKS.LABEL_RANK,
          TASKS.PRIORITY,
          TASKS.CREATED,
          TASKS.REQUIREMENTS,
          TASKS.ORIGIN,
          TASKS.HOLDER,
          TASKS.LEASE_UNTIL,
          TASKS.ATTEMPTS);

  /** {@link #ROW} and the start time, for delayed tasks. */
  private static final List<Field<?>> ROW_AND_NOT_BEFORE =
      java.util.stream.Stream.concat(ROW.stream(), java.util.stream.Stream.of(TASKS.NOT_BEFORE))
          .toList();

  private static QueueRow row(Record r) {
    return new QueueRow(
        r.get(TASKS.ID),
        r.get(TASKS.TITLE),
        Status.parse(r.get(TASKS.STATUS)),
        Label.ofRank(r.get(TASKS.LABEL_RANK)),
        r.get(TASKS.PRIORITY),
        r.get(TASKS.CREATED),
        r.get(TASKS.REQUIREMENTS),
        r.get(TASKS.ORIGIN),
        r.get(TASKS.HOLDER),
        r.get(TASKS.LEASE_UNTIL),
        r.get(TASKS.ATTEMPTS));
  }

  /**
   * A delayed task: proposed with a start time.
   *
   * @param row the task
   * @param notBefore when it comes due
   */
  record Delayed(QueueRow row, Instant notBefore) {}

  /**
   * A domain's delayed tasks, soonest first, from {@code tasks_due}; at most {@link #LIST_LIMIT}.
   */
  List<Delayed> delayed(Domain d) {
    return dsl(d.schema())
        .select(ROW_AND_NOT_BEFORE)
        .from(TASKS)
        .where(TASKS.STATUS.eq(DSL.inline(Status.PROPOSED.wire())))
        .and(TASKS.NOT_BEFORE.isNotNull())
        .orderBy(TASKS.NOT_BEFORE.asc(), TASKS.ID.asc())
        .limit(LIST_LIMIT)
        .fetch(r -> new Delayed(row(r), r.get(TASKS.NOT_BEFORE)));
  }

  /**
   * A domain's claimed tasks, by holder then lease end, from {@code tasks_queue}; at most {@link
   * #LIST_LIMIT}.
   */
  List<QueueRow> running(Domain d) {
    return dsl(d.schema())
        .select(ROW)
        .from(TASKS)
        .where(TASKS.STATUS.eq(DSL.inline(Status.CLAIMED.wire())))
        .orderBy(TASKS.HOLDER.asc(), TASKS.LEASE_UNTIL.asc(), TASKS.ID.asc())
        .limit(LIST_LIMIT)
        .fetch(ReadModel::row);
  }

  /**
   * When each of some claimed tasks' current claim began: its newest {@code claimed} event, one
   * grouped read over {@code events_task}.
   *
   * @return by task id; tasks never claimed are left out
   */
  Map<String, Instant> claimedAt(Domain d, java.util.Collection<String> ids) {
    if (ids.isEmpty()) {
      return Map.of();
    }
    Map<String, Instant> out = new java.util.HashMap<>();
    dsl(d.schema())
        .select(EVENTS.TASK_ID, DSL.max(EVENTS.AT))
        .from(EVENTS)
        .where(EVENTS.TASK_ID.in(ids))
        .and(EVENTS.KIND.eq(DSL.inline("claimed")))
        .groupBy(EVENTS.TASK_ID)
        .forEach(r -> out.put(r.value1(), r.value2()));
    return out;
  }
}
