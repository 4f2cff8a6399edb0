package dev.ledger.testing;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_TASKS;
import static dev.ledger.codegen.db.ledger_template.Tables.EVENTS;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.schema.DomainSchemas;
import dev.ledger.schema.RenderMappedDsl;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

/**
 * Reads a domain's event log and projection straight from its schema, around the ledger, so a test
 * can check what was really written (the directory schema is {@code public}).
 */
public final class DomainLog {

  private final DSLContext ctx;
  private final String domain;

  /**
   * Reads a domain of a database.
   *
   * @param dataSource the database
   * @param domain the domain, which must have a schema
   */
  public DomainLog(DataSource dataSource, String domain) {
    this.ctx =
        new RenderMappedDsl(dataSource, "public", List.of())
            .forSchema(DomainSchemas.schemaName(domain));
    this.domain = domain;
  }

  /**
   * Every task's event kinds, in log order.
   *
   * @return task id to its kinds, tasks in the order of their first event
   */
  public Map<String, List<String>> kindsByTask() {
    Map<String, List<String>> kinds = new LinkedHashMap<>();
    ctx.select(EVENTS.TASK_ID, EVENTS.KIND)
        .from(EVENTS)
        .orderBy(EVENTS.SEQ)
        .forEach(
            r ->
                kinds
                    .computeIfAbsent(r.value1(), k -> new java.util.ArrayList<>())
                    .add(r.value2()));
    return kinds;
  }

  /**
   * How many events of a kind each task has.
   *
   * @param kind e.g. {@code completed}
   * @return task id to count; tasks without such an event are absent
   */
  public Map<String, Integer> countOf(String kind) {
    Map<String, Integer> counts = new LinkedHashMap<>();
    ctx.select(EVENTS.TASK_ID, DSL.count())
        .from(EVENTS)
        .where(EVENTS.KIND.eq(kind))
        .groupBy(EVENTS.TASK_ID)
        .forEach(r -> counts.put(r.value1(), r.value2()));
    return counts;
  }

  /**
   * How many events the domain's log holds.
   *
   * @return the count
   */
  public int eventCount() {
    return ctx.fetchCount(EVENTS);
  }

  /**
   * How many rows the domain's projection holds.
   *
   * @return the count of {@code tasks} rows
   */
  public int taskRowCount() {
    return ctx.fetchCount(TASKS);
  }

  /**
   * How many of the domain's tasks the directory routes, and how many of them it marks completed.
   *
   * @return {@code [routed, completed]}
   */
  public int[] routes() {
    int routed = ctx.fetchCount(LEDGER_TASKS, LEDGER_TASKS.DOMAIN.eq(domain));
    int completed =
        ctx.fetchCount(
            LEDGER_TASKS, LEDGER_TASKS.DOMAIN.eq(domain).and(LEDGER_TASKS.COMPLETED.isTrue()));
    return new int[] {routed, completed};
  }
}
