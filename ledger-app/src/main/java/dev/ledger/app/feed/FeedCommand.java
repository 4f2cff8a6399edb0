package dev.ledger.app.feed;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.Ledger;
import dev.ledger.app.BaseCommand;
import dev.ledger.app.DatabaseOptions;
import dev.ledger.app.Durations;
import dev.ledger.app.ExitCodes;
import dev.ledger.app.Output;
import dev.ledger.app.StopHook;
import dev.ledger.feed.Feed;
import dev.ledger.feed.FeedBatch;
import dev.ledger.feed.FeedEvent;
import dev.ledger.feed.FeedRunner;
import dev.ledger.feed.FeedSpec;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code ledger-app feed}: prints a named consumer's events (docs/feed.md) and commits its
 * checkpoint after each batch is printed (at least once: a batch printed but not checkpointed is
 * printed again by the next run). Without {@code --follow} it stops once caught up; with it, it
 * waits for new events (LISTEN/NOTIFY, polling besides) until SIGTERM, which finishes the batch in
 * hand, gives the consumer's leases back and exits 143.
 */
@Command(
    name = "feed",
    mixinStandardHelpOptions = true,
    description = {
      "Print a consumer's events of one or more domains, in an order that skips none.",
      "Commits the consumer's checkpoint after each printed batch, so the next run goes on",
      "from there. --follow waits for new events until SIGTERM (exit 143). --json prints",
      "one JSON object per event (JSON Lines)."
    },
    footer = {
      "",
      "Example:",
      "  ledger-app feed --url jdbc:postgresql://db/ledger?user=r --domain payments \\",
      "      --consumer search-index --from-start --follow --json | jq -c .kind"
    })
public final class FeedCommand extends BaseCommand {

  private static final ObjectMapper JSON = new ObjectMapper();

  @Mixin DatabaseOptions database;

  @Option(
      names = "--domain",
      required = true,
      paramLabel = "D",
      description = "A domain to read (repeatable).")
  List<String> domains;

  @Option(
      names = "--consumer",
      required = true,
      paramLabel = "C",
      description = "The consumer's name; its checkpoint is kept under it.")
  String consumer;

  @Option(
      names = "--from-start",
      description =
          "A consumer new to a domain starts at its first event (default: at the events"
              + " written from now on).")
  boolean fromStart;

  @Option(names = "--follow", description = "Wait for new events until SIGTERM.")
  boolean follow;

  @Option(names = "--holder", description = "This reader's name (default: a random one).")
  String holder;

  @Option(
      names = "--batch",
      defaultValue = "500",
      description = "Events read per domain at a time (default: ${DEFAULT-VALUE}).")
  int batch;

  @Option(
      names = "--lease",
      defaultValue = "30s",
      converter = Durations.class,
      description = "The reader's lease of each domain (default: ${DEFAULT-VALUE}).")
  Duration lease;

  @Option(
      names = "--poll",
      defaultValue = "1s",
      converter = Durations.class,
      description =
          "With --follow: poll interval when no wake-up comes, 10ms to 1h (default:"
              + " ${DEFAULT-VALUE}).")
  Duration poll;

  /** How long a run without {@code --follow} waits beyond the lease for another reader's. */
  private static final Duration ACQUIRE_SLACK = Duration.ofSeconds(1);

  @Override
  protected int execute() throws InterruptedException {
    PrintWriter out = spec.commandLine().getOut();
    if (!follow && given("--poll")) {
      throw usage(
          "--poll: only with --follow; a run without it stops once caught up, polling never");
    }
    FeedSpec feedSpec = feedSpec();
    try (DatabaseOptions.OpenDatabase db = database.open(4)) {
      Ledger ledger = db.ledger();
      // a consumer's checkpoint under a misspelt domain would be written, and read nothing ever
      requireDomains(ledger, domains, "--domain", false);
      if (follow) {
        return follow(ledger, db, feedSpec, out);
      }
      return drain(ledger, feedSpec, out);
    }
  }

  private FeedSpec feedSpec() {
    FeedSpec.Builder b =
        FeedSpec.builder(consumer, domains).batchSize(batch).lease(lease).fromStart(fromStart);
    if (holder != null) {
      b.holder(holder);
    }
    return b.build();
  }

  /** Prints until caught up; a SIGTERM meanwhile ends it after the batch in hand. */
  private int drain(Ledger ledger, FeedSpec feedSpec, PrintWriter out) throws InterruptedException {
    try (StopHook stop = StopHook.install("ledger-feed-shutdown", lease);
        Feed feed = ledger.feed(feedSpec)) {
      long end = System.nanoTime() + lease.plus(ACQUIRE_SLACK).toNanos();
      while (!feed.acquire()) {
        if (stop.requested()) {
          return ExitCodes.OK;
        }
        if (System.nanoTime() > end) {
          throw new dev.ledger.LedgerException(
              "consumer '"
                  + consumer
                  + "' is being read by another reader (its lease did not expire within "
                  + Durations.format(lease)
                  + "); run with --follow to wait for it");
        }
        Thread.sleep(200);
      }
      while (!stop.requested()) {
        FeedBatch b = feed.poll();
        if (b.isEmpty()) {
          break;
        }
        print(out, b.events());
        feed.commit(b);
      }
      return ExitCodes.OK;
    }
  }

  /** Follows until SIGTERM, through a {@link FeedRunner}. */
  private int follow(
      Ledger ledger, DatabaseOptions.OpenDatabase db, FeedSpec feedSpec, PrintWriter out)
      throws InterruptedException {
    FeedRunner runner =
        FeedRunner.builder(ledger, feedSpec, db.dataSource(), (events, tx) -> print(out, events))
            .pollInterval(poll)
            .stopTimeout(lease)
            .build();
    StopHook.untilStopped("ledger-feed-shutdown", runner::start, runner::close);
    return ExitCodes.OK;
  }

  private void print(PrintWriter out, List<FeedEvent> events) {
    synchronized (out) {
      for (FeedEvent e : events) {
        if (json) {
          ObjectNode line =
              Output.object()
                  .put("domain", e.domain())
                  .put("seq", e.seq())
                  .put("task_id", e.taskId())
                  .put("kind", e.kind())
                  .put("at", Output.time(e.at()));
          try {
            line.set("payload", JSON.readTree(e.payload()));
          } catch (JsonProcessingException bad) {
            line.put("payload", e.payload());
          }
          Output.json(out, line);
        } else {
          out.println(
              e.domain()
                  + "\t"
                  + e.seq()
                  + "\t"
                  + Output.time(e.at())
                  + "\t"
                  + e.kind()
                  + "\t"
                  + e.taskId()
                  + "\t"
                  + Output.escape(e.payload()));
        }
      }
      out.flush();
    }
  }
}
