package dev.ledger.app.task;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.DomainInfo;
import dev.ledger.Label;
import dev.ledger.Ledger;
import dev.ledger.Promotion;
import dev.ledger.PromotionSpec;
import dev.ledger.Redaction;
import dev.ledger.ScrubResult;
import dev.ledger.Status;
import dev.ledger.app.Converters;
import dev.ledger.app.ExitCodes;
import dev.ledger.app.LedgerCommand;
import dev.ledger.app.Output;
import java.io.PrintWriter;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The commands over whole domains rather than one task: domains, promote, promotions, scrub,
 * replay.
 */
public final class DomainCommands {

  private DomainCommands() {}

  /** {@code domains}. */
  @Command(
      name = "domains",
      mixinStandardHelpOptions = true,
      description =
          "List each domain, its schema, its version, task counts by status and queue controls.",
      footer = {"", "Example:", "  ledger-app domains --json"})
  public static final class Domains extends LedgerCommand {
    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      List<DomainInfo> domains = ledger.describeDomains();
      if (json) {
        ArrayNode a = Output.array();
        for (DomainInfo d : domains) {
          ObjectNode o = a.addObject();
          o.put("domain", d.domain());
          o.put("schema", d.schema());
          o.put("version", d.version());
          ObjectNode counts = o.putObject("tasks");
          d.tasks().forEach((s, n) -> counts.put(s.wire(), n));
          o.set("controls", ControlCommands.controls(ledger.controls(d.domain())));
        }
        Output.json(out, Output.object().set("domains", a));
        return ExitCodes.OK;
      }
      out.println(
          String.format(
              "%-22s %-3s %6s %6s %6s %6s %6s",
              "DOMAIN", "V", "PROP", "ADM", "CLM", "DONE", "INV"));
      for (DomainInfo d : domains) {
        out.println(
            String.format(
                "%s %-3s %6d %6d %6d %6d %6d",
                Output.pad(Output.fit(d.domain(), 22), 22),
                d.version() == null ? "-" : d.version(),
                d.tasks().get(Status.PROPOSED),
                d.tasks().get(Status.ADMITTED),
                d.tasks().get(Status.CLAIMED),
                d.tasks().get(Status.COMPLETED),
                d.tasks().get(Status.INVALIDATED)));
        out.println("  schema " + d.schema());
        dev.ledger.DomainControls c = ledger.controls(d.domain());
        if (c.any()) {
          out.println("  controls: " + ControlCommands.line(c));
        }
      }
      out.println(domains.size() + " domain(s)");
      return ExitCodes.OK;
    }
  }

  /** {@code promote}. */
  @Command(
      name = "promote",
      mixinStandardHelpOptions = true,
      description = "Record a promotion (once per entry, tier, digest and promoter).",
      footer = {
        "",
        "Example:",
        "  ledger-app promote --domain docs --entry runbook/oncall --tier reviewed \\",
        "      --by dan --author erin --why 'reviewed by two people' --digest d175"
      })
  public static final class Promote extends LedgerCommand {
    @Option(names = "--domain", required = true, description = "The domain.")
    String domain;

    @Option(names = "--entry", required = true, description = "The entry.")
    String entry;

    @Option(names = "--tier", required = true, description = "The tier, e.g. reviewed.")
    String tier;

    @Option(names = "--by", required = true, description = "The promoter.")
    String by;

    @Option(names = "--author", required = true, description = "The entry's author.")
    String author;

    @Option(names = "--why", required = true, description = "Why it is promoted.")
    String why;

    @Option(
        names = "--label",
        defaultValue = "public",
        converter = Converters.Labels.class,
        description = "The entry's label: public (default), internal, confidential, restricted.")
    Label label;

    @Option(names = "--digest", required = true, description = "Digest of the version promoted.")
    String digest;

    @Option(names = "--new-digest", defaultValue = "", description = "Digest produced, if any.")
    String newDigest;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      boolean recorded =
          ledger.recordPromotion(
              new PromotionSpec(domain, entry, tier, by, author, why, label, digest, newDigest));
      return print(
          out,
          Output.object().put("entry", entry).put("recorded", recorded),
          recorded ? "recorded" : "already recorded");
    }
  }

  /** {@code promotions}. */
  @Command(
      name = "promotions",
      mixinStandardHelpOptions = true,
      description = "List an entry's promotions in the order recorded.",
      footer = {"", "Example:", "  ledger-app promotions --domain docs --entry runbook/oncall"})
  public static final class Promotions extends LedgerCommand {
    @Option(names = "--domain", required = true, description = "The domain.")
    String domain;

    @Option(names = "--entry", required = true, description = "The entry.")
    String entry;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      List<Promotion> all = ledger.promotions(domain, entry);
      if (json) {
        ArrayNode a = Output.array();
        all.forEach(p -> a.add(Output.promotion(p)));
        Output.json(out, Output.object().put("entry", entry).set("promotions", a));
        return ExitCodes.OK;
      }
      for (Promotion p : all) {
        out.println(
            Output.fit(
                Output.time(p.at())
                    + "  "
                    + p.spec().tier()
                    + " by "
                    + p.spec().by()
                    + "  "
                    + p.spec().digest(),
                Output.WIDTH));
        out.println("  why " + (p.whyErased() ? "(erased)" : Output.fit(p.spec().why(), 70)));
      }
      out.println(all.size() + " promotion(s)");
      return ExitCodes.OK;
    }
  }

  /** {@code scrub}. */
  @Command(
      name = "scrub",
      mixinStandardHelpOptions = true,
      description = {
        "Erase an entry's texts from its promotions and from the tasks filed from it.",
        "The why of the entry's promotions, and the title, body, reason and handoffs of",
        "every task filed from the origin, are overwritten (open tasks are invalidated)."
      },
      footer = {
        "",
        "Example:",
        "  ledger-app scrub --domain docs --entry runbook/oncall \\",
        "      --origin entry:runbook/oncall"
      })
  public static final class Scrub extends LedgerCommand {
    @Option(names = "--domain", required = true, description = "The domain.")
    String domain;

    @Option(names = "--entry", required = true, description = "The entry.")
    String entry;

    @Option(names = "--origin", required = true, description = "The origin of the tasks.")
    String origin;

    @Option(names = "--title", defaultValue = "[erased]", description = "Title written instead.")
    String title;

    @Option(
        names = "--reason",
        defaultValue = "erased on request",
        description = "Reason and handoff written instead.")
    String reason;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      // an erasure under a misspelt domain would report 0 and 0, which reads as done
      requireDomains(ledger, java.util.List.of(domain), "--domain", false);
      ScrubResult r = ledger.scrubEntry(domain, entry, origin, new Redaction(title, "", reason));
      return print(
          out,
          Output.object().put("promotions", r.promotions()).put("tasks", r.tasks()),
          "scrubbed " + r.promotions() + " promotion(s) and " + r.tasks() + " task(s)");
    }
  }

  /** {@code replay}. */
  @Command(
      name = "replay",
      mixinStandardHelpOptions = true,
      description = "Replay every domain's events into a fresh projection.",
      footer = {
        "",
        "Example:",
        "  ledger-app replay --url jdbc:postgresql://127.0.0.1/app?user=app"
      })
  public static final class Replay extends LedgerCommand {
    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      long start = System.nanoTime();
      long events = ledger.replay();
      long ms = (System.nanoTime() - start) / 1_000_000;
      return print(
          out,
          Output.object().put("events", events).put("ms", ms),
          "replayed " + events + " event(s) in " + ms + " ms");
    }
  }
}
