package dev.ledger.schedule;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_SCHEDULES;

import dev.ledger.InvalidInputException;
import dev.ledger.Label;
import dev.ledger.TaskSpec;
import dev.ledger.Validation;
import dev.ledger.append.Filing;
import dev.ledger.codegen.db.ledger_directory.tables.records.LedgerSchedulesRecord;
import dev.ledger.kernel.Engine;
import dev.ledger.kernel.Tx;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/**
 * A ledger's schedules: recurring tasks kept in the directory's {@code ledger_schedules} table,
 * added, changed, paused, resumed and removed at run time. Made by {@code Ledger.schedules()};
 * thread-safe. Every call runs in a transaction of the ledger's own, or joins the one the data
 * source's connection is in, as the ledger's operations do.
 *
 * <p>Each tick is filed <b>exactly once</b>, however many processes file: the task's origin is
 * {@code schedule:<name>} and its upstream event the tick's instant ({@link #upstreamEvent}), so a
 * second filing of a tick returns the first task (the ledger's idempotent filing); and whoever
 * files a schedule's ticks holds its row ({@code FOR UPDATE SKIP LOCKED}) and advances its next
 * tick in the same transaction. Every running {@code dev.ledger.worker.WorkerPool} of a domain
 * calls {@link #fileDue(String)} for its domains (no leader is elected); so can anyone.
 *
 * <p>After downtime, a schedule files the latest {@link ScheduleSpec#catchUp()} of its missed ticks
 * and skips older ones. A paused schedule files nothing; resumed, it starts at its next tick after
 * now (the ticks of the pause are not caught up). Ticks and daylight saving time: {@link Ticks}.
 *
 * <pre>{@code
 * ledger.schedules().add(ScheduleSpec.builder("nightly-report", "reports",
 *     Timing.cron("30 2 * * *", "Europe/Berlin"), "Build the nightly report").build());
 * }</pre>
 */
public final class Schedules {

  /** The longest name. */
  public static final int MAX_NAME = 200;

  /** The origin's prefix: a schedule's tasks are filed from {@code schedule:<name>}. */
  public static final String ORIGIN_PREFIX = "schedule:";

  /** Who files a schedule's tasks ({@code created_by}). */
  public static final String FILED_BY = "ledger-schedule";

  /** The most schedules one {@link #fileDue} call serves, one transaction each. */
  static final int MAX_SCHEDULES_PER_CALL = 100;

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:-]*");

  private final Engine engine;
  private final Filing filing;

  /**
   * Creates the schedules of a ledger; {@code Ledger.schedules()} does.
   *
   * @param engine the ledger's engine (private API)
   * @param filing the ledger's filing (private API)
   */
  public Schedules(Engine engine, Filing filing) {
    this.engine = engine;
    this.filing = filing;
  }

  /**
   * The origin of a schedule's tasks.
   *
   * @param name the schedule's name
   * @return {@code schedule:<name>}
   */
  public static String origin(String name) {
    return ORIGIN_PREFIX + name;
  }

  /**
   * The upstream event of a tick's task: the tick's instant in RFC 3339, UTC.
   *
   * @param tick the tick
   * @return e.g. {@code 2026-03-08T07:00:00Z}
   */
  public static String upstreamEvent(Instant tick) {
    return DateTimeFormatter.ISO_INSTANT.format(tick);
  }

  /**
   * Adds a schedule. Its first tick is the first after now.
   *
   * @param spec the schedule, not null
   * @return the schedule as stored
   * @throws InvalidInputException naming the field ({@code name}, {@code domain}, {@code timing},
   *     {@code title}, {@code body}, {@code requirements}, {@code max_attempts}, {@code catch_up});
   *     {@code name} also when a schedule of that name exists. Nothing is written
   */
  public Schedule add(ScheduleSpec spec) {
    check(spec);
    return engine.write(
        "add schedule",
        tx -> {
          Instant now = engine.now();
          LedgerSchedulesRecord r = tx.directory().newRecord(LEDGER_SCHEDULES);
          fill(r, spec);
          r.setNextTick(odt(new Ticks(spec.timing()).next(now).orElse(null)));
          r.setPaused(false);
          r.setCreatedAt(odt(now));
          r.setUpdatedAt(odt(now));
          int inserted =
              tx.directory()
                  .insertInto(LEDGER_SCHEDULES)
                  .set(r)
                  .onConflict(LEDGER_SCHEDULES.NAME)
                  .doNothing()
                  .execute();
          if (inserted == 0) {
            throw new InvalidInputException(
                "name", "a schedule named '" + spec.name() + "' exists already");
          }
          return read(tx.directory(), spec.name()).orElseThrow();
        });
  }

  /**
   * Changes a schedule to a new spec of the same name. When its timing changes, its next tick is
   * the new timing's first after now; otherwise it keeps its ticks, and its next tick files the new
   * task.
   *
   * @param spec the new spec, not null
   * @return the schedule as stored
   * @throws InvalidInputException naming the field, as {@link #add}
   * @throws ScheduleNotFoundException when no schedule has the name
   */
  public Schedule update(ScheduleSpec spec) {
    check(spec);
    return engine.write(
        "update schedule",
        tx -> {
          LedgerSchedulesRecord r = lock(tx, spec.name());
          boolean retimed = !timing(r).equals(spec.timing());
          Instant now = engine.now();
          fill(r, spec);
          if (retimed) {
            r.setNextTick(odt(new Ticks(spec.timing()).next(now).orElse(null)));
          }
          r.setUpdatedAt(odt(now));
          tx.directory().executeUpdate(r);
          return read(tx.directory(), spec.name()).orElseThrow();
        });
  }

  /**
   * Adds a schedule, or changes the one of that name when it differs ({@link #update}); for
   * schedules declared in configuration and upserted at start.
   *
   * @param spec the schedule, not null
   * @return the schedule as stored
   * @throws InvalidInputException naming the field, as {@link #add}
   */
  public Schedule put(ScheduleSpec spec) {
    check(spec);
    for (int attempt = 0; ; attempt++) {
      Optional<Schedule> found = get(spec.name());
      if (found.isPresent()) {
        return found.get().spec().equals(spec) ? found.get() : update(spec);
      }
      try {
        return add(spec);
      } catch (InvalidInputException e) {
        if (attempt > 0 || !"name".equals(e.field())) {
          throw e; // added by another process meanwhile: the next round updates it
        }
      }
    }
  }

  /**
   * Pauses a schedule: it files no tick until resumed. Pausing a paused schedule changes nothing.
   *
   * @param name the schedule's name
   * @return the schedule as stored
   * @throws InvalidInputException naming {@code name} when it is not a valid name
   * @throws ScheduleNotFoundException when no schedule has the name
   */
  public Schedule pause(String name) {
    return setPaused(name, true);
  }

  /**
   * Resumes a paused schedule: its next tick is the first after now (the ticks of the pause are
   * skipped). Resuming a running schedule changes nothing.
   *
   * @param name the schedule's name
   * @return the schedule as stored
   * @throws InvalidInputException naming {@code name} when it is not a valid name
   * @throws ScheduleNotFoundException when no schedule has the name
   */
  public Schedule resume(String name) {
    return setPaused(name, false);
  }

  private Schedule setPaused(String name, boolean paused) {
    checkName(name);
    return engine.write(
        paused ? "pause schedule" : "resume schedule",
        tx -> {
          LedgerSchedulesRecord r = lock(tx, name);
          if (r.getPaused() != paused) {
            Instant now = engine.now();
            r.setPaused(paused);
            if (!paused) {
              r.setNextTick(odt(new Ticks(timing(r)).next(now).orElse(null)));
            }
            r.setUpdatedAt(odt(now));
            tx.directory().executeUpdate(r);
          }
          return read(tx.directory(), name).orElseThrow();
        });
  }

  /**
   * Removes a schedule. The tasks it filed stay.
   *
   * @param name the schedule's name
   * @throws InvalidInputException naming {@code name} when it is not a valid name
   * @throws ScheduleNotFoundException when no schedule has the name
   */
  public void remove(String name) {
    checkName(name);
    engine.write(
        "remove schedule",
        tx -> {
          int n =
              tx.directory()
                  .deleteFrom(LEDGER_SCHEDULES)
                  .where(LEDGER_SCHEDULES.NAME.eq(name))
                  .execute();
          if (n == 0) {
            throw new ScheduleNotFoundException(name);
          }
          return null;
        });
  }

  /**
   * A schedule by name.
   *
   * @param name the name
   * @return the schedule, or empty when none has the name
   * @throws InvalidInputException naming {@code name} when it is not a valid name
   */
  public Optional<Schedule> get(String name) {
    checkName(name);
    return engine.read("get schedule", tx -> read(tx.directory(), name));
  }

  /**
   * Every schedule, by name.
   *
   * @return the schedules
   */
  public List<Schedule> list() {
    return engine.read(
        "list schedules",
        tx ->
            tx.directory()
                .selectFrom(LEDGER_SCHEDULES)
                .orderBy(LEDGER_SCHEDULES.NAME)
                .fetch(Schedules::schedule));
  }

  /**
   * The earliest next tick among a domain's running schedules: when to call {@link
   * #fileDue(String)} next. One indexed read.
   *
   * @param domain the domain
   * @return the time, or empty when the domain has no running schedule with a next tick
   */
  public Optional<Instant> nextTick(String domain) {
    return engine.read(
        "next schedule tick",
        tx ->
            Optional.ofNullable(
                    tx.directory()
                        .select(DSL.min(LEDGER_SCHEDULES.NEXT_TICK))
                        .from(LEDGER_SCHEDULES)
                        .where(LEDGER_SCHEDULES.DOMAIN.eq(domain))
                        .and(LEDGER_SCHEDULES.PAUSED.isFalse())
                        .fetchOne(0, OffsetDateTime.class))
                .map(OffsetDateTime::toInstant));
  }

  /**
   * Files the due ticks of every schedule, as {@link #fileDue(String)} does for one domain.
   *
   * @return how many ticks were filed (a tick another process filed first counts too)
   */
  public int fileDue() {
    return fileDueWhere(DSL.noCondition());
  }

  /**
   * Files the due ticks of a domain's running schedules: per schedule, in a transaction of its own,
   * its ticks from its next tick through now (the latest {@link ScheduleSpec#catchUp()} of them),
   * each as a task filed and admitted from {@code schedule:<name>} at the tick, and advances its
   * next tick. A schedule another process is filing is skipped (it files them). At most {@value
   * #MAX_SCHEDULES_PER_CALL} schedules per call; cheap when nothing is due (one indexed read).
   *
   * @param domain the domain
   * @return how many ticks were filed (a tick another process filed first counts too)
   * @throws InvalidInputException naming {@code domain} when it is not a valid domain name
   */
  public int fileDue(String domain) {
    Validation.domain(domain);
    return fileDueWhere(LEDGER_SCHEDULES.DOMAIN.eq(domain));
  }

  private int fileDueWhere(Condition which) {
    int filed = 0;
    for (int i = 0; i < MAX_SCHEDULES_PER_CALL; i++) {
      Integer n = engine.write("file due ticks", tx -> fileOne(tx, which));
      if (n == null) {
        break;
      }
      filed += n;
    }
    return filed;
  }

  /** Files one due schedule's ticks; null when none is due (or every due one is held). */
  private Integer fileOne(Tx tx, Condition which) {
    Instant now = engine.now();
    LedgerSchedulesRecord r =
        tx.directory()
            .selectFrom(LEDGER_SCHEDULES)
            .where(which)
            .and(LEDGER_SCHEDULES.PAUSED.isFalse())
            .and(LEDGER_SCHEDULES.NEXT_TICK.le(odt(now)))
            .orderBy(LEDGER_SCHEDULES.NEXT_TICK)
            .limit(1)
            .forUpdate()
            .skipLocked()
            .fetchOne();
    if (r == null) {
      return null;
    }
    Schedule s = schedule(r);
    Ticks.Due due = new Ticks(s.spec().timing()).due(s.nextTick(), now, s.spec().catchUp());
    for (Instant tick : due.ticks()) {
      filing.fileAndAdmit(tx, task(s.spec(), tick));
    }
    if (!due.ticks().isEmpty()) {
      r.setLastTick(odt(due.ticks().get(due.ticks().size() - 1)));
    }
    r.setNextTick(odt(due.next()));
    tx.directory().executeUpdate(r);
    return due.ticks().size();
  }

  /**
   * The task a schedule files at a tick.
   *
   * @param spec the schedule
   * @param tick the tick
   * @return the task's spec
   */
  static TaskSpec task(ScheduleSpec spec, Instant tick) {
    return TaskSpec.builder(spec.domain(), spec.title())
        .body(spec.body())
        .requirements(spec.requirements())
        .classification(spec.label())
        .priority(spec.priority())
        .maxAttempts(spec.maxAttempts())
        .origin(origin(spec.name()), upstreamEvent(tick))
        .createdBy(FILED_BY)
        .build();
  }

  private static void check(ScheduleSpec spec) {
    if (spec == null) {
      throw new InvalidInputException("spec", "must not be null");
    }
    checkName(spec.name());
    Validation.domain(spec.domain());
    if (spec.timing() == null) {
      throw new InvalidInputException("timing", "must not be null (a cron expression or interval)");
    }
    if (spec.catchUp() < 1 || spec.catchUp() > ScheduleSpec.MAX_CATCH_UP) {
      throw new InvalidInputException(
          "catch_up", "must be 1 (the latest tick only) to " + ScheduleSpec.MAX_CATCH_UP);
    }
    // the task's own rules (title, body, requirements, max_attempts), on a task of its first tick
    Validation.spec(task(spec, Instant.EPOCH));
  }

  /**
   * Checks a schedule's name.
   *
   * @param name the name
   * @throws InvalidInputException naming {@code name}
   */
  static void checkName(String name) {
    if (name == null || name.isEmpty()) {
      throw new InvalidInputException("name", "must not be empty");
    }
    if (name.length() > MAX_NAME) {
      throw new InvalidInputException("name", "longer than " + MAX_NAME + " characters");
    }
    if (!NAME.matcher(name).matches()) {
      throw new InvalidInputException(
          "name", "must be letters, digits and . _ : - only, starting with a letter or digit");
    }
  }

  private static LedgerSchedulesRecord lock(Tx tx, String name) {
    checkName(name);
    LedgerSchedulesRecord r =
        tx.directory()
            .selectFrom(LEDGER_SCHEDULES)
            .where(LEDGER_SCHEDULES.NAME.eq(name))
            .forUpdate()
            .fetchOne();
    if (r == null) {
      throw new ScheduleNotFoundException(name);
    }
    return r;
  }

  private static Optional<Schedule> read(DSLContext ctx, String name) {
    return ctx.selectFrom(LEDGER_SCHEDULES)
        .where(LEDGER_SCHEDULES.NAME.eq(name))
        .fetchOptional()
        .map(Schedules::schedule);
  }

  private static void fill(LedgerSchedulesRecord r, ScheduleSpec spec) {
    Timing t = spec.timing();
    r.setName(spec.name());
    r.setDomain(spec.domain());
    r.setCron(t.cronExpression());
    r.setZone(t.zone() == null ? null : t.zone().getId());
    r.setIntervalSeconds(t.interval() == null ? null : t.interval().getSeconds());
    r.setTitle(spec.title());
    r.setBody(spec.body());
    r.setRequirements(spec.requirements().toArray(String[]::new));
    r.setLabel(spec.label().wire());
    r.setPriority(spec.priority());
    r.setMaxAttempts((long) spec.maxAttempts());
    r.setCatchUp((long) spec.catchUp());
  }

  private static Timing timing(LedgerSchedulesRecord r) {
    return r.getCron() != null
        ? Timing.cron(r.getCron(), r.getZone())
        : Timing.every(Duration.ofSeconds(r.getIntervalSeconds()));
  }

  private static Schedule schedule(LedgerSchedulesRecord r) {
    ScheduleSpec spec =
        new ScheduleSpec(
            r.getName(),
            r.getDomain(),
            timing(r),
            r.getTitle(),
            r.getBody(),
            List.of(r.getRequirements()),
            Label.parse(r.getLabel()),
            r.getPriority(),
            r.getMaxAttempts().intValue(),
            r.getCatchUp().intValue());
    return new Schedule(
        spec,
        r.getPaused(),
        instant(r.getLastTick()),
        instant(r.getNextTick()),
        instant(r.getCreatedAt()),
        instant(r.getUpdatedAt()));
  }

  private static OffsetDateTime odt(Instant i) {
    return i == null ? null : OffsetDateTime.ofInstant(i, ZoneOffset.UTC);
  }

  private static Instant instant(OffsetDateTime t) {
    return t == null ? null : t.toInstant();
  }
}
