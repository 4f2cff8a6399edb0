package dev.ledger.diff;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * The acceptance suite of {@code schema-diff}: one case per object kind and change kind ({@link
 * AcceptanceCases}), each an old schema, a new schema and the classes its changes must have. Every
 * case runs the whole tool against a real PostgreSQL: both schemas applied as Flyway sets, the diff
 * classified, and its SQL checked by the tool itself (the old schema, then the SQL, compared with
 * the new schema through the catalog reader). A case passes when the SQL reaches the new schema
 * exactly, or when the tool refuses it by naming the object the case expects; a case that deletes
 * data must have a destructive change. The counts are printed at the end.
 *
 * <p>Cases run {@value #WORKERS} at a time on one server, each worker on a database of its own (a
 * run finds the schemas a set created by comparing schema names, so two runs must not share a
 * database).
 */
// slow (559 cases): run on purpose, -Dledger.test.groups=slow
@Tag("slow")
class SchemaDiffAcceptanceTest {

  private static final int WORKERS = 3;

  @TempDir static Path temp;

  private static final List<String> DATABASES = new ArrayList<>();
  private static final BlockingQueue<String> FREE = new ArrayBlockingQueue<>(WORKERS);
  private static ExecutorService pool;

  private static final AtomicInteger CASES = new AtomicInteger();
  private static final AtomicInteger EXACT = new AtomicInteger();
  private static final AtomicInteger REFUSED = new AtomicInteger();
  private static final AtomicInteger FAILURES = new AtomicInteger();

  @BeforeAll
  static void databases() throws SQLException {
    for (int i = 0; i < WORKERS; i++) {
      String db = PostgresExtension.newDatabase();
      DATABASES.add(db);
      FREE.add(db);
    }
    pool = Executors.newFixedThreadPool(WORKERS);
  }

  @AfterAll
  static void counts() throws SQLException {
    pool.shutdownNow();
    for (String db : DATABASES) {
      PostgresExtension.dropDatabase(db);
    }
    System.out.printf(
        "schema-diff acceptance on %s: %d cases, %d exact, %d refused by name, %d failures%n",
        TestServer.get().kind(), CASES.get(), EXACT.get(), REFUSED.get(), FAILURES.get());
  }

  @TestFactory
  Stream<DynamicTest> every_case_round_trips_or_is_refused_by_name() {
    List<AcceptanceCases.Case> all = AcceptanceCases.all();
    assertThat(all).as("the suite's size").hasSize(AcceptanceCasesTest.CASES);
    assertThat(all.stream().map(AcceptanceCases.Case::name).distinct().count())
        .as("case names are unique")
        .isEqualTo(all.size());
    // -Dacceptance.only=TEXT[|TEXT...]: only the cases whose name holds one of the TEXTs (while
    // working on some)
    List<String> only = List.of(System.getProperty("acceptance.only", "").split("\\|", -1));
    List<AcceptanceCases.Case> cases =
        all.stream().filter(c -> only.stream().anyMatch(c.name()::contains)).toList();
    List<Future<DiffReport>> reports = new ArrayList<>();
    for (int i = 0; i < cases.size(); i++) {
      AcceptanceCases.Case c = cases.get(i);
      String dir = "case" + i;
      reports.add(pool.submit(() -> run(c, dir)));
    }
    return java.util.stream.IntStream.range(0, cases.size())
        .mapToObj(
            i ->
                DynamicTest.dynamicTest(
                    cases.get(i).name(), () -> check(cases.get(i), reports.get(i))));
  }

  private static DiffReport run(AcceptanceCases.Case c, String name) throws InterruptedException {
    String db = FREE.take();
    try {
      Path dir;
      try {
        dir = Files.createDirectories(temp.resolve(name));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      Path base = Diffs.migrations(dir.resolve("base"), "V1__schema.sql", c.oldDdl());
      Path head = Diffs.migrations(dir.resolve("head"), "V1__schema.sql", c.newDdl());
      return SchemaDiff.run(
          new SchemaDiff.Request(
              base.toString(),
              head.toString(),
              Map.of(),
              Map.of(),
              Map.of(),
              TestServer.get().urlFor(db),
              FailOn.NEVER,
              false));
    } finally {
      FREE.add(db);
    }
  }

  private static void check(AcceptanceCases.Case c, Future<DiffReport> future)
      throws InterruptedException {
    CASES.incrementAndGet();
    DiffReport report;
    try {
      report = future.get();
    } catch (ExecutionException e) {
      FAILURES.incrementAndGet();
      throw new AssertionError(c.name() + ": the tool failed: " + e.getCause(), e.getCause());
    }
    Verification v = report.verification();
    String classes =
        report.diff().changes().stream()
            .map(ch -> ch.risk().label())
            .collect(Collectors.toCollection(TreeSet::new))
            .stream()
            .collect(Collectors.joining("+"));
    if (v.status() == Verification.Status.SQL_FAILED || v.status() == Verification.Status.DIFFERS) {
      FAILURES.incrementAndGet();
    }
    assertThat(v.status())
        .as("%s: %s%n%s", c.name(), v.sentence(), String.join("\n", report.diff().script()))
        .isEqualTo(c.refused() == null ? Verification.Status.EXACT : Verification.Status.REFUSED);
    if (c.refused() != null) {
      assertThat(String.join("; ", v.refused())).contains(c.refused());
      REFUSED.incrementAndGet();
    } else {
      EXACT.incrementAndGet();
    }
    assertThat(classes)
        .as("%s: classes of %s", c.name(), report.diff().changes())
        .isEqualTo(c.classes());
  }
}
