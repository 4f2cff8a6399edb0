package dev.ledger.app.schedule;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.Label;
import dev.ledger.Ledger;
import dev.ledger.app.Converters;
import dev.ledger.app.Durations;
import dev.ledger.app.ExitCodes;
import dev.ledger.app.LedgerCommand;
import dev.ledger.app.Output;
import dev.ledger.schedule.Schedule;
import dev.ledger.schedule.ScheduleSpec;
import dev.ledger.schedule.Timing;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** The {@code schedule} subcommands, each a thin layer over one {@code Schedules} call. */
public final class ScheduleCommands {

  private ScheduleCommands() {}

  /**
   * A schedule as JSON.
   *
   * @param s the schedule
   * @return the object: its spec's fields, {@code state} ({@code running} or {@code paused}),
   *     {@code paused}, {@code last_tick}, {@code next_tick} (null while paused: resuming starts
   *     from the next tick after the resume), {@code created}, {@code updated} (times in RFC 3339,
   *     null when unset)
   */
  static ObjectNode json(Schedule s) {
    ScheduleSpec spec = s.spec();
    ObjectNode o = Output.object();
    o.put("name", spec.name());
    o.put("domain", spec.domain());
    o.put("cron", spec.timing().cronExpression());
    o.put("zone", spec.timing().zone() == null ? null : spec.timing().zone().getId());
    if (spec.timing().interval() == null) {
      o.putNull("interval_seconds");
    } else {
      o.put("interval_seconds", spec.timing().interval().getSeconds());
    }
    o.put("title", spec.title());
    o.put("body", spec.body());
    ArrayNode r = o.putArray("requirements");
    spec.requirements().forEach(r::add);
    o.put("label", spec.label().wire());
    o.put("priority", spec.priority());
    o.put("max_attempts", spec.maxAttempts());
    o.put("catch_up", spec.catchUp());
    o.put("state", state(s));
    o.put("paused", s.paused());
    o.put("origin", s.origin());
    o.put("last_tick", Output.time(s.lastTick()));
    o.put("next_tick", s.paused() ? null : Output.time(s.nextTick()));
    o.put("created", Output.time(s.created()));
    o.put("updated", Output.time(s.updated()));
    return o;
  }

  /**
   * A schedule's state, in the words the console uses too.
   *
   * @param s the schedule
   * @return {@code paused} or {@code running}
   */
  static String state(Schedule s) {
    return s.paused() ? "paused" : "running";
  }

  /**
   * A timing in words, durations as operators write them.
   *
   * @param t the timing
   * @return e.g. {@code cron '30 2 * * *' in Europe/Berlin} or {@code every 1h30m}
   */
  static String timing(Timing t) {
    return t.interval() == null ? t.toString() : "every " + Durations.format(t.interval());
  }

  /** One line of text for a schedule's state, after a change. */
  private static String line(String what, Schedule s) {
    return what
        + " schedule "
        + Output.escape(s.name())
        + " ("
        + Output.fit(timing(s.spec().timing()), 60)
        + ", domain "
        + Output.fit(s.spec().domain(), 40)
        + (s.paused() ? ", paused" : "")
        + "); next tick "
        + (s.paused() ? "paused" : orDash(Output.time(s.nextTick())));
  }

  private static String orDash(String s) {
    return s == null ? "-" : s;
  }

  /** {@code schedule add}. */
  @Command(
      name = "add",
      mixinStandardHelpOptions = true,
      description = {
        "Add a schedule: a task filed at each tick of a cron expression or an interval.",
        "Worker pools of the domain (ledger-app work among them) file the due ticks, each once.",
        "A cron expression has 5 fields (minute first) or 6 (second first), read in --zone."
      },
      footer = {
        "",
        "Examples:",
        "  ledger-app schedule add nightly --domain reports --cron '30 2 * * *' \\",
        "      --zone Europe/Berlin --title 'Build the nightly report' --catch-up 3",
        "  ledger-app schedule add heartbeat --domain ops --every 30s --title 'Check'"
      })
  public static final class Add extends LedgerCommand {
    @Parameters(index = "0", paramLabel = "NAME", description = "The schedule's unique name.")
    String name;

    @Option(names = "--domain", required = true, description = "The domain its tasks go to.")
    String domain;

    @Option(
        names = "--create",
        description =
            "Allow a domain that does not exist yet (its first tick makes it); without it an"
                + " unknown domain is refused, so a misspelt name makes none.")
    boolean create;

    @Option(names = "--cron", description = "A cron expression (excludes --every).")
    String cron;

    @Option(
        names = "--zone",
        defaultValue = "UTC",
        description =
            "The cron expression's time zone: a region id, e.g. Europe/Berlin (it follows"
                + " daylight saving time), or UTC (default). A fixed offset such as +02:00 is"
                + " refused; for a zone without daylight saving time give its region id"
                + " (Etc/GMT-2 is UTC+2). Only with --cron.")
    String zone;

    @Option(
        names = "--every",
        paramLabel = "DURATION",
        converter = Durations.class,
        description = "A fixed interval in whole seconds, e.g. 30s, 5m, 1h (excludes --cron).")
    Duration every;

    @Option(names = "--title", required = true, description = "Each task's title.")
    String title;

    @Option(names = "--body", defaultValue = "", description = "Each task's body.")
    String body;

    @Option(names = "--priority", defaultValue = "0", description = "Higher is claimed first.")
    long priority;

    @Option(names = "--requires", paramLabel = "R", description = "A requirement (repeatable).")
    List<String> requires = new ArrayList<>();

    @Option(
        names = "--label",
        defaultValue = "public",
        converter = Converters.Labels.class,
        description = "public, internal, confidential or restricted (default: public).")
    Label label;

    @Option(
        names = "--max-attempts",
        defaultValue = "0",
        description = "Runs before a task is a dead letter, 1 to 1000 (default 0: the pool's).")
    int maxAttempts;

    @Option(
        names = "--catch-up",
        defaultValue = "1",
        paramLabel = "N",
        description =
            "After downtime, file the latest N missed ticks, 1 to 1000 (default 1: the latest"
                + " only).")
    int catchUp;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      ScheduleSpec wanted =
          ScheduleSpec.builder(name, domain, timing(), title)
              .body(body)
              .priority(priority)
              .requirements(requires)
              .label(label)
              .maxAttempts(maxAttempts)
              .catchUp(catchUp)
              .build();
      requireDomains(ledger, List.of(domain), "--domain", create);
      Schedule s = ledger.schedules().add(wanted);
      return print(out, json(s), line("added", s));
    }

    /**
     * The timing the options give, refusing what would be ignored or never fire: {@code --zone}
     * with {@code --every}, a fixed offset for {@code --zone}, a cron expression with no next tick.
     */
    private Timing timing() {
      if ((cron == null) == (every == null)) {
        throw usage("--cron/--every: give --cron or --every (one of them)");
      }
      if (every != null) {
        if (given("--zone")) {
          throw usage(
              "--zone: only with --cron; an interval (--every) counts from the epoch, in no time"
                  + " zone");
        }
        return Timing.every(every);
      }
      Timing t = Timing.cron(cron, zone);
      String id = t.zone().getId();
      if (t.zone() instanceof java.time.ZoneOffset && !"Z".equals(id)
          || id.matches("(?i)(UTC|GMT|UT)[+-].*")) {
        throw usage(
            "--zone: '"
                + Output.fit(zone, 40)
                + "' is a fixed offset, which ignores daylight saving time; give a region id such"
                + " as Europe/Berlin, or UTC (a zone that never changes its offset has a region id"
                + " too: Etc/GMT-2 is UTC+2)");
      }
      if (new dev.ledger.schedule.Ticks(t).next(java.time.Instant.now()).isEmpty()) {
        throw usage(
            "--cron: '"
                + Output.fit(cron, 60)
                + "' never matches: no time after now fits it (a day that no month has, such as"
                + " February 30?)");
      }
      return t;
    }
  }

  /** {@code schedule list}. */
  @Command(
      name = "list",
      mixinStandardHelpOptions = true,
      description = "List the schedules by name, with their next and last ticks.",
      footer = {"", "Example:", "  ledger-app schedule list --json"})
  public static final class ListSchedules extends LedgerCommand {
    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      List<Schedule> all = ledger.schedules().list();
      if (json) {
        ArrayNode a = Output.array();
        all.forEach(s -> a.add(json(s)));
        Output.json(out, Output.object().set("schedules", a));
        return ExitCodes.OK;
      }
      out.println(
          String.format("%-20s %-7s %-20s %-20s %s", "NAME", "STATE", "NEXT", "LAST", "DOMAIN"));
      for (Schedule s : all) {
        out.println(
            String.format(
                "%s %-7s %-20s %-20s %s",
                Output.pad(Output.fit(s.name(), 20), 20),
                state(s),
                s.paused() ? "paused" : orDash(second(s.nextTick())),
                orDash(second(s.lastTick())),
                Output.fit(s.spec().domain(), 30)));
        out.println("  " + Output.fit(timing(s.spec().timing()), Output.WIDTH - 2));
      }
      out.println(all.size() + " schedule(s)");
      return ExitCodes.OK;
    }

    /** A tick to the second, as ticks are: {@code 2026-03-08T07:00:00Z}. */
    private static String second(java.time.Instant t) {
      return t == null ? null : dev.ledger.schedule.Schedules.upstreamEvent(t);
    }
  }

  /** What {@code schedule pause|resume} share: the schedule by name, printed after the change. */
  abstract static class Change extends LedgerCommand {
    @Parameters(index = "0", paramLabel = "NAME", description = "The schedule.")
    String name;

    @Override
    protected final int run(Ledger ledger, PrintWriter out) {
      Schedule s = change(ledger.schedules());
      return print(out, json(s), line(s.paused() ? "paused" : "resumed", s));
    }

    /** The change. */
    abstract Schedule change(dev.ledger.schedule.Schedules schedules);
  }

  /** {@code schedule pause}. */
  @Command(
      name = "pause",
      mixinStandardHelpOptions = true,
      description = "Pause a schedule: no tick is filed until it is resumed.",
      footer = {"", "Example:", "  ledger-app schedule pause nightly"})
  public static final class Pause extends Change {
    @Override
    Schedule change(dev.ledger.schedule.Schedules schedules) {
      return schedules.pause(name);
    }
  }

  /** {@code schedule resume}. */
  @Command(
      name = "resume",
      mixinStandardHelpOptions = true,
      description =
          "Resume a paused schedule from its next tick after now (the pause's are skipped).",
      footer = {"", "Example:", "  ledger-app schedule resume nightly"})
  public static final class Resume extends Change {
    @Override
    Schedule change(dev.ledger.schedule.Schedules schedules) {
      return schedules.resume(name);
    }
  }

  /** {@code schedule remove}. */
  @Command(
      name = "remove",
      mixinStandardHelpOptions = true,
      description = "Remove a schedule; the tasks it filed stay.",
      footer = {"", "Example:", "  ledger-app schedule remove nightly"})
  public static final class Remove extends LedgerCommand {
    @Parameters(index = "0", paramLabel = "NAME", description = "The schedule.")
    String name;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      ledger.schedules().remove(name);
      return print(
          out, Output.object().put("removed", name), "removed schedule " + Output.escape(name));
    }
  }

  /** {@code schedule file-due}. */
  @Command(
      name = "file-due",
      mixinStandardHelpOptions = true,
      description = {
        "File the due ticks of every schedule now, each once (worker pools do it by themselves).",
        "For a deployment without a running pool of the domain, e.g. from a cron job."
      },
      footer = {"", "Example:", "  ledger-app schedule file-due --json"})
  public static final class FileDue extends LedgerCommand {
    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      int filed = ledger.schedules().fileDue();
      return print(out, Output.object().put("filed", filed), "filed " + filed + " tick(s)");
    }
  }
}
