package dev.ledger.app.task;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Claimer;
import dev.ledger.DomainInfo;
import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.PromotionSpec;
import dev.ledger.Redaction;
import dev.ledger.ScrubResult;
import dev.ledger.Status;
import dev.ledger.TaskSpec;
import dev.ledger.app.DatabaseOptions;
import dev.ledger.app.ExitCodes;
import dev.ledger.app.Output;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code demo}: the whole ledger in under a minute, on a fresh embedded PostgreSQL removed
 * afterwards (or, with {@code --url} or {@code LEDGER_URL}, as for every command, in new domains of
 * that database, named with a random suffix and left there): files tasks across three domains with
 * dependencies and requirements, runs four concurrent workers to completion, records and scrubs a
 * promotion, replays, and prints each step.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = {
      "Show the whole ledger at work on a fresh embedded database, step by step.",
      "With --url (or LEDGER_URL) it runs in new domains of that database instead (payments,"
          + " docs and ops, each with a random six-character suffix), left there afterwards."
    },
    footer = {"", "Example:", "  java -jar ledger-app/target/ledger-app.jar demo"})
public final class DemoCommand implements java.util.concurrent.Callable<Integer> {

  @Option(
      names = "--url",
      paramLabel = "JDBC",
      description = {
        "Run in new domains of this database instead of a fresh embedded one",
        "(default: $LEDGER_URL, else a fresh embedded PostgreSQL)."
      })
  String url;

  @Option(names = "--verbose", description = "Show the stack trace of an error.")
  boolean verbose;

  @Option(
      names = "--json",
      description = "Print one JSON document at the end: {\"ok\", \"exitCode\", \"lines\"}.")
  boolean json;

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    if (!json) {
      return demo(spec.commandLine().getOut());
    }
    java.io.StringWriter text = new java.io.StringWriter();
    int exit = demo(new PrintWriter(text));
    var lines = Output.array();
    text.toString().lines().forEach(lines::add);
    Output.json(
        spec.commandLine().getOut(),
        Output.object().put("ok", exit == ExitCodes.OK).put("exitCode", exit).set("lines", lines));
    return exit;
  }

  private int demo(PrintWriter out) throws Exception {
    String given = DatabaseOptions.givenUrl(url);
    if (given != null) {
      try (DatabaseOptions.OpenDatabase db =
          DatabaseOptions.openUrl(DatabaseOptions.urlSource(url), given, 8, "public")) {
        String suffix = "-" + UUID.randomUUID().toString().substring(0, 6);
        step(out, "running in new domains (suffix " + suffix + ") of " + db.description());
        return run(db.dataSource(), out, suffix);
      }
    }
    Path dir = Files.createTempDirectory("ledger-demo");
    step(out, "starting a fresh embedded PostgreSQL in " + dir);
    try (EmbeddedPostgres pg = EmbeddedPostgres.builder().setDataDirectory(dir).start();
        HikariDataSource ds = pool(pg.getJdbcUrl("postgres", "postgres"))) {
      return run(ds, out, "");
    } finally {
      if (Files.exists(dir)) {
        deleteTree(dir);
      }
    }
  }

  private int run(javax.sql.DataSource ds, PrintWriter out, String suffix) throws Exception {
    Ledger ledger = Ledger.open(ds, LedgerConfig.defaults());
    String payments = "payments" + suffix;
    String docs = "docs" + suffix;
    String ops = "ops" + suffix;

    step(out, "filing tasks in " + payments + ", " + docs + " and " + ops);
    List<String> all = new ArrayList<>();
    String[] skills = {"sql", "java", "gpu"};
    String previous = null;
    for (int i = 1; i <= 12; i++) {
      for (String domain : List.of(payments, docs, ops)) {
        TaskSpec.Builder b =
            TaskSpec.builder(domain, domain + " job #" + i)
                .priority(i % 4)
                .classification(Label.values()[i % 3])
                .requirements(i % 3 == 0 ? List.of(skills[i % skills.length]) : List.of())
                .createdBy("demo");
        if (previous != null && i % 4 == 0) {
          b.dependsOn(List.of(previous)); // waits on a task of another domain
        }
        if (domain.equals(docs) && i <= 3) {
          b.origin("entry:runbook/oncall", "draft-" + i);
        }
        String id = ledger.file(b.build());
        ledger.admit(id);
        all.add(id);
        previous = id;
      }
    }
    out.println("  filed and admitted " + all.size() + " tasks");
    out.println("  every 4th waits on a task of another domain; every 3rd needs a skill");

    step(out, "four workers claim and complete until every queue is empty");
    Map<String, AtomicInteger> done = new ConcurrentHashMap<>();
    List<List<String>> manifests =
        List.of(
            List.of("sql"), List.of("java", "sql"), List.of("gpu"), List.of("sql", "java", "gpu"));
    List<Label> handling =
        List.of(Label.INTERNAL, Label.CONFIDENTIAL, Label.RESTRICTED, Label.PUBLIC);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    List<Future<?>> workers = new ArrayList<>();
    long start = System.nanoTime();
    for (int w = 0; w < 4; w++) {
      String name = "worker-" + (w + 1);
      List<String> manifest = manifests.get(w);
      Label level = handling.get(w);
      done.put(name, new AtomicInteger());
      workers.add(
          pool.submit(
              () -> {
                Claimer claimer =
                    Claimer.of(name)
                        .lease(Duration.ofSeconds(30))
                        .manifest(manifest)
                        .handling(level);
                int idle = 0;
                while (idle < 40) {
                  boolean worked = false;
                  for (String domain : List.of(payments, docs, ops)) {
                    Optional<Lease> lease = ledger.claimNext(domain, claimer);
                    if (lease.isPresent()) {
                      ledger.complete(lease.get(), "done by " + name);
                      done.get(name).incrementAndGet();
                      worked = true;
                    }
                  }
                  idle = worked ? 0 : idle + 1;
                  if (!worked) {
                    sleep(25);
                  }
                }
                return null;
              }));
    }
    for (Future<?> f : workers) {
      f.get();
    }
    pool.shutdown();
    long ms = (System.nanoTime() - start) / 1_000_000;
    done.entrySet().stream()
        .sorted(Map.Entry.comparingByKey())
        .forEach(e -> out.println("  " + e.getKey() + " completed " + e.getValue() + " task(s)"));
    out.println("  in " + ms + " ms; no task was claimed twice");
    for (DomainInfo d : ledger.describeDomains()) {
      if (Stream.of(payments, docs, ops).anyMatch(d.domain()::equals)) {
        out.println(
            "  "
                + Output.fit(d.domain(), 20)
                + " completed "
                + d.tasks().get(Status.COMPLETED)
                + ", still admitted "
                + d.tasks().get(Status.ADMITTED));
      }
    }

    step(out, "recording a promotion of runbook/oncall, then erasing the entry");
    ledger.recordPromotion(
        new PromotionSpec(
            docs,
            "runbook/oncall",
            "reviewed",
            "dan",
            "erin",
            "checked against the incident log",
            Label.INTERNAL,
            "d17512da",
            ""));
    out.println(
        "  why before the scrub: " + ledger.promotions(docs, "runbook/oncall").get(0).spec().why());
    ScrubResult scrub =
        ledger.scrubEntry(docs, "runbook/oncall", "entry:runbook/oncall", Redaction.ERASED);
    out.println(
        "  scrubbed "
            + scrub.promotions()
            + " promotion(s) and "
            + scrub.tasks()
            + " task(s) filed from it; why now: '"
            + ledger.promotions(docs, "runbook/oncall").get(0).spec().why()
            + "'");

    step(out, "replaying every event into a fresh projection");
    List<Object> before = snapshot(ledger, List.of(payments, docs, ops));
    long t0 = System.nanoTime();
    long events = ledger.replay();
    long replayMs = (System.nanoTime() - t0) / 1_000_000;
    List<Object> after = snapshot(ledger, List.of(payments, docs, ops));
    out.println(
        "  replayed "
            + events
            + " events in "
            + replayMs
            + " ms; projection "
            + (before.equals(after) ? "identical to" : "DIFFERENT from")
            + " the live one");

    step(out, "done; the tour in docs/cli.md runs the same steps one command at a time");
    out.flush();
    return before.equals(after) ? ExitCodes.OK : ExitCodes.FAILED;
  }

  /** Every task of the domains, in every status, as the API reads them. */
  private static List<Object> snapshot(Ledger ledger, List<String> domains) {
    List<Object> all = new ArrayList<>();
    for (String d : domains) {
      for (Status s : Status.values()) {
        all.addAll(ledger.list(d, s));
      }
    }
    return all;
  }

  private static void step(PrintWriter out, String text) {
    out.println("==> " + text);
    out.flush();
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static HikariDataSource pool(String jdbcUrl) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(jdbcUrl);
    config.setMaximumPoolSize(8);
    config.setPoolName("ledger-demo");
    return new HikariDataSource(config);
  }

  private static void deleteTree(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
