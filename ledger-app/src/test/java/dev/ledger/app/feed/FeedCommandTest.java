package dev.ledger.app.feed;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import dev.ledger.app.Cli;
import dev.ledger.app.ExitCodes;
import dev.ledger.testing.PostgresExtension;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ledger-app feed}: JSON Lines of a consumer's events, its checkpoint committed as it goes
 * (a second run prints only what is new), and with {@code --follow}, a process that prints new
 * events until SIGTERM stops it cleanly.
 */
class FeedCommandTest {

  @RegisterExtension static final PostgresExtension PG = PostgresExtension.ownCluster();

  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;

  /** Runs until the consumer's output has {@code n} lines (the watermark may lag a moment). */
  private static List<JsonNode> drain(String consumer, String domain, int n) throws Exception {
    List<JsonNode> lines = new ArrayList<>();
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (lines.size() < n && System.nanoTime() < end) {
      Cli.Result r =
          Cli.run(
              "feed",
              "--url",
              PG.jdbcUrl(),
              "--domain",
              domain,
              "--consumer",
              consumer,
              "--from-start",
              "--json");
      assertThat(r.exit()).as(r.err()).isEqualTo(ExitCodes.OK);
      for (String line : r.out().split("\n")) {
        if (!line.isEmpty()) {
          lines.add(JSON.readTree(line));
        }
      }
    }
    assertThat(lines).hasSize(n);
    return lines;
  }

  @Test
  void prints_json_lines_and_goes_on_from_its_checkpoint() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    String id =
        ledger.fileAndAdmit(TaskSpec.builder("cli-feed", "Print me").origin("shop", "o1").build());
    List<JsonNode> first = drain("printer", "cli-feed", 2);
    assertThat(first.get(0).get("type").asText()).isEqualTo("event");
    assertThat(first.get(0).get("kind").asText()).isEqualTo("created");
    assertThat(first.get(0).get("task_id").asText()).isEqualTo(id);
    assertThat(first.get(0).get("domain").asText()).isEqualTo("cli-feed");
    assertThat(first.get(0).get("payload").get("spec").get("title").asText()).isEqualTo("Print me");
    assertThat(first.get(1).get("kind").asText()).isEqualTo("admitted");
    assertThat(first.get(1).get("seq").asLong()).isGreaterThan(first.get(0).get("seq").asLong());

    ledger.complete(
        ledger
            .claimNext(
                "cli-feed", dev.ledger.Claimer.of("w").lease(java.time.Duration.ofMinutes(1)))
            .orElseThrow(),
        "done");
    List<JsonNode> next = drain("printer", "cli-feed", 2);
    assertThat(next)
        .extracting(n -> n.get("kind").asText())
        .containsExactly("claimed", "completed");

    // scrubbed after it was printed: one erased line naming the task and the four events
    assertThat(ledger.scrubTasks("cli-feed", "shop", dev.ledger.Redaction.ERASED)).isEqualTo(1);
    List<JsonNode> erased = drain("printer", "cli-feed", 1);
    JsonNode line = erased.get(0);
    assertThat(line.get("type").asText()).isEqualTo("erased");
    assertThat(line.get("domain").asText()).isEqualTo("cli-feed");
    assertThat(line.get("task_id").asText()).isEqualTo(id);
    List<Long> seqs = new ArrayList<>();
    line.get("seqs").forEach(n -> seqs.add(n.asLong()));
    List<Long> printed = new ArrayList<>();
    first.forEach(n -> printed.add(n.get("seq").asLong()));
    next.forEach(n -> printed.add(n.get("seq").asLong()));
    assertThat(seqs).isEqualTo(printed);
    assertThat(line.toString()).doesNotContain("Print me");
    assertThat(line.get("at").asText()).isNotEmpty();
  }

  private static Cli.Result feed(String consumer, String domain, String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "feed",
                "--url",
                PG.jdbcUrl(),
                "--domain",
                domain,
                "--consumer",
                consumer,
                "--from-start",
                "--json"));
    args.addAll(List.of(more));
    return Cli.run(args.toArray(String[]::new));
  }

  @Test
  void a_consumer_behind_the_retention_horizon_exits_10_until_it_accepts_the_loss()
      throws Exception {
    dev.ledger.testing.SettableClock clock =
        new dev.ledger.testing.SettableClock(java.time.Instant.parse("2026-03-01T09:00:00Z"));
    Ledger ledger =
        Ledger.open(PG.dataSource(), dev.ledger.LedgerConfig.builder().clock(clock).build());
    String domain = "cli-horizon";
    ledger.provision(domain);
    Cli.Result start = feed("behind", domain); // its checkpoint, before any event
    assertThat(start.exit()).as(start.all()).isEqualTo(ExitCodes.OK);
    assertThat(start.out()).isEmpty();
    String old = ledger.file(TaskSpec.builder(domain, "old").build());
    ledger.invalidate(old, "done with", null);
    String kept = ledger.fileAndAdmit(TaskSpec.builder(domain, "kept").build());
    clock.advance(java.time.Duration.ofHours(2));
    ledger.retention().set(domain, java.time.Duration.ofHours(1));
    assertThat(ledger.retention().purge(domain, 100, p -> {}).domains().get(0).eventsRemoved())
        .isEqualTo(2);

    // refused: exit 10, one JSON error object naming the consumer and what it missed
    for (int i = 0; i < 2; i++) {
      Cli.Result refused = feed("behind", domain);
      assertThat(refused.exit()).as(refused.all()).isEqualTo(ExitCodes.BEHIND_RETENTION);
      assertThat(refused.err())
          .startsWith("error: feed consumer 'behind' on domain 'cli-horizon' is behind");
      JsonNode doc = JSON.readTree(refused.out().strip());
      assertThat(doc.get("exitCode").asInt()).isEqualTo(10);
      assertThat(doc.get("ok").asBoolean()).isFalse();
      assertThat(doc.get("consumer").asText()).isEqualTo("behind");
      assertThat(doc.get("domain").asText()).isEqualTo(domain);
      assertThat(doc.get("missed_seq").asLong()).isZero();
      assertThat(doc.get("missed_later").asLong()).isEqualTo(2);
      assertThat(doc.get("error").asText()).contains("retention");
    }
    Cli.Result following = feed("behind", domain, "--follow", "--poll", "50ms");
    assertThat(following.exit()).as(following.all()).isEqualTo(ExitCodes.BEHIND_RETENTION);

    // --accept-loss: a warning on stderr, then the events that remain
    Cli.Result accepted = feed("behind", domain, "--accept-loss");
    assertThat(accepted.exit()).as(accepted.all()).isEqualTo(ExitCodes.OK);
    assertThat(accepted.err()).contains("--accept-loss").contains("'behind'");
    List<JsonNode> lines = new ArrayList<>();
    for (String line : accepted.out().split("\n")) {
      if (!line.isEmpty()) {
        lines.add(JSON.readTree(line));
      }
    }
    lines.addAll(drain("behind", domain, 2 - lines.size()));
    assertThat(lines)
        .extracting(n -> n.get("task_id").asText() + " " + n.get("kind").asText())
        .containsExactly(kept + " created", kept + " admitted");
    Cli.Result after = feed("behind", domain);
    assertThat(after.exit()).as(after.all()).isEqualTo(ExitCodes.OK);
    assertThat(after.out()).isEmpty();
  }

  @Test
  void a_bad_option_is_a_usage_error_naming_it() {
    Cli.Result r =
        Cli.run("feed", "--domain", "d", "--consumer", "c", "--batch", "0", "--url", PG.jdbcUrl());
    assertThat(r.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(r.err()).startsWith("error: --batch: ");
  }

  @Test
  @Tag("slow")
  void follows_in_a_process_of_its_own_until_sigterm_stops_it_cleanly() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    ledger.provision("followed");
    String classpath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder pb =
        new ProcessBuilder(
            java,
            "-cp",
            classpath,
            "dev.ledger.app.Main",
            "feed",
            "--url",
            PG.jdbcUrl(),
            "--domain",
            "followed",
            "--consumer",
            "tail",
            "--from-start",
            "--follow",
            "--poll",
            "200ms",
            "--json");
    pb.redirectOutput(dir.resolve("feed.out").toFile());
    pb.redirectError(dir.resolve("feed.err").toFile());
    pb.directory(new File(System.getProperty("user.dir")));
    Process p = pb.start();
    try {
      for (int i = 0; i < 3; i++) {
        ledger.fileAndAdmit(TaskSpec.builder("followed", "task " + i).build());
      }
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
      while (lines(dir.resolve("feed.out")) < 6 && System.nanoTime() < end) {
        assertThat(p.isAlive()).as(Files.readString(dir.resolve("feed.err"))).isTrue();
        Thread.sleep(50);
      }
      assertThat(lines(dir.resolve("feed.out"))).isEqualTo(6);
      p.destroy(); // SIGTERM
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).isEqualTo(143);
      try (var c = PG.dataSource().getConnection();
          var s = c.createStatement();
          var rs =
              s.executeQuery(
                  "SELECT delivered, holder IS NULL FROM ledger_feed_consumers"
                      + " WHERE consumer = 'tail'")) {
        assertThat(rs.next()).isTrue();
        assertThat(rs.getLong(1)).as("checkpointed as it went").isEqualTo(6);
        assertThat(rs.getBoolean(2)).as("the lease given back").isTrue();
      }
    } finally {
      p.destroyForcibly();
    }
  }

  /** A writer whose every write fails, as stdout does on a full disk or a closed pipe. */
  private static final class FailingWriter extends java.io.Writer {
    @Override
    public void write(char[] buf, int off, int len) throws java.io.IOException {
      throw new java.io.IOException("No space left on device");
    }

    @Override
    public void flush() throws java.io.IOException {
      throw new java.io.IOException("No space left on device");
    }

    @Override
    public void close() {}
  }

  private static long delivered(String consumer) throws java.sql.SQLException {
    try (var c = PG.dataSource().getConnection();
        var s = c.createStatement();
        var rs =
            s.executeQuery(
                "SELECT coalesce(sum(delivered), 0) FROM ledger_feed_consumers WHERE consumer = '"
                    + consumer
                    + "'")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @Test
  void a_batch_it_could_not_print_is_not_checkpointed_and_the_run_fails() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    String id = ledger.fileAndAdmit(TaskSpec.builder("unprinted", "Print me later").build());
    picocli.CommandLine cli = dev.ledger.app.Main.commandLine();
    java.io.StringWriter err = new java.io.StringWriter();
    cli.setOut(new java.io.PrintWriter(new FailingWriter(), true));
    cli.setErr(new java.io.PrintWriter(err, true));
    int exit =
        cli.execute(
            "feed",
            "--url",
            PG.jdbcUrl(),
            "--domain",
            "unprinted",
            "--consumer",
            "lost-pipe",
            "--from-start",
            "--json");
    assertThat(exit).as(err.toString()).isEqualTo(ExitCodes.FAILED);
    assertThat(err.toString())
        .contains("feed: the output could not be written")
        .contains("consumer 'lost-pipe' keeps its checkpoint");
    assertThat(delivered("lost-pipe")).as("no batch checkpointed").isZero();
    // the next run that can print prints both events
    List<JsonNode> again = drain("lost-pipe", "unprinted", 2);
    assertThat(again).extracting(n -> n.get("task_id").asText()).containsExactly(id, id);
    assertThat(again)
        .extracting(n -> n.get("kind").asText())
        .containsExactly("created", "admitted");
  }

  @Test
  @Tag("slow")
  void stdout_on_a_full_disk_fails_the_run_and_keeps_the_checkpoint_with_and_without_follow()
      throws Exception {
    File full = new File("/dev/full");
    org.junit.jupiter.api.Assumptions.assumeTrue(
        full.exists(), "skipped: /dev/full is not there (a Linux device)");
    Ledger ledger = Ledger.open(PG.dataSource());
    ledger.fileAndAdmit(TaskSpec.builder("full-disk", "Print me").build());
    String classpath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    for (boolean follow : new boolean[] {false, true}) {
      List<String> cmd =
          new ArrayList<>(
              List.of(
                  java,
                  "-cp",
                  classpath,
                  "dev.ledger.app.Main",
                  "feed",
                  "--url",
                  PG.jdbcUrl(),
                  "--domain",
                  "full-disk",
                  "--consumer",
                  "to-dev-full",
                  "--from-start",
                  "--json"));
      if (follow) {
        cmd.addAll(List.of("--follow", "--poll", "200ms"));
      }
      ProcessBuilder pb = new ProcessBuilder(cmd);
      pb.redirectOutput(full);
      pb.redirectError(dir.resolve("full.err").toFile());
      Process p = pb.start();
      try {
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("follow " + follow + " ended").isTrue();
        String err = Files.readString(dir.resolve("full.err"));
        assertThat(p.exitValue()).as(err).isEqualTo(ExitCodes.FAILED);
        assertThat(err).contains("feed: the output could not be written");
        assertThat(delivered("to-dev-full"))
            .as("follow " + follow + ": nothing checkpointed")
            .isZero();
      } finally {
        p.destroyForcibly();
      }
    }
  }

  private static long lines(Path file) throws java.io.IOException {
    return Files.readString(file).lines().filter(l -> !l.isEmpty()).count();
  }
}
