package dev.ledger.app.feed;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
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
import dev.ledger.feed.FeedBehindRetentionException;
import dev.ledger.feed.FeedErasure;
import dev.ledger.feed.FeedEvent;
import dev.ledger.feed.FeedHandler;
import dev.ledger.feed.FeedRunner;
import dev.ledger.feed.FeedSpec;
import java.io.PrintWriter;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
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

  @Option(
      names = "--accept-loss",
      description =
          "When a retention purge removed events the consumer had not received, accept the"
              + " loss and go on (default: exit 10 and print nothing past the gap).")
  boolean acceptLoss;

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
        FeedBatch b;
        try {
          b = feed.poll();
        } catch (FeedBehindRetentionException behind) {
          if (!acceptLoss) {
            throw behind; // exit 10, the error naming the consumer and domain
          }
          acceptLoss(feed, behind);
          continue;
        }
        if (b.isEmpty()) {
          break;
        }
        print(out, b.events());
        printErased(out, b.erasures());
        requirePrinted(out); // a batch not printed is not checkpointed: the next run prints it
        feed.commit(b);
      }
      return ExitCodes.OK;
    }
  }

  /** Accepts the loss, saying so on stderr (stdout stays the events). */
  private void acceptLoss(Feed feed, FeedBehindRetentionException behind) {
    feed.acceptLoss(behind.domain());
    PrintWriter err = spec.commandLine().getErr();
    err.println(
        "warning: --accept-loss: consumer '"
            + behind.consumer()
            + "' goes on in domain '"
            + behind.domain()
            + "' past events a retention purge removed before it received them");
    err.flush();
  }

  /** Follows until SIGTERM, through a {@link FeedRunner}. */
  private int follow(
      Ledger ledger, DatabaseOptions.OpenDatabase db, FeedSpec feedSpec, PrintWriter out)
      throws InterruptedException {
    if (!acceptLoss) {
      // a consumer already behind the retention horizon fails now, as without --follow (a loss
      // later, while following, is logged and counted by the runner, which reads on once someone
      // accepts it); a poll without a commit moves no checkpoint
      try (Feed probe = ledger.feed(feedSpec)) {
        if (probe.acquire() || !probe.held().isEmpty()) {
          probe.poll();
        }
      }
    }
    java.util.concurrent.CountDownLatch outputLost = new java.util.concurrent.CountDownLatch(1);
    FeedHandler printer =
        new FeedHandler() {
          @Override
          public void handle(List<FeedEvent> events, Connection tx) {
            print(out, events);
            printedOrStop(out, outputLost);
          }

          @Override
          public void erased(List<FeedErasure> erasures, Connection tx) {
            printErased(out, erasures);
            printedOrStop(out, outputLost);
          }
        };
    FeedRunner runner =
        FeedRunner.builder(ledger, feedSpec, db.dataSource(), printer)
            .pollInterval(poll)
            .stopTimeout(lease)
            .acceptLoss(acceptLoss)
            .build();
    try (StopHook stop = StopHook.install("ledger-feed-shutdown", lease)) {
      runner.start();
      try {
        while (!stop.requested()) {
          if (outputLost.await(100, java.util.concurrent.TimeUnit.MILLISECONDS)) {
            break;
          }
        }
      } finally {
        runner.close();
      }
    }
    if (outputLost.getCount() == 0) {
      throw outputFailed();
    }
    return ExitCodes.OK;
  }

  /**
   * Fails when {@code out} could not be written (a closed pipe, a full disk): the batch in hand
   * must not be checkpointed, or the consumer would lose it.
   */
  private void requirePrinted(PrintWriter out) {
    if (writeFailed(out)) {
      throw outputFailed();
    }
  }

  /**
   * In {@code --follow}: refuses the batch (the runner rolls its checkpoint back) and ends the run
   * when {@code out} could not be written.
   */
  private void printedOrStop(PrintWriter out, java.util.concurrent.CountDownLatch outputLost) {
    if (writeFailed(out)) {
      outputLost.countDown();
      throw outputFailed();
    }
  }

  /**
   * Whether writing {@code out} failed: its own error, or that of {@code System.out} under it
   * (picocli's stdout writer hands its bytes to {@code System.out}, a {@code PrintStream} that
   * keeps a failed write's error to itself).
   */
  private static boolean writeFailed(PrintWriter out) {
    return out.checkError() || System.out.checkError();
  }

  private dev.ledger.LedgerException outputFailed() {
    return new dev.ledger.LedgerException(
        "feed: the output could not be written (a closed pipe or a full disk); consumer '"
            + Output.escape(consumer)
            + "' keeps its checkpoint from before the batch, so the next run prints it again");
  }

  private void print(PrintWriter out, List<FeedEvent> events) {
    synchronized (out) {
      for (FeedEvent e : events) {
        if (json) {
          ObjectNode line =
              Output.object()
                  .put("type", "event")
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

  /**
   * Prints {@code erased} items: {@code {"type":"erased","domain","task_id","seqs","at"}} with
   * {@code --json}, else a line shaped as an event's with {@code -} for the seq, {@code erased} for
   * the kind and the seqs where the payload goes.
   */
  private void printErased(PrintWriter out, List<FeedErasure> erasures) {
    synchronized (out) {
      for (FeedErasure e : erasures) {
        if (json) {
          ObjectNode line =
              Output.object()
                  .put("type", "erased")
                  .put("domain", e.domain())
                  .put("task_id", e.taskId());
          ArrayNode seqs = line.putArray("seqs");
          e.seqs().forEach(seqs::add);
          line.put("at", Output.time(e.erasedAt()));
          Output.json(out, line);
        } else {
          out.println(
              e.domain()
                  + "\t-\t"
                  + Output.time(e.erasedAt())
                  + "\terased\t"
                  + e.taskId()
                  + "\t"
                  + e.seqs().stream().map(String::valueOf).collect(Collectors.joining(",")));
        }
      }
      out.flush();
    }
  }
}
