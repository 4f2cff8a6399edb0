package dev.ledger.app.task;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.Claimer;
import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.LoggedEvent;
import dev.ledger.Status;
import dev.ledger.Task;
import dev.ledger.TaskSpec;
import dev.ledger.app.Converters;
import dev.ledger.app.Durations;
import dev.ledger.app.ExitCodes;
import dev.ledger.app.LedgerCommand;
import dev.ledger.app.Output;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The {@code task} subcommands, each a thin layer over one {@link Ledger} operation.
 *
 * <p>Size: over 600 lines: fourteen subcommands of 15 to 140 lines each, nested so that each {@code
 * task X} is found beside its siblings; what they share (rendering, escaping, JSON) is in {@code
 * Output} and {@link LedgerCommand}.
 */
public final class TaskCommands {

  private TaskCommands() {}

  /** {@code task file}. */
  @Command(
      name = "file",
      mixinStandardHelpOptions = true,
      description = "File a task (born proposed); prints its id.",
      footer = {
        "",
        "Example:",
        "  ledger-app task file --domain payments --title 'Reconcile batch 42' \\",
        "      --priority 5 --requires sql --label internal --origin tracker:ops \\",
        "      --upstream-event evt-42"
      })
  public static final class File extends LedgerCommand {
    @Option(names = "--domain", required = true, description = "The domain.")
    String domain;

    @Option(names = "--title", required = true, description = "The title (1-500 characters).")
    String title;

    @Option(names = "--body", defaultValue = "", description = "The body.")
    String body;

    @Option(
        names = "--body-file",
        paramLabel = "FILE",
        description =
            "Read the body from a file (UTF-8), or from stdin with -: for a body longer than the"
                + " shell allows. Excludes --body.")
    String bodyFile;

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

    @Option(names = "--depends-on", paramLabel = "ID", description = "A dependency (repeatable).")
    List<String> dependsOn = new ArrayList<>();

    @Option(names = "--origin", description = "Where the task comes from.")
    String origin;

    @Option(
        names = "--upstream-event",
        description = "The upstream event (with --origin: filing it again returns the same id).")
    String upstreamEvent;

    @Option(names = "--created-by", defaultValue = "ledger-app", description = "Who files it.")
    String createdBy;

    @Option(
        names = "--not-before",
        paramLabel = "TIME",
        converter = Converters.Times.class,
        description =
            "The earliest time it may run, an RFC 3339 time or a duration from now (10m, 2h):"
                + " the task stays proposed until then, when a worker pool admits it.")
    java.time.Instant notBefore;

    @Option(
        names = "--max-attempts",
        defaultValue = "0",
        description = "Runs before it is a dead letter, 1 to 1000 (default 0: the pool's).")
    int maxAttempts;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      String text = body();
      // filing into a domain that does not exist yet makes its schema (runtime DDL): say so
      boolean newDomain = !ledger.domains().contains(domain);
      String id =
          ledger.file(
              TaskSpec.builder(domain, title)
                  .body(text)
                  .priority(priority)
                  .requirements(requires)
                  .classification(label)
                  .dependsOn(dependsOn)
                  .origin(origin, upstreamEvent)
                  .createdBy(createdBy)
                  .notBefore(notBefore)
                  .maxAttempts(maxAttempts)
                  .build());
      if (newDomain) {
        PrintWriter err = spec.commandLine().getErr();
        err.println(
            "new domain "
                + Output.escape(domain)
                + ": created its schema (a misspelt --domain makes one too; see"
                + " 'ledger-app domains')");
        err.flush();
      }
      if (json) {
        Output.json(out, Output.object().put("id", id).put("new_domain", newDomain));
      } else {
        out.println(id);
      }
      return ExitCodes.OK;
    }

    /** The body: {@code --body}, or the contents of {@code --body-file} (a file or stdin). */
    private String body() {
      if (bodyFile == null) {
        return body;
      }
      if (spec.commandLine().getParseResult().hasMatchedOption("--body")) {
        throw new CommandLine.ParameterException(
            spec.commandLine(), "--body and --body-file exclude each other: give one of them");
      }
      byte[] bytes;
      String what = "-".equals(bodyFile) ? "stdin" : bodyFile;
      try {
        bytes =
            "-".equals(bodyFile)
                ? System.in.readAllBytes()
                : java.nio.file.Files.readAllBytes(java.nio.file.Path.of(bodyFile));
      } catch (java.io.IOException | java.nio.file.InvalidPathException e) {
        throw new CommandLine.ParameterException(
            spec.commandLine(),
            "--body-file: cannot read "
                + what
                + ": "
                + (e instanceof java.nio.file.NoSuchFileException
                    ? "no such file"
                    : e instanceof java.nio.file.AccessDeniedException
                        ? "permission denied"
                        : String.valueOf(e.getMessage())));
      }
      try {
        return java.nio.charset.StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
            .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT)
            .decode(java.nio.ByteBuffer.wrap(bytes))
            .toString();
      } catch (java.nio.charset.CharacterCodingException e) {
        throw new CommandLine.ParameterException(
            spec.commandLine(),
            "--body-file: " + what + " is not valid UTF-8 text; convert it first (e.g. iconv)");
      }
    }
  }

  /** {@code task admit}. */
  @Command(
      name = "admit",
      mixinStandardHelpOptions = true,
      description = "Admit a proposed task to the queue.",
      footer = {"", "Example:", "  ledger-app task admit t00064a1b2c3d4e5-9f00aa11"})
  public static final class Admit extends LedgerCommand {
    @Parameters(paramLabel = "ID", description = "The task id.")
    String id;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      ledger.admit(id);
      return done(out, json, id, "admitted");
    }
  }

  /** {@code task claim}. */
  @Command(
      name = "claim",
      mixinStandardHelpOptions = true,
      description = {
        "Claim the next claimable task of a domain; prints the task and a lease token.",
        "Exits " + ExitCodes.NOTHING + " when nothing is claimable."
      },
      footer = {
        "",
        "Example:",
        "  ledger-app task claim --domain payments --holder worker-1 --lease 5m \\",
        "      --can sql --can java --handling confidential"
      })
  public static final class Claim extends LedgerCommand {
    @Option(names = "--domain", required = true, description = "The domain.")
    String domain;

    @Option(names = "--holder", required = true, description = "Who claims.")
    String holder;

    @Option(
        names = "--lease",
        defaultValue = "5m",
        converter = Durations.class,
        description = "Lease length, e.g. 30s, 5m, 1h (default: ${DEFAULT-VALUE}).")
    Duration lease;

    @Option(names = "--can", paramLabel = "R", description = "A requirement met (repeatable).")
    List<String> can = new ArrayList<>();

    @Option(
        names = "--handling",
        defaultValue = "public",
        converter = Converters.Labels.class,
        description = "Highest label handled (default: public).")
    Label handling;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      Optional<Lease> claimed =
          ledger.claimNext(
              domain, Claimer.of(holder).lease(lease).manifest(can).handling(handling));
      if (claimed.isEmpty()) {
        NothingToClaim why = NothingToClaim.explain(ledger, domain, can, handling, Instant.now());
        if (json) {
          ObjectNode doc = Output.object().putNull("id").putNull("lease");
          why.into(doc, handling);
          Output.json(out, doc);
        } else {
          out.println(why.line(handling));
        }
        return ExitCodes.NOTHING;
      }
      Lease l = claimed.get();
      Task t = ledger.get(l.taskId());
      if (json) {
        ObjectNode o = Output.lease(l);
        o.set("task", Output.task(t));
        Output.json(out, o);
      } else {
        out.println(t.id() + "  " + Output.fit(t.spec().title(), Output.WIDTH - 26));
        out.println("lease " + l.token());
        out.println("until " + Output.time(l.until()) + " (attempt " + l.attempt() + ")");
      }
      return ExitCodes.OK;
    }
  }

  /** {@code task heartbeat}. */
  @Command(
      name = "heartbeat",
      mixinStandardHelpOptions = true,
      description = "Extend a lease; a stale lease is refused.",
      footer = {"", "Example:", "  ledger-app task heartbeat --lease <token> --extend 5m"})
  public static final class Heartbeat extends LedgerCommand {
    @Mixin LeaseOption held;

    @Option(
        names = "--extend",
        defaultValue = "5m",
        converter = Durations.class,
        description = "New lease length from now (default: ${DEFAULT-VALUE}).")
    Duration extend;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      Lease l = ledger.heartbeat(held.lease, extend);
      if (json) {
        Output.json(out, Output.lease(l));
      } else {
        out.println(l.taskId() + " leased until " + Output.time(l.until()));
      }
      return ExitCodes.OK;
    }
  }

  /** {@code task release}. */
  @Command(
      name = "release",
      mixinStandardHelpOptions = true,
      description = "Give a claimed task back to the queue.",
      footer = {"", "Example:", "  ledger-app task release --lease <token>"})
  public static final class Release extends LedgerCommand {
    @Mixin LeaseOption held;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      Lease l = held.lease;
      ledger.release(l);
      return done(out, json, l.taskId(), "released");
    }
  }

  /** {@code task handoff}. */
  @Command(
      name = "handoff",
      mixinStandardHelpOptions = true,
      description = "Leave a handoff note on a claimed task.",
      footer = {"", "Example:", "  ledger-app task handoff --lease <token> --text 'half done'"})
  public static final class Handoff extends LedgerCommand {
    @Mixin LeaseOption held;

    @Option(names = "--text", required = true, description = "The note.")
    String text;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      Lease l = held.lease;
      ledger.leaveHandoff(l, text);
      return done(out, json, l.taskId(), "handoff left");
    }
  }

  /** {@code task complete}. */
  @Command(
      name = "complete",
      mixinStandardHelpOptions = true,
      description = "Complete a claimed task; a stale lease is refused (exit 1).",
      footer = {"", "Example:", "  ledger-app task complete --lease <token> --handoff 'merged'"})
  public static final class Complete extends LedgerCommand {
    @Mixin LeaseOption held;

    @Option(names = "--handoff", description = "The result note.")
    String handoff;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      Lease l = held.lease;
      ledger.complete(l, handoff);
      return done(out, json, l.taskId(), "completed");
    }
  }

  /** {@code task invalidate}. */
  @Command(
      name = "invalidate",
      mixinStandardHelpOptions = true,
      description = "Invalidate an open task.",
      footer = {"", "Example:", "  ledger-app task invalidate <id> --reason duplicate"})
  public static final class Invalidate extends LedgerCommand {
    @Parameters(paramLabel = "ID", description = "The task id.")
    String id;

    @Option(names = "--reason", required = true, description = "Why.")
    String reason;

    @Option(names = "--superseded-by", paramLabel = "ID", description = "Its replacement.")
    String supersededBy;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      ledger.invalidate(id, reason, supersededBy);
      return done(out, json, id, "invalidated");
    }
  }

  /** {@code task rescore}. */
  @Command(
      name = "rescore",
      mixinStandardHelpOptions = true,
      description = "Change an open task's priority.",
      footer = {
        "",
        "Example:",
        "  ledger-app task rescore <id> --priority 9 --why 'customer waiting'"
      })
  public static final class Rescore extends LedgerCommand {
    @Parameters(paramLabel = "ID", description = "The task id.")
    String id;

    @Option(names = "--priority", required = true, description = "The new priority.")
    long priority;

    @Option(names = "--why", required = true, description = "Why.")
    String why;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      ledger.rescore(id, priority, why);
      return done(out, json, id, "rescored");
    }
  }

  /** {@code task post}. */
  @Command(
      name = "post",
      mixinStandardHelpOptions = true,
      description = "Record where a completed task's result was posted.",
      footer = {"", "Example:", "  ledger-app task post <id> --to tracker:ops"})
  public static final class Post extends LedgerCommand {
    @Parameters(paramLabel = "ID", description = "The task id.")
    String id;

    @Option(names = "--to", required = true, description = "Where.")
    String to;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      ledger.post(id, to);
      return done(out, json, id, "posted");
    }
  }

  /** {@code task show}. */
  @Command(
      name = "show",
      mixinStandardHelpOptions = true,
      description = "Show a task and its event history.",
      footer = {"", "Example:", "  ledger-app task show <id> --json"})
  public static final class Show extends LedgerCommand {
    @Parameters(paramLabel = "ID", description = "The task id.")
    String id;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      Task t = ledger.get(id);
      List<LoggedEvent> events = ledger.history(id);
      if (json) {
        ObjectNode o = Output.task(t);
        o.set("events", Output.events(events));
        Output.json(out, o);
        return ExitCodes.OK;
      }
      int w = Output.WIDTH - 10;
      out.println("id        " + t.id());
      out.println("domain    " + Output.fit(t.spec().domain(), w));
      out.println("title     " + Output.fit(t.spec().title(), w));
      if (!t.spec().body().isEmpty()) {
        out.println("body      " + Output.fit(t.spec().body(), w));
      }
      if (t.status() == Status.CLAIMED) {
        // one fact a line, so a long holder does not cut the lease's end or the attempt
        out.println("status    claimed (attempt " + t.attempts() + ")");
        out.println("holder    " + Output.fit(t.holder(), w));
        out.println("until     " + Output.time(t.leaseUntil()));
      } else {
        out.println("status    " + t.status().wire());
      }
      out.println(
          "priority  " + t.spec().priority() + "   label " + t.spec().classification().wire());
      out.println("requires  " + Output.fit(join(t.spec().requirements()), w));
      out.println("depends   " + Output.fit(join(t.spec().dependsOn()), w));
      if (t.spec().origin() != null) {
        String origin = t.spec().origin();
        if (t.spec().upstreamEvent() != null) {
          origin += " / " + t.spec().upstreamEvent();
        }
        out.println("origin    " + Output.fit(origin, w));
      }
      out.println(
          "created   " + Output.time(t.created()) + " by " + Output.fit(t.spec().createdBy(), 30));
      if (t.handoff() != null) {
        out.println("handoff   " + Output.fit(t.handoff(), w));
      }
      if (t.reason() != null) {
        out.println("reason    " + Output.fit(t.reason(), w));
      }
      if (t.postedTo() != null) {
        out.println("posted to " + Output.fit(t.postedTo(), w));
      }
      out.println("events");
      for (LoggedEvent e : events) {
        String line = String.format("  %5d  %s  %s", e.seq(), Output.time(e.at()), e.kind());
        out.println(Output.fit(line, Output.WIDTH));
      }
      return ExitCodes.OK;
    }
  }

  /** {@code task list}. */
  @Command(
      name = "list",
      mixinStandardHelpOptions = true,
      description = {
        "List a domain's tasks, in every status unless --status names one.",
        "By status (proposed, admitted, claimed, completed, invalidated), each in claim",
        "order (priority descending, then oldest first)."
      },
      footer = {
        "",
        "Example:",
        "  ledger-app task list --domain payments",
        "  ledger-app task list --domain payments --status admitted"
      })
  public static final class ListTasks extends LedgerCommand {
    @Option(names = "--domain", required = true, description = "The domain.")
    String domain;

    @Option(
        names = "--status",
        paramLabel = "STATUS",
        converter = Converters.Statuses.class,
        description =
            "Only this status: proposed, admitted, claimed, completed or invalidated"
                + " (default: every status).")
    Status status;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      List<Task> tasks = new ArrayList<>();
      for (Status s : status == null ? List.of(Status.values()) : List.of(status)) {
        tasks.addAll(ledger.list(domain, s));
      }
      String which = status == null ? "all" : status.wire();
      if (json) {
        var a = Output.array();
        tasks.forEach(t -> a.add(Output.task(t)));
        Output.json(
            out, Output.object().put("domain", domain).put("status", which).set("tasks", a));
        return ExitCodes.OK;
      }
      out.println(
          String.format("%-26s %-11s %5s %-12s %s", "ID", "STATUS", "PRIO", "LABEL", "TITLE"));
      for (Task t : tasks) {
        out.println(
            String.format(
                "%-26s %-11s %5d %-12s %s",
                t.id(),
                t.status().wire(),
                t.spec().priority(),
                t.spec().classification().wire(),
                Output.fit(t.spec().title(), Output.WIDTH - 58)));
      }
      // an empty list of a domain that does not exist is most often a misspelt name: say so
      boolean unknown = tasks.isEmpty() && !ledger.domains().contains(domain);
      out.println(
          tasks.size()
              + (status == null ? "" : " " + which)
              + " task(s) in "
              + Output.fit(domain, 40)
              + (unknown ? ": no such domain (no task was ever filed in it)" : ""));
      return ExitCodes.OK;
    }
  }

  /** {@code task dead-letters}. */
  @Command(
      name = "dead-letters",
      mixinStandardHelpOptions = true,
      description = {
        "List a domain's dead letters: tasks that failed their last attempt.",
        "Oldest first; each with its attempts and its last error, cut to fit (--json: the",
        "whole records, the full error in reason). Re-file one with: task refile ID; a",
        "re-filed dead letter leaves the list."
      },
      footer = {
        "",
        "Example:",
        "  ledger-app task dead-letters --domain mail",
        "  ledger-app task dead-letters --domain mail --json | jq -r '.dead_letters[].id'"
      })
  public static final class DeadLetters extends LedgerCommand {
    /** {@code dead letter: attempt 3 of 3 failed at <time>: <error>}. */
    private static final java.util.regex.Pattern REASON =
        java.util.regex.Pattern.compile(
            "^"
                + java.util.regex.Pattern.quote(dev.ledger.FailureRecord.DEAD_LETTER)
                + " attempt (\\d+) of (\\d+) failed at \\S+: (.*)$",
            java.util.regex.Pattern.DOTALL);

    @Option(names = "--domain", required = true, description = "The domain.")
    String domain;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      List<Task> dead = ledger.deadLetters(domain);
      if (json) {
        var a = Output.array();
        for (Task t : dead) {
          ObjectNode o = Output.task(t);
          java.util.regex.Matcher m = REASON.matcher(t.reason() == null ? "" : t.reason());
          if (m.matches()) {
            o.put("attempt", Integer.parseInt(m.group(1)));
            o.put("max_attempts", Integer.parseInt(m.group(2)));
            o.put("last_error", m.group(3));
          } else {
            o.putNull("attempt").putNull("max_attempts").put("last_error", t.reason());
          }
          a.add(o);
        }
        Output.json(out, Output.object().put("domain", domain).set("dead_letters", a));
        return ExitCodes.OK;
      }
      out.println(String.format("%-26s %-5s %-20s %s", "ID", "ATT", "TITLE", "LAST ERROR"));
      for (Task t : dead) {
        java.util.regex.Matcher m = REASON.matcher(t.reason() == null ? "" : t.reason());
        String attempts = m.matches() ? m.group(1) + "/" + m.group(2) : "-";
        String error = m.matches() ? m.group(3) : t.reason();
        out.println(
            String.format(
                "%-26s %-5s %s %s",
                t.id(),
                attempts,
                Output.pad(Output.fit(t.spec().title(), 20), 20),
                Output.fit(error, Output.WIDTH - 54)));
      }
      out.println(dead.size() + " dead letter(s) in " + Output.fit(domain, 40));
      return ExitCodes.OK;
    }
  }

  /** {@code task refile}. */
  @Command(
      name = "refile",
      mixinStandardHelpOptions = true,
      description = {
        "File a dead letter again, admitted, with a fresh budget of attempts.",
        "Prints the new task's id. Re-filing the same dead letter again files nothing and",
        "prints the same id. A task that is not a dead letter is refused (exit 1)."
      },
      footer = {
        "",
        "Example:",
        "  ledger-app task refile t00064a1b2c3d4e5-9f00aa11",
        "  ledger-app task dead-letters --domain mail --json \\",
        "      | jq -r '.dead_letters[].id' | xargs -n1 ledger-app task refile"
      })
  public static final class Refile extends LedgerCommand {
    @Parameters(paramLabel = "ID", description = "The dead letter's id.")
    String id;

    @Override
    protected int run(Ledger ledger, PrintWriter out) {
      String again = ledger.refile(id);
      if (json) {
        Output.json(out, Output.object().put("id", again).put("refiled", id));
      } else {
        out.println(again);
      }
      return ExitCodes.OK;
    }
  }

  static int done(PrintWriter out, boolean json, String id, String what) {
    if (json) {
      Output.json(out, Output.object().put("id", id).put("result", what));
    } else {
      out.println(id + " " + what);
    }
    return ExitCodes.OK;
  }

  private static String join(List<String> values) {
    return values.isEmpty() ? "-" : String.join(", ", values);
  }
}
