package dev.ledger.migrate;

import java.sql.SQLException;
import java.util.List;
import org.jooq.exception.DataAccessException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The order of a migration run, under the job's lock (the steps of {@link MigrationJob}'s class
 * comment): the first observation ({@link SchemaPlanner}), the directory schema's run, the move of
 * shared tables, each domain schema's run ({@link SchemaRunner}), the check of what ran, the state
 * rows ({@link StateRecorder}) and the report ({@link RunReporter}).
 */
final class MigrationRun {

  /** The job's logger: a run's lines keep the category they always had. */
  private static final Logger LOG = LoggerFactory.getLogger(MigrationJob.class);

  private final RunContext ctx;
  private final SchemaPlanner planner;
  private final SchemaRunner runner;
  private final StateRecorder recorder;

  MigrationRun(RunContext ctx) {
    this.ctx = ctx;
    this.planner = new SchemaPlanner(ctx);
    this.runner = new SchemaRunner(ctx);
    this.recorder = new StateRecorder(ctx);
  }

  /**
   * Runs the operation.
   *
   * @return the report
   * @throws SQLException when a connection cannot be opened or used
   * @throws InterruptedException when the thread is interrupted while domain schemas run
   */
  MigrationReport execute() throws SQLException, InterruptedException {
    MigrationSet directorySet = ctx.sets.directory(ctx.dataSource);
    MigrationSet domainSet = ctx.sets.domain(ctx.dataSource);
    SchemaStates.Probe probe = ctx.states.probe();
    SchemaStates.Recorded recorded = probe.stateTable() ? ctx.states.read() : null;
    if (recorded != null) {
      recorder.remember(recorded);
    }
    Observation first = planner.first(probe, recorded, directorySet, domainSet);
    if (ctx.operation != Operation.MIGRATE) {
      if (first.census() != null) {
        ctx.sharedReport = sharedReport(first.census(), false, null);
      }
      ctx.listener.started(ctx.operation, 0);
      return RunReporter.report(ctx, first);
    }
    int planned =
        (first.directory().action.runs() ? 1 : 0)
            + (int) first.domains().stream().filter(w -> w.action.runs()).count()
            + (int) first.moveTargets().stream().filter(w -> w.action.runs()).count();
    ctx.listener.started(ctx.operation, planned);

    Work directory = first.directory();
    boolean changed = false;
    if (directory.action.runs()) {
      runner.runDirectory(directory);
      changed = true;
    }
    if (first.census() != null) {
      if (directory.error != null) {
        ctx.sharedReport =
            sharedReport(
                first.census(),
                false,
                "not moved: the directory schema " + ctx.directorySchema + " failed to migrate");
      } else {
        moveShared(first);
        changed = true;
      }
    }
    Observation current = changed ? planner.observe(directorySet, domainSet, null) : first;
    List<Work> todo =
        current.domains().stream()
            .filter(w -> w.action.runs() && !ctx.ran.containsKey(w.schema))
            .toList();
    runner.runAll(todo);
    planner.verify(directorySet, domainSet);
    recorder.record(current, directorySet, domainSet);
    return RunReporter.report(ctx, current);
  }

  /** Moves the shared tables: makes each domain's schema, then the one data transaction. */
  private void moveShared(Observation observation) throws InterruptedException {
    SharedTables.Census census = observation.census();
    List<Work> targets = observation.moveTargets().stream().filter(w -> w.action.runs()).toList();
    runner.runAll(targets);
    List<String> failed =
        observation.moveTargets().stream()
            .filter(w -> w.error != null || w.action == Work.Action.FAIL)
            .map(w -> w.schema)
            .toList();
    if (!failed.isEmpty()) {
      ctx.sharedReport =
          sharedReport(census, false, "not moved: schemas " + failed + " could not be made");
      return;
    }
    try {
      boolean moved = ctx.shared.move(ctx.dataSource, ctx.plain, ctx.mapped, census);
      ctx.sharedReport = sharedReport(census, moved, null);
      if (!moved) {
        ctx.warnings.add(
            "another run moved the shared tables first; nothing was moved by this run");
      } else {
        LOG.info(
            "moved {} domains from {}.tasks/events into their schemas",
            census.domains().size(),
            ctx.directorySchema);
      }
    } catch (SharedTables.MoveRefusedException e) {
      ctx.sharedReport = sharedReport(census, false, e.getMessage());
    } catch (SQLException | DataAccessException e) {
      ctx.sharedReport =
          sharedReport(
              census,
              false,
              "the move failed and was rolled back: " + MigrationJob.condense(e.getMessage()));
    }
  }

  private SharedTablesReport sharedReport(SharedTables.Census census, boolean moved, String error) {
    return new SharedTablesReport(
        moved,
        census.domains(),
        ctx.directorySchema + "." + SharedTables.TASKS_KEPT,
        ctx.directorySchema + "." + SharedTables.EVENTS_KEPT,
        census.orphanEvents(),
        error);
  }
}
