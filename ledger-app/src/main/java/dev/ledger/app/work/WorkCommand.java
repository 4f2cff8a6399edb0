package dev.ledger.app.work;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.Label;
import dev.ledger.Task;
import dev.ledger.app.BaseCommand;
import dev.ledger.app.DatabaseOptions;
import dev.ledger.app.Durations;
import dev.ledger.app.ExitCodes;
import dev.ledger.app.Output;
import dev.ledger.app.StopHook;
import dev.ledger.worker.Outcome;
import dev.ledger.worker.RetryPolicy;
import dev.ledger.worker.TaskContext;
import dev.ledger.worker.WorkerPool;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code ledger-app work}: a generic worker for operators. Runs a {@link WorkerPool} over one
 * domain whose handler runs a shell command per task: the task as JSON on its standard input; exit
 * 0 completes the task (standard output, trimmed, is the handoff), any other exit fails it with its
 * standard error as the error, retried with backoff up to {@code --max-attempts}. A lost lease (or
 * the pool closing) kills the command. SIGTERM (or Ctrl-C) closes the pool: no new claims, running
 * commands get {@code --shutdown-timeout} to finish, the rest are killed and their leases released.
 *
 * <p>With {@code --json} stdout is JSON lines: {@code {"event":"started",...}} once, {@code
 * {"event":"handled",...}} per command run, {@code {"event":"stopped",...}} with the counts after a
 * clean shutdown (an error before the start is the usual error document instead).
 */
@Command(
    name = "work",
    mixinStandardHelpOptions = true,
    description = {
      "Run a command for each task of a domain, as a worker pool.",
      "The task goes to the command as JSON on stdin; exit 0 completes it (stdout is",
      "the handoff), non-zero fails it with stderr as the error (retried with backoff,",
      "then a dead letter). Stops cleanly on SIGTERM (exit 143). --json prints one JSON",
      "line per event: started, handled (per command run), stopped (with counts)."
    },
    footer = {
      "",
      "Example:",
      "  ledger-app work --url jdbc:postgresql://db/ledger?user=w --domain mail \\",
      "      --command 'jq -r .body | sendmail -t' --concurrency 4 --max-attempts 5"
    })
public final class WorkCommand extends BaseCommand {

  private static final int MAX_CAPTURE = 64 * 1024;

  @Mixin DatabaseOptions database;

  @Option(names = "--domain", required = true, description = "The domain to work on.")
  String domain;

  @Option(
      names = "--command",
      required = true,
      description = "The command, run with /bin/sh -c for each task.")
  String command;

  @Option(names = "--holder", description = "The holder name (default: host, pid, random).")
  String holder;

  @Option(
      names = "--concurrency",
      defaultValue = "1",
      description = "Commands run at once (default: ${DEFAULT-VALUE}).")
  int concurrency;

  @Option(
      names = "--lease",
      defaultValue = "60s",
      converter = Durations.class,
      description = "Lease length, heartbeated every third (default: ${DEFAULT-VALUE}).")
  Duration lease;

  @Option(
      names = "--poll",
      defaultValue = "5s",
      converter = Durations.class,
      description = "Poll interval when no wake-up comes (default: ${DEFAULT-VALUE}).")
  Duration poll;

  @Option(
      names = "--max-attempts",
      defaultValue = "5",
      description = "Runs per task before it is a dead letter (default: ${DEFAULT-VALUE}).")
  int maxAttempts;

  @Option(
      names = "--backoff",
      defaultValue = "1s",
      converter = Durations.class,
      description = "Wait after the first failure, doubling up to 5m (default: ${DEFAULT-VALUE}).")
  Duration backoff;

  @Option(
      names = "--shutdown-timeout",
      defaultValue = "30s",
      converter = Durations.class,
      description = "How long SIGTERM waits for running commands (default: ${DEFAULT-VALUE}).")
  Duration shutdownTimeout;

  @Option(names = "--can", paramLabel = "R", description = "A requirement met (repeatable).")
  List<String> can = new ArrayList<>();

  @Option(
      names = "--handling",
      defaultValue = "public",
      converter = dev.ledger.app.Converters.Labels.class,
      description = "Highest label handled (default: ${DEFAULT-VALUE}).")
  Label handling;

  /** What the pool reported, for the summary at shutdown. */
  private final Counts counts = new Counts();

  @Override
  protected int execute() throws InterruptedException {
    PrintWriter out = spec.commandLine().getOut();
    if (command.isBlank()) {
      // sh -c '' exits 0: every claimed task would be completed without anything run
      throw usage("--command: must not be empty");
    }
    RetryPolicy retry =
        new RetryPolicy(maxAttempts, backoff, max(backoff, Duration.ofMinutes(5)), 2.0, 0.2);
    try (DatabaseOptions.OpenDatabase db = database.open()) {
      WorkerPool.Builder b = configure(WorkerPool.builder(db.ledger()), db, retry);
      requireDomains(db.ledger(), List.of(domain), "--domain", false);
      WorkerPool pool = b.start();
      StopHook.untilStopped(
          "ledger-work-shutdown",
          () -> started(out, pool.holder()),
          () -> {
            pool.close();
            stopped(out, pool.holder());
          });
      return ExitCodes.OK;
    }
  }

  /** The first line, once the pool runs. */
  private void started(PrintWriter out, String holderName) {
    report(
        out,
        Output.object()
            .put("event", "started")
            .put("domain", domain)
            .put("holder", holderName)
            .put("concurrency", concurrency),
        "working on " + domain + " as " + holderName + " (" + concurrency + " at once)");
  }

  /** The last line, after the pool closed: what it did while it ran. */
  private void stopped(PrintWriter out, String holderName) {
    report(
        out,
        Output.object()
            .put("event", "stopped")
            .put("domain", domain)
            .put("holder", holderName)
            .put("completed", counts.completed.get())
            .put("retried", counts.retried.get())
            .put("dead", counts.dead.get())
            .put("lost", counts.lost.get()),
        "stopped: "
            + counts.completed.get()
            + " completed, "
            + counts.retried.get()
            + " failed and retried, "
            + counts.dead.get()
            + " dead letter(s), "
            + counts.lost.get()
            + " lease(s) lost");
  }

  /** One line, JSON or text, whole: the pool's threads print too. */
  private void report(PrintWriter out, ObjectNode line, String text) {
    if (json) {
      print(out, line);
      return;
    }
    synchronized (out) {
      out.println(text);
      out.flush();
    }
  }

  /** One JSON line; the pool's threads print at once, so one line at a time. */
  private static void print(PrintWriter out, ObjectNode line) {
    synchronized (out) {
      Output.json(out, line);
    }
  }

  /** The pool's reports that the summary counts; thread-safe. */
  private static final class Counts implements dev.ledger.worker.WorkerMetrics {
    final java.util.concurrent.atomic.AtomicLong completed =
        new java.util.concurrent.atomic.AtomicLong();
    final java.util.concurrent.atomic.AtomicLong retried =
        new java.util.concurrent.atomic.AtomicLong();
    final java.util.concurrent.atomic.AtomicLong dead =
        new java.util.concurrent.atomic.AtomicLong();
    final java.util.concurrent.atomic.AtomicLong lost =
        new java.util.concurrent.atomic.AtomicLong();

    @Override
    public void completed(String domain) {
      completed.incrementAndGet();
    }

    @Override
    public void retried(String domain) {
      retried.incrementAndGet();
    }

    @Override
    public void dead(String domain) {
      dead.incrementAndGet();
    }

    @Override
    public void leaseLost(String domain) {
      lost.incrementAndGet();
    }
  }

  /** The pool as the options say; the library checks each value. */
  private WorkerPool.Builder configure(
      WorkerPool.Builder b, DatabaseOptions.OpenDatabase db, RetryPolicy retry) {
    b.dataSource(db.dataSource())
        .retry(retry)
        .domain(domain, this::run)
        .concurrency(concurrency)
        .lease(lease)
        .pollInterval(poll)
        .shutdownTimeout(shutdownTimeout)
        .manifest(can)
        .handling(handling)
        .metrics(counts);
    if (holder != null) {
      b.holder(holder);
    }
    return b;
  }

  private static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  /** Runs the command for one task. */
  private Outcome run(Task task, TaskContext ctx) throws IOException, InterruptedException {
    ObjectNode doc = Output.task(task);
    doc.put("attempt", ctx.attempt());
    doc.put("max_attempts", ctx.maxAttempts());
    doc.put("lease", ctx.lease().token());
    ProcessBuilder pb = new ProcessBuilder("/bin/sh", "-c", command);
    pb.environment().put("LEDGER_TASK_ID", task.id());
    pb.environment().put("LEDGER_DOMAIN", task.spec().domain());
    pb.environment().put("LEDGER_ATTEMPT", Integer.toString(ctx.attempt()));
    long started = System.nanoTime();
    Process p = pb.start();
    Capture stdout = new Capture(p.getInputStream());
    Capture stderr = new Capture(p.getErrorStream());
    try {
      try (OutputStream in = p.getOutputStream()) {
        in.write((doc.toString() + "\n").getBytes(StandardCharsets.UTF_8));
      } catch (IOException e) {
        // the command did not read its input; its exit code says the rest
      }
      int code = p.waitFor();
      stdout.join();
      stderr.join();
      if (json) {
        print(
            spec.commandLine().getOut(),
            Output.object()
                .put("event", "handled")
                .put("id", task.id())
                .put("attempt", ctx.attempt())
                .put("max_attempts", ctx.maxAttempts())
                .put("exit", code)
                .put("outcome", code == 0 ? "done" : "failed")
                .put("ms", (System.nanoTime() - started) / 1_000_000));
      }
      if (code == 0) {
        String handoff = stdout.text().strip();
        return Outcome.done(handoff.isEmpty() ? null : handoff);
      }
      String err = stderr.text().strip();
      return Outcome.failed("exit " + code + (err.isEmpty() ? "" : ": " + err));
    } finally {
      if (p.isAlive()) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
      }
    }
  }

  /** Reads a stream to its end on a thread of its own, keeping the first 64 KiB. */
  private static final class Capture extends Thread {
    private final InputStream in;
    private final ByteArrayOutputStream kept = new ByteArrayOutputStream();

    Capture(InputStream in) {
      this.in = in;
      setDaemon(true);
      start();
    }

    @Override
    public void run() {
      byte[] buf = new byte[8192];
      try {
        int n;
        while ((n = in.read(buf)) >= 0) {
          synchronized (kept) {
            int room = MAX_CAPTURE - kept.size();
            if (room > 0) {
              kept.write(buf, 0, Math.min(room, n));
            }
          }
        }
      } catch (IOException e) {
        // the process ended or was killed
      }
    }

    String text() {
      synchronized (kept) {
        return kept.toString(StandardCharsets.UTF_8);
      }
    }
  }
}
