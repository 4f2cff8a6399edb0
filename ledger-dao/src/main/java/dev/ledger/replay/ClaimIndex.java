package dev.ledger.replay;

import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_DEPENDENCIES;
import static dev.ledger.codegen.db.ledger_directory.Tables.LEDGER_TASKS;
import static dev.ledger.codegen.db.ledger_template.Tables.CLAIM_CLASSES;
import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.codegen.convert.StringListConverter;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collection;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.InsertValuesStep2;
import org.jooq.InsertValuesStep3;
import org.jooq.impl.DSL;

/**
 * The replay's half of what makes a claim's cost flat (domain migration V6, directory migration
 * V3): the {@code blocked} flag of tasks with an open dependency, the dependency edges in {@code
 * ledger_dependencies}, and the domain's {@code claim_classes}, all derived from the events. Live
 * writes (ours and the reference stack's) keep them right through the database's triggers (domain
 * V8, directory V5), which a replay skips; a replay rebuilds them in bulk here with {@link
 * #rebuildDomain} and {@link #recomputeBlocked}.
 */
public final class ClaimIndex {

  private static final StringListConverter LIST = new StringListConverter();

  private ClaimIndex() {}

  /**
   * Rebuilds a domain's claim classes and dependency edges from its (replayed) task rows. Call
   * after the domain's old routes are gone and before its rows are inserted.
   *
   * @param ctx a context in the replay transaction, mapped to the domain's schema
   * @param domain the domain
   * @param tasks the domain's replayed rows
   */
  public static void rebuildDomain(DSLContext ctx, String domain, Collection<TasksRecord> tasks) {
    ctx.deleteFrom(CLAIM_CLASSES).execute();
    Map<String, ClaimClass> classes = new LinkedHashMap<>();
    // few distinct requirement lists among many tasks: their JSON and MD5 once per list
    Map<List<String>, String[]> texts = new HashMap<>();
    List<String[]> edges = new java.util.ArrayList<>();
    for (TasksRecord t : tasks) {
      String[] text =
          texts.computeIfAbsent(
              t.getRequirements(),
              r -> {
                String json = LIST.to(r);
                return new String[] {json, md5(json)};
              });
      ClaimClass c = new ClaimClass(t.getLabelRank(), text[1], text[0]);
      classes.putIfAbsent(c.rank() + ":" + c.md5(), c);
      for (String dep : t.getDependsOn()) {
        edges.add(new String[] {dep, t.getId()});
      }
    }
    for (List<ClaimClass> chunk : chunks(List.copyOf(classes.values()), 1000)) {
      InsertValuesStep3<?, Long, String, String> insert =
          ctx.insertInto(
              CLAIM_CLASSES,
              CLAIM_CLASSES.LABEL_RANK,
              CLAIM_CLASSES.REQUIREMENTS_MD5,
              CLAIM_CLASSES.REQUIREMENTS);
      for (ClaimClass c : chunk) {
        insert = insert.values(c.rank(), c.md5(), c.requirements());
      }
      insert.onConflictDoNothing().execute();
    }
    for (List<String[]> chunk : chunks(edges, 5000)) {
      InsertValuesStep2<?, String, String> insert =
          ctx.insertInto(
              LEDGER_DEPENDENCIES, LEDGER_DEPENDENCIES.DEPENDS_ON, LEDGER_DEPENDENCIES.TASK_ID);
      for (String[] e : chunk) {
        insert = insert.values(e[0], e[1]);
      }
      insert.onConflictDoNothing().execute();
    }
  }

  /**
   * Removes a domain's dependency edges, before its routes are deleted for a replay.
   *
   * @param ctx a context in the replay transaction
   * @param domain the domain
   */
  public static void forgetDomain(DSLContext ctx, String domain) {
    ctx.deleteFrom(LEDGER_DEPENDENCIES)
        .where(
            LEDGER_DEPENDENCIES.TASK_ID.in(
                DSL.select(LEDGER_TASKS.ID)
                    .from(LEDGER_TASKS)
                    .where(LEDGER_TASKS.DOMAIN.eq(domain))))
        .execute();
  }

  /**
   * Sets {@code blocked} on every task of a domain from its dependencies' {@code completed} flags:
   * the last step of a replay, once every domain's routes are back.
   *
   * @param ctx a context in the replay transaction, mapped to the domain's schema
   */
  public static void recomputeBlocked(DSLContext ctx) {
    ctx.update(TASKS)
        .set(TASKS.BLOCKED, true)
        .where(TASKS.DEPENDS_ON.ne(DSL.inline(List.<String>of(), TASKS.DEPENDS_ON)))
        .and(DSL.exists(openDependency(TASKS.ID)))
        .execute();
  }

  /**
   * {@link #recomputeBlocked} in three statements, for Citus ({@code docs/scale-out.md}): the
   * domain's tasks with dependencies (read on the domain's node), those of them with an open
   * dependency (read in the directory, on the coordinator), then the flags of the former set from
   * the latter, both ways. One statement cannot join a distributed schema's table with the
   * directory's local tables there. Both ways, because the rows do not arrive unblocked here: the
   * transaction-local {@code ledger.replay} is not sent to the domain's node, so the domain's row
   * trigger runs there as the rows are copied in, finds no directory, and marks every task with
   * dependencies blocked.
   *
   * @param ctx a context in the replay transaction, mapped to the domain's schema
   */
  public static void recomputeBlockedApart(DSLContext ctx) {
    String[] withDependencies =
        ctx.select(TASKS.ID)
            .from(TASKS)
            .where(TASKS.DEPENDS_ON.ne(DSL.inline(List.<String>of(), TASKS.DEPENDS_ON)))
            .fetchArray(TASKS.ID);
    if (withDependencies.length == 0) {
      return;
    }
    var r = LEDGER_TASKS.as("r");
    String[] open =
        ctx.selectDistinct(LEDGER_DEPENDENCIES.TASK_ID)
            .from(LEDGER_DEPENDENCIES)
            .leftJoin(r)
            .on(r.ID.eq(LEDGER_DEPENDENCIES.DEPENDS_ON))
            .where(LEDGER_DEPENDENCIES.TASK_ID.eq(DSL.any(withDependencies)))
            .and(r.COMPLETED.isNull().or(r.COMPLETED.isFalse()))
            .fetchArray(LEDGER_DEPENDENCIES.TASK_ID);
    Field<Boolean> isOpen = DSL.field(TASKS.ID.eq(DSL.any(open)));
    ctx.update(TASKS)
        .set(TASKS.BLOCKED, isOpen)
        .where(TASKS.ID.eq(DSL.any(withDependencies)))
        .and(TASKS.BLOCKED.isDistinctFrom(isOpen))
        .execute();
  }

  /**
   * The open dependencies of the task whose id is {@code taskId}: edges to a task not completed.
   */
  private static org.jooq.Select<?> openDependency(Field<String> taskId) {
    var r = LEDGER_TASKS.as("r");
    return DSL.selectOne()
        .from(LEDGER_DEPENDENCIES)
        .leftJoin(r)
        .on(r.ID.eq(LEDGER_DEPENDENCIES.DEPENDS_ON))
        .where(LEDGER_DEPENDENCIES.TASK_ID.eq(taskId))
        .and(r.COMPLETED.isNull().or(r.COMPLETED.isFalse()));
  }

  /**
   * The MD5 of a text's UTF-8 bytes, lowercase hex, as PostgreSQL's {@code md5()}.
   *
   * @param text the text
   * @return 32 hex digits
   */
  public static String md5(String text) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("MD5").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has MD5", e);
    }
  }

  private record ClaimClass(long rank, String md5, String requirements) {}

  private static <T> List<List<T>> chunks(List<T> all, int size) {
    List<List<T>> out = new java.util.ArrayList<>();
    for (int i = 0; i < all.size(); i += size) {
      out.add(all.subList(i, Math.min(all.size(), i + size)));
    }
    return out;
  }
}
