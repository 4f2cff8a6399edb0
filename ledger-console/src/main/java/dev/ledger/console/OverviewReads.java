package dev.ledger.console;

import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.QUEUE_CONTROLS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.DomainControls;
import dev.ledger.Status;
import dev.ledger.codegen.db.ledger_template.tables.Tasks;
import dev.ledger.kernel.RenderedStatement;
import dev.ledger.kernel.RenderedStatement.Slot;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.SQLDialect;
import org.jooq.Select;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * What the overview and {@code /api/domains} show of every domain: counts by status, the oldest
 * admitted task, dead letters, the last hour, the queue controls and the tasks claimed now.
 *
 * <p>A domain of at most {@value #CAP} tasks (nearly all of them, on a ledger of many domains) is
 * read in <em>one</em> statement: one scan of at most {@value #CAP} + 1 task rows, aggregated by
 * status, the newest {@value #EVENT_WINDOW} events, and the controls' row. Its SQL is rendered once
 * per schema and kept ({@link RenderedStatement}), its two bind values are times, so the server's
 * plan is reused once the driver prepares it: a page of 100 domains pays neither jOOQ's rendering
 * nor PostgreSQL's planning per domain. A domain with more tasks is read once more: each status
 * counted up to {@value #CAP} + 1 entries of {@code tasks_queue}; a status past the cap shows the
 * planner's estimate ({@code pg_class.reltuples} times the status's frequency in {@code pg_stats},
 * read by the same statement), marked {@code ≈}, or {@code >1000} without one. Nothing counts a
 * whole table; what is shown as exact is exact. Thread-safe.
 */
final class OverviewReads {

  /** Counts, the oldest admitted age and dead letters are exact up to here. */
  static final int CAP = 1_000;

  /** The last hour reads at most this many of a domain's newest events. */
  static final int EVENT_WINDOW = 2_000;

  private static final Slot<Instant> NOW = Slot.of("now", TASKS.LEASE_UNTIL.getDataType());
  private static final Slot<Instant> SINCE = Slot.of("since", EVENTS.AT.getDataType());

  // ---- the one statement of a domain: its first CAP + 1 tasks, newest events, controls --------

  /** The scanned tasks, under the name {@link DeadLetterReads#isDeadLetter} is given. */
  private static final Tasks T = TASKS.as("dead");

  private static final Field<Integer> READ = DSL.count().as("read");
  private static final List<Field<Integer>> BY_STATUS = new ArrayList<>();
  private static final Field<Instant> OLDEST =
      DSL.min(T.CREATED).filterWhere(T.STATUS.eq(DSL.inline(Status.ADMITTED.wire()))).as("oldest");
  private static final Field<Integer> CLAIMED_NOW =
      DSL.count()
          .filterWhere(
              T.STATUS.eq(DSL.inline(Status.CLAIMED.wire())).and(T.LEASE_UNTIL.ge(NOW.field())))
          .as("claimed_now");
  private static final Field<Integer> DEAD =
      DSL.count().filterWhere(DeadLetterReads.isDeadLetter(T)).as("dead_letters");

  private static final Field<Integer> H_COMPLETED;
  private static final Field<Integer> H_EVENTS;
  private static final Field<Integer> H_READ;
  private static final Field<Instant> H_OLDEST;

  /** The columns the domain's statement returns, in order. */
  private static final Field<?>[] SMALL_FIELDS;

  private static final Select<Record> SMALL;

  static {
    for (Status s : Status.values()) {
      BY_STATUS.add(DSL.count().filterWhere(T.STATUS.eq(DSL.inline(s.wire()))).as("n_" + s.wire()));
    }
    List<Field<?>> scanned = new ArrayList<>(BY_STATUS);
    scanned.addAll(List.of(OLDEST, CLAIMED_NOW, DEAD, READ));
    Table<?> scan =
        DSL.select(
                TASKS.ID,
                TASKS.STATUS,
                TASKS.CREATED,
                TASKS.LEASE_UNTIL,
                TASKS.REASON,
                TASKS.ORIGIN)
            .from(TASKS)
            .limit(DSL.inline(CAP + 1))
            .asTable("dead");
    Table<?> tasks = DSL.select(scanned).from(scan).asTable("s");

    Table<?> newest =
        DSL.select(EVENTS.KIND, EVENTS.AT)
            .from(EVENTS)
            .orderBy(EVENTS.SEQ.desc())
            .limit(DSL.inline(EVENT_WINDOW))
            .asTable("newest");
    Field<String> kind = newest.field(EVENTS.KIND);
    Field<Instant> at = newest.field(EVENTS.AT);
    Table<?> hour =
        DSL.select(
                DSL.count()
                    .filterWhere(at.ge(SINCE.field()).and(kind.eq(DSL.inline("completed"))))
                    .as("completed"),
                DSL.count().filterWhere(at.ge(SINCE.field())).as("events"),
                DSL.count().as("events_read"),
                DSL.min(at).as("oldest_read"))
            .from(newest)
            .asTable("h");
    H_COMPLETED = hour.field("completed", Integer.class);
    H_EVENTS = hour.field("events", Integer.class);
    H_READ = hour.field("events_read", Integer.class);
    H_OLDEST = hour.field("oldest_read", at.getDataType());

    List<Field<?>> all = new ArrayList<>();
    for (Field<?> f : scanned) {
      all.add(tasks.field(f));
    }
    all.addAll(List.of(H_COMPLETED, H_EVENTS, H_READ, H_OLDEST));
    all.addAll(
        List.of(
            QUEUE_CONTROLS.PAUSED,
            QUEUE_CONTROLS.MAX_CLAIMED,
            QUEUE_CONTROLS.RATE_CLAIMS,
            QUEUE_CONTROLS.RATE_PERIOD_MS));
    SMALL_FIELDS = all.toArray(Field<?>[]::new);
    SMALL =
        DSL.select(all)
            .from(tasks)
            .crossJoin(hour)
            .leftJoin(QUEUE_CONTROLS)
            .on(DSL.trueCondition());
  }

  // ---- a domain of more than CAP tasks: each status up to CAP + 1 entries of tasks_queue --------

  /** The domain's schema, for its row of the planner's statistics. */
  private static final Slot<String> SCHEMA = Slot.of("schema", SQLDataType.VARCHAR);

  private static final Field<Long> EST_ROWS;
  private static final Field<String> EST_VALUES;
  private static final Field<String> EST_FREQS;
  private static final Field<?>[] LARGE_FIELDS;
  private static final Select<Record> LARGE;

  static {
    List<Field<?>> f = new ArrayList<>();
    for (Status s : Status.values()) {
      f.add(
          DSL.field(
                  DSL.selectCount()
                      .from(
                          DSL.selectOne()
                              .from(TASKS)
                              .where(TASKS.STATUS.eq(DSL.inline(s.wire())))
                              .limit(DSL.inline(CAP + 1))
                              .asTable("c_" + s.wire())))
              .as("n_" + s.wire()));
    }
    // no index orders admitted tasks by creation alone: at most CAP + 1 of them are read
    // (tasks_queue, index only); more than CAP admitted makes the oldest a bound
    Table<?> admitted =
        DSL.select(TASKS.CREATED)
            .from(TASKS)
            .where(TASKS.STATUS.eq(DSL.inline(Status.ADMITTED.wire())))
            .limit(DSL.inline(CAP + 1))
            .asTable("admitted");
    f.add(
        DSL.field(DSL.select(DSL.min(admitted.field(TASKS.CREATED))).from(admitted)).as("oldest"));
    Tasks dead = TASKS.as("dead");
    f.add(
        DSL.field(
                DSL.selectCount()
                    .from(
                        DSL.selectOne()
                            .from(dead)
                            .where(DeadLetterReads.isDeadLetter(dead))
                            .limit(DSL.inline(CAP + 1))
                            .asTable("capped")))
            .as("dead_letters"));
    // claimed tasks are bounded by the workers' concurrency: not capped (as Ledger.controls)
    f.add(
        DSL.field(
                DSL.selectCount()
                    .from(TASKS)
                    .where(TASKS.STATUS.eq(DSL.inline(Status.CLAIMED.wire())))
                    .and(TASKS.LEASE_UNTIL.ge(NOW.field())))
            .as("claimed_now"));
    // the planner's statistics of this domain's tasks, in the same statement (no second round
    // trip, and planned once with the rest when the driver prepares it)
    Table<?> n = DSL.table(DSL.name("pg_catalog", "pg_namespace")).as("n");
    Table<?> cl = DSL.table(DSL.name("pg_catalog", "pg_class")).as("cl");
    Table<?> st = DSL.table(DSL.name("pg_catalog", "pg_stats")).as("st");
    Field<String> nspname = DSL.field(DSL.name("n", "nspname"), String.class);
    Table<?> est =
        DSL.select(
                DSL.field("{0}::bigint", Long.class, DSL.field(DSL.name("cl", "reltuples")))
                    .as("est_rows"),
                DSL.field("{0}::text", String.class, DSL.field(DSL.name("st", "most_common_vals")))
                    .as("est_values"),
                DSL.field(DSL.name("st", "most_common_freqs"), SQLDataType.REAL.getArrayDataType())
                    .as("est_freqs"))
            .from(n)
            .join(cl)
            .on(DSL.field(DSL.name("cl", "relnamespace")).eq(DSL.field(DSL.name("n", "oid"))))
            .and(DSL.field(DSL.name("cl", "relname"), String.class).eq(DSL.inline("tasks")))
            .leftJoin(st)
            .on(DSL.field(DSL.name("st", "schemaname"), String.class).eq(nspname))
            .and(DSL.field(DSL.name("st", "tablename"), String.class).eq(DSL.inline("tasks")))
            .and(DSL.field(DSL.name("st", "attname"), String.class).eq(DSL.inline("status")))
            .where(nspname.eq(SCHEMA.field()))
            .asTable("est");
    EST_ROWS = est.field("est_rows", Long.class);
    EST_VALUES = est.field("est_values", String.class);
    EST_FREQS = est.field("est_freqs", String.class);
    f.addAll(List.of(EST_ROWS, EST_VALUES, EST_FREQS));
    LARGE_FIELDS = f.toArray(Field<?>[]::new);
    LARGE =
        DSL.select(f).from(DSL.selectOne().asTable("one")).leftJoin(est).on(DSL.trueCondition());
  }

  /**
   * A domain's counts by status.
   *
   * @param counts by status, every status present: exact, or {@link #CAP} for a capped status
   * @param capped the statuses with more than {@link #CAP} tasks
   * @param estimates the planner's estimate of each capped status that has one (above the cap)
   * @param estimatedRows the planner's estimate of all the domain's tasks ({@code
   *     pg_class.reltuples}), or -1 when not read (a domain within the cap) or never analyzed
   */
  record Counts(
      Map<Status, Long> counts,
      Set<Status> capped,
      Map<Status, Long> estimates,
      long estimatedRows) {
    /** The cell: the exact count, {@code ≈} and the estimate, or {@code >1000}. */
    String show(Status s) {
      if (!capped.contains(s)) {
        return String.valueOf(counts.get(s));
      }
      Long e = estimates.get(s);
      return e == null ? ">" + CAP : "≈" + e;
    }
  }

  /**
   * When the oldest admitted task of a domain was filed.
   *
   * @param at the lowest {@code created} among the admitted tasks read, or null when none is
   * @param bounded true when there were more than {@link #CAP} admitted tasks: the oldest is then
   *     at least as old as {@code at}
   */
  record Oldest(Instant at, boolean bounded) {}

  /**
   * What a domain did in the last hour, from its newest {@link #EVENT_WINDOW} events.
   *
   * @param completed {@code completed} events in the last hour
   * @param events all events in the last hour
   * @param estimated true when the window did not reach an hour back: the figures are then the
   *     window's rate over the hour (the window's counts times an hour over the time it spans)
   */
  record Throughput(long completed, long events, boolean estimated) {}

  /**
   * Everything the overview shows of a domain but its retention.
   *
   * @param counts its counts by status
   * @param oldest its oldest admitted task
   * @param deadLetters its dead letters up to {@link #CAP} + 1 ({@link #CAP} + 1 means more)
   * @param lastHour its last hour
   * @param controls its queue controls and tasks claimed now, as {@code Ledger.controls} reads them
   */
  record Summary(
      Counts counts,
      Oldest oldest,
      int deadLetters,
      Throughput lastHour,
      DomainControls controls) {}

  private final DataSource dataSource;
  private final ReadModel reads;
  private final Clock clock;
  private final RenderedStatement.Cache statements = new RenderedStatement.Cache();

  OverviewReads(DataSource dataSource, ReadModel reads, Clock clock) {
    this.dataSource = dataSource;
    this.reads = reads;
    this.clock = clock;
  }

  /**
   * Every domain's {@link Summary} on one connection: one statement per domain, and a second, with
   * the planner's estimates, for each domain past {@link #CAP} tasks.
   *
   * @param domains the domains, in the order wanted
   * @return the summaries, in the domains' order
   */
  List<Summary> summaries(List<ReadModel.Domain> domains) {
    if (domains.isEmpty()) {
      return List.of();
    }
    Instant now = clock.instant();
    Instant since = now.minus(Duration.ofHours(1));
    return DSL.using(dataSource, SQLDialect.POSTGRES)
        .connectionResult(
            c -> {
              List<Summary> out = new ArrayList<>(domains.size());
              Map<Integer, Record> large = new HashMap<>();
              List<Record> small = new ArrayList<>(domains.size());
              for (int i = 0; i < domains.size(); i++) {
                DSLContext ctx = reads.dsl(c, domains.get(i).schema());
                Record r =
                    statements
                        .get(ctx, "overview", () -> SMALL, List.of(NOW, SINCE))
                        .fetch(ctx, SMALL_FIELDS, now, since)
                        .get(0);
                small.add(r);
                if (r.get(READ.getName(), Integer.class) > CAP) {
                  large.put(
                      i,
                      statements
                          .get(ctx, "overview large", () -> LARGE, List.of(NOW, SCHEMA))
                          .fetch(ctx, LARGE_FIELDS, now, domains.get(i).schema())
                          .get(0));
                }
              }
              for (int i = 0; i < domains.size(); i++) {
                Record l = large.get(i);
                out.add(
                    summary(
                        domains.get(i),
                        small.get(i),
                        l,
                        l == null ? null : Estimate.of(l),
                        now,
                        since));
              }
              return out;
            });
  }

  private static Summary summary(
      ReadModel.Domain d, Record s, Record l, Estimate e, Instant now, Instant since) {
    // the small statement's row reads its fields by position: SMALL_FIELDS
    Record counted = l == null ? s : l;
    Map<Status, Long> byStatus = new EnumMap<>(Status.class);
    Set<Status> capped = EnumSet.noneOf(Status.class);
    Map<Status, Long> estimates = new EnumMap<>(Status.class);
    for (Status st : Status.values()) {
      int n = counted.get("n_" + st.wire(), Integer.class);
      if (n > CAP) {
        capped.add(st);
        n = CAP;
        Long est = e == null ? null : e.of(st);
        if (est != null && est > CAP) {
          estimates.put(st, est);
        }
      }
      byStatus.put(st, (long) n);
    }
    Counts counts =
        new Counts(byStatus, capped, estimates, e == null ? -1 : Math.max(-1, e.rows()));
    Oldest oldest =
        new Oldest(counted.get("oldest", Instant.class), capped.contains(Status.ADMITTED));
    int dead = counted.get("dead_letters", Integer.class);
    long claimedNow = counted.get("claimed_now", Integer.class);

    long completed = s.get(H_COMPLETED);
    long events = s.get(H_EVENTS);
    int read = s.get(H_READ);
    Instant oldestRead = s.get(H_OLDEST);
    boolean estimated = read >= EVENT_WINDOW && oldestRead != null && !oldestRead.isBefore(since);
    if (estimated) {
      // the window spans less than the hour: its rate over the whole hour
      // (at least a second: an event stamped by a clock ahead of ours would give none)
      long spanMillis = Math.max(1_000, Duration.between(oldestRead, now).toMillis());
      long hourMillis = Duration.ofHours(1).toMillis();
      completed = completed * hourMillis / spanMillis;
      events = events * hourMillis / spanMillis;
    }
    Long max = s.get(QUEUE_CONTROLS.MAX_CLAIMED);
    Long rate = s.get(QUEUE_CONTROLS.RATE_CLAIMS);
    Long period = s.get(QUEUE_CONTROLS.RATE_PERIOD_MS);
    DomainControls controls =
        new DomainControls(
            d.name(),
            Boolean.TRUE.equals(s.get(QUEUE_CONTROLS.PAUSED)),
            max == null ? null : max.intValue(),
            rate == null ? null : rate.intValue(),
            period == null ? null : Duration.ofMillis(period),
            claimedNow);
    return new Summary(
        counts, oldest, dead, new Throughput(completed, events, estimated), controls);
  }

  /**
   * The planner's statistics of a domain's tasks.
   *
   * @param rows {@code pg_class.reltuples}: -1 when never analyzed
   * @param frequencies each status's frequency among the most common values of {@code status}
   */
  record Estimate(long rows, Map<String, Float> frequencies) {
    /** The statistics in a row of the large statement ({@code est_*}; null when never analyzed). */
    static Estimate of(Record large) {
      Map<String, Float> f = new HashMap<>();
      String[] names = arrayText(large.get(EST_VALUES));
      String[] freqs = arrayText(large.get(EST_FREQS));
      for (int i = 0; i < names.length && i < freqs.length; i++) {
        // quoted or not: once the driver prepares the statement and reads results in binary, an
        // array's text arrives in its own rendering ({"1.0"} for the server's {1})
        f.put(names[i].replace("\"", ""), Float.parseFloat(freqs[i].replace("\"", "")));
      }
      Long rows = large.get(EST_ROWS);
      return new Estimate(rows == null ? -1 : rows, f);
    }

    /** The elements of a one-dimensional array's text form ({@code {a,b}}); none for null. */
    private static String[] arrayText(String text) {
      return text == null || text.length() <= 2
          ? new String[0]
          : text.substring(1, text.length() - 1).split(",");
    }

    Long of(Status s) {
      Float f = frequencies.get(s.wire());
      return rows < 0 || f == null ? null : Math.round(rows * (double) f);
    }
  }
}
