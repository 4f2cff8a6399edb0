package dev.ledger.app.retention;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.Ledger;
import dev.ledger.app.Durations;
import dev.ledger.app.ExitCodes;
import dev.ledger.app.LedgerCommand;
import dev.ledger.app.Output;
import dev.ledger.retention.PurgeReport;
import dev.ledger.retention.PurgeReport.DomainPurge;
import dev.ledger.retention.Retention;
import dev.ledger.retention.RetentionSetting;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/** The subcommands of {@code retention}: set, clear, show, run. */
public final class RetentionCommands {

  /** How often {@code retention run} prints a progress line (to standard error). */
  static final Duration PROGRESS_EVERY = Duration.ofSeconds(5);

  private RetentionCommands() {}

  /**
   * {@code --batch}: a whole number from 1 to {@link Retention#MAX_BATCH}, checked before the
   * database is opened.
   */
  static final class BatchSize implements ITypeConverter<Integer> {
    @Override
    public Integer convert(String value) {
      int n;
      try {
        n = Integer.parseInt(value.trim());
      } catch (NumberFormatException e) {
        throw new TypeConversionException("'" + value + "' is not a whole number");
      }
      if (n < 1 || n > Retention.MAX_BATCH) {
        throw new TypeConversionException(
            "'" + value + "' is out of range: tasks per batch are 1 to " + Retention.MAX_BATCH);
      }
      return n;
    }
  }

  /**
   * Refuses a domain that neither exists nor has a retention row (one set with {@code --create}, or
   * left by purges): most often a misspelt name.
   */
  abstract static class OnDomain extends LedgerCommand {
    /** Refuses the domain unless it exists, has a retention row, or {@code create} is given. */
    final void requireKnown(Ledger ledger, String domain, boolean create) {
      if (!create && ledger.retention().get(domain).isEmpty()) {
        requireDomains(ledger, List.of(domain), "--domain", false);
      }
    }
  }

  /** {@code retention set}. */
  @Command(
      name = "set",
      mixinStandardHelpOptions = true,
      description = "Set how long a domain keeps its completed and invalidated tasks.",
      footer = {"", "Example:", "  ledger-app retention set --domain payments --keep 36h"})
  public static final class Set extends OnDomain {
    @Option(names = "--domain", required = true, description = "The domain.")
    String domain;

    @Option(
        names = "--create",
        description =
            "Allow a domain that does not exist yet (no task filed there); without it an unknown"
                + " domain is refused, so a misspelt name sets nothing.")
    boolean create;

    @Option(
        names = "--keep",
        required = true,
        converter = Durations.class,
        description = "How long after its terminal event a task is kept: 90s, 36h, 7d, PT36H.")
    Duration keep;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      requireKnown(ledger, domain, create);
      ledger.retention().set(domain, keep);
      return print(
          out,
          Output.object().put("domain", domain).put("retention_seconds", keep.getSeconds()),
          "domain "
              + Output.escape(domain)
              + " keeps terminal tasks for "
              + Durations.format(keep));
    }
  }

  /** {@code retention clear}. */
  @Command(
      name = "clear",
      mixinStandardHelpOptions = true,
      description = "Clear a domain's retention: its tasks are kept forever again.",
      footer = {"", "Example:", "  ledger-app retention clear --domain payments"})
  public static final class Clear extends OnDomain {
    @Option(names = "--domain", required = true, description = "The domain.")
    String domain;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      requireKnown(ledger, domain, false);
      boolean had = ledger.retention().clear(domain);
      return print(
          out,
          Output.object().put("domain", domain).put("cleared", had),
          had ? "cleared" : "domain " + Output.escape(domain) + " had no retention");
    }
  }

  /** {@code retention show}. */
  @Command(
      name = "show",
      mixinStandardHelpOptions = true,
      description = "Show each domain's retention and what purges removed so far.",
      footer = {"", "Example:", "  ledger-app retention show --json"})
  public static final class Show extends OnDomain {
    @Option(names = "--domain", description = "Only this domain.")
    String domain;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      Retention r = ledger.retention();
      if (domain != null) {
        requireKnown(ledger, domain, false);
      }
      List<RetentionSetting> rows =
          domain == null ? r.list() : r.get(domain).map(List::of).orElse(List.of());
      if (json) {
        ArrayNode a = Output.array();
        for (RetentionSetting s : rows) {
          ObjectNode o = a.addObject();
          o.put("domain", s.domain());
          if (s.retention().isPresent()) {
            o.put("retention_seconds", s.retention().get().getSeconds());
          } else {
            o.putNull("retention_seconds");
          }
          o.put("removed_through_seq", s.removedThroughSeq());
          o.put("tasks_removed", s.tasksRemoved());
          o.put("events_removed", s.eventsRemoved());
          o.put("last_purge_at", s.lastPurgeAt() == null ? null : Output.time(s.lastPurgeAt()));
        }
        Output.json(out, Output.object().set("domains", a));
        return ExitCodes.OK;
      }
      out.println(
          String.format("%-22s %12s %12s %12s", "DOMAIN", "KEEP", "REMOVED", "THROUGH_SEQ"));
      for (RetentionSetting s : rows) {
        out.println(
            String.format(
                "%s %12s %12d %12d",
                Output.pad(Output.fit(s.domain(), 22), 22),
                s.retention().map(Durations::format).orElse("-"),
                s.tasksRemoved(),
                s.removedThroughSeq()));
      }
      out.println(rows.size() + " domain(s)");
      return ExitCodes.OK;
    }
  }

  /** {@code retention run}. */
  @Command(
      name = "run",
      mixinStandardHelpOptions = true,
      description = {
        "Purge completed and invalidated tasks older than their domain's retention.",
        "Events, routes and dependency edges go with each task, in batches of their own",
        "transactions; tasks an open task depends on or continues are kept. Progress",
        "lines go to standard error every 5 seconds; the summary to standard output."
      },
      footer = {"", "Example:", "  ledger-app retention run --domain payments --batch 1000 --json"})
  public static final class Run extends OnDomain {
    @Option(names = "--domain", description = "Only this domain (default: every domain with one).")
    String domain;

    @Option(
        names = "--batch",
        defaultValue = "1000",
        converter = BatchSize.class,
        description = "Tasks per transaction, 1 to 10000 (default: ${DEFAULT-VALUE}).")
    int batch;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      if (domain != null) {
        requireKnown(ledger, domain, false);
      }
      PrintWriter err = spec.commandLine().getErr();
      long[] next = {System.nanoTime() + PROGRESS_EVERY.toNanos()};
      PurgeReport r =
          ledger
              .retention()
              .purge(
                  domain,
                  batch,
                  p -> {
                    if (System.nanoTime() - next[0] >= 0) {
                      next[0] = System.nanoTime() + PROGRESS_EVERY.toNanos();
                      err.println(
                          "retention: "
                              + p.domain()
                              + ": "
                              + p.tasksRemoved()
                              + " tasks, "
                              + p.eventsRemoved()
                              + " events removed in "
                              + p.batches()
                              + " batches");
                      err.flush();
                    }
                  });
      if (json) {
        ArrayNode a = Output.array();
        for (DomainPurge p : r.domains()) {
          a.addObject()
              .put("domain", p.domain())
              .put("tasks_removed", p.tasksRemoved())
              .put("events_removed", p.eventsRemoved())
              .put("batches", p.batches())
              .put("tasks_kept", p.tasksKept())
              .put("batches_skipped", p.batchesSkipped())
              .put("claim_classes_removed", p.claimClassesRemoved())
              .put("removed_through_seq", p.removedThroughSeq())
              .put("busy", p.busy());
        }
        Output.json(
            out,
            Output.object()
                .put("tasks_removed", r.tasksRemoved())
                .put("events_removed", r.eventsRemoved())
                .put("batches", r.batches())
                .put("elapsed_ms", r.elapsed().toMillis())
                .set("domains", a));
        return ExitCodes.OK;
      }
      for (DomainPurge p : r.domains()) {
        out.println(
            Output.fit(p.domain(), 40)
                + ": "
                + p.tasksRemoved()
                + " tasks, "
                + p.eventsRemoved()
                + " events removed; "
                + p.tasksKept()
                + " kept (needed)"
                + (p.busy() ? "; another purge was running" : "")
                + (p.batchesSkipped() > 0 ? "; " + p.batchesSkipped() + " batches skipped" : ""));
      }
      out.println(
          r.tasksRemoved()
              + " tasks, "
              + r.eventsRemoved()
              + " events removed in "
              + r.batches()
              + " batches, "
              + r.elapsed().toMillis()
              + " ms");
      return ExitCodes.OK;
    }
  }
}
