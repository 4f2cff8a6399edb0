package dev.ledger.app.task;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.DomainControls;
import dev.ledger.Ledger;
import dev.ledger.app.Durations;
import dev.ledger.app.LedgerCommand;
import dev.ledger.app.Output;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code ledger-app domain pause|resume|limit}: a domain's queue controls (docs/controls.md), and
 * how {@code domains} and {@code task claim} show them.
 */
public final class ControlCommands {

  private ControlCommands() {}

  /** {@code ledger-app domain ...}. */
  @Command(
      name = "domain",
      description = "Control a domain's claims: pause, resume, limit concurrency and rate.",
      mixinStandardHelpOptions = true,
      footer = {
        "",
        "Examples:",
        "  ledger-app domain pause payments",
        "  ledger-app domain limit payments --concurrency 3 --rate 10/1s --json"
      },
      subcommands = {Pause.class, Resume.class, Limit.class})
  public static final class DomainCommand {

    /** {@code --json} before the subcommand. */
    @picocli.CommandLine.Mixin dev.ledger.app.ParentJson json;
  }

  /**
   * What {@code domain pause|resume|limit} share: the domain, refused when unknown unless {@code
   * --create} is given (the library would make it), and the controls printed after the change.
   */
  abstract static class DomainControl extends LedgerCommand {
    @Parameters(index = "0", paramLabel = "DOMAIN", description = "The domain.")
    String domain;

    @Option(
        names = "--create",
        description =
            "Make the domain if it does not exist yet (without it an unknown domain is refused,"
                + " so a misspelt name makes none).")
    boolean create;

    @Override
    protected final int run(Ledger ledger, PrintWriter out) {
      check();
      requireDomains(ledger, List.of(domain), "DOMAIN", create);
      DomainControls c = change(ledger);
      ObjectNode doc = Output.object();
      doc.put("domain", c.domain());
      doc.set("controls", controls(c));
      return print(out, doc, Output.fit(c.domain(), 40) + ": " + line(c));
    }

    /** Checks the options before the domain is looked up; nothing by default. */
    void check() {}

    /** Changes the controls, returns them after the change. */
    abstract DomainControls change(Ledger ledger);
  }

  /** {@code domain pause}. */
  @Command(
      name = "pause",
      mixinStandardHelpOptions = true,
      description =
          "Pause a domain's claims in every process; running tasks finish, filing still works.",
      footer = {"", "Example:", "  ledger-app domain pause payments --json"})
  public static final class Pause extends DomainControl {
    @Override
    DomainControls change(Ledger ledger) {
      return ledger.pause(domain);
    }
  }

  /** {@code domain resume}. */
  @Command(
      name = "resume",
      mixinStandardHelpOptions = true,
      description = "Resume a paused domain's claims and wake its worker pools.",
      footer = {"", "Example:", "  ledger-app domain resume payments"})
  public static final class Resume extends DomainControl {
    @Override
    DomainControls change(Ledger ledger) {
      return ledger.resume(domain);
    }
  }

  /** {@code domain limit}. */
  @Command(
      name = "limit",
      mixinStandardHelpOptions = true,
      description =
          "Set or clear a domain's concurrency limit and rate limit, enforced in every process.",
      footer = {
        "",
        "Examples:",
        "  ledger-app domain limit payments --concurrency 3",
        "  ledger-app domain limit payments --rate 100/1m",
        "  ledger-app domain limit payments --clear --json"
      })
  public static final class Limit extends DomainControl {
    @Option(
        names = "--concurrency",
        paramLabel = "N",
        description = "At most N tasks of the domain claimed at once (1 to 1000000).")
    Integer concurrency;

    @Option(
        names = "--rate",
        paramLabel = "N/PERIOD",
        description = "At most N claims in any PERIOD, e.g. 10/1s, 100/1m (100ms to 24h).")
    String rate;

    @Option(names = "--clear", description = "Remove both limits (a pause stays).")
    boolean clear;

    /** The rate's claims and period, as {@link #check()} read them (unset: nulls). */
    private Integer claims;

    private Duration period;

    @Override
    void check() {
      if (clear) {
        if (concurrency != null || rate != null) {
          throw usage("--clear: clears both limits: give it without --concurrency or --rate");
        }
        return;
      }
      if (concurrency == null && rate == null) {
        throw usage("--concurrency/--rate: give --concurrency N, --rate N/PERIOD, or --clear");
      }
      if (rate != null) {
        int slash = rate.indexOf('/');
        if (slash < 1 || slash == rate.length() - 1) {
          throw usage(
              "--rate: must be N/PERIOD, e.g. 10/1s or 100/1m, was " + Output.fit(rate, 40));
        }
        try {
          claims = Integer.parseInt(rate.substring(0, slash).trim());
        } catch (NumberFormatException e) {
          throw usage("--rate: N must be a whole number, was " + Output.fit(rate, 40));
        }
        try {
          period = Durations.parse(rate.substring(slash + 1).trim());
        } catch (RuntimeException e) {
          throw usage(
              "--rate: PERIOD must be a duration such as 1s or 5m, was " + Output.fit(rate, 40));
        }
      }
    }

    @Override
    DomainControls change(Ledger ledger) {
      return clear
          ? ledger.clearLimits(domain)
          : ledger.setLimits(domain, concurrency, claims, period);
    }
  }

  /**
   * A domain's controls as a JSON object: {@code paused}, {@code maxClaimed}, {@code rate} (e.g.
   * {@code 10/1s}), {@code rateClaims}, {@code ratePeriodMs} (nulls when not set), {@code
   * claimedNow}.
   *
   * @param c the controls
   * @return the object
   */
  static ObjectNode controls(DomainControls c) {
    ObjectNode o = Output.object();
    o.put("paused", c.paused());
    o.put("maxClaimed", c.maxClaimed());
    o.put("rate", c.rateText());
    o.put("rateClaims", c.rateClaims());
    o.put("ratePeriodMs", c.ratePeriod() == null ? null : c.ratePeriod().toMillis());
    o.put("claimedNow", c.claimedNow());
    return o;
  }

  /**
   * A domain's controls in words, e.g. {@code paused; at most 3 claimed (2 now); at most 10/1s}.
   *
   * @param c the controls
   * @return the line; {@code no controls (N claimed now)} when none is set
   */
  static String line(DomainControls c) {
    List<String> parts = new ArrayList<>();
    if (c.paused()) {
      parts.add("paused");
    }
    if (c.maxClaimed() != null) {
      parts.add("at most " + c.maxClaimed() + " claimed (" + c.claimedNow() + " now)");
    }
    if (c.rateClaims() != null) {
      parts.add("at most " + c.rateText() + " claims");
    }
    if (parts.isEmpty()) {
      return "no controls (" + c.claimedNow() + " claimed now)";
    }
    return String.join("; ", parts);
  }
}
