package dev.ledger.app.diff;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.testing.PostgresExtension;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The acceptance suite of {@code schema-diff}: one case per object kind and change kind ({@link
 * AcceptanceCases}), each an old schema, a new schema and the classes its changes must have. Every
 * case runs the whole tool against a real PostgreSQL: both schemas applied as Flyway sets, the diff
 * classified, and its SQL checked by the tool itself (the old schema, then the SQL, compared with
 * the new schema through the catalog reader). A case passes when the SQL reaches the new schema
 * exactly, or when the tool refuses the case by naming the object the case expects. The counts are
 * printed at the end.
 */
class SchemaDiffAcceptanceTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @TempDir static Path temp;

  private static final AtomicInteger CASES = new AtomicInteger();
  private static final AtomicInteger EXACT = new AtomicInteger();
  private static final AtomicInteger REFUSED = new AtomicInteger();
  private static final AtomicInteger FAILURES = new AtomicInteger();

  @TestFactory
  Stream<DynamicTest> every_case_round_trips_or_is_refused_by_name() {
    return AcceptanceCases.all().stream()
        .map(c -> DynamicTest.dynamicTest(c.name(), () -> check(c)));
  }

  private static void check(AcceptanceCases.Case c) throws IOException {
    CASES.incrementAndGet();
    Path dir = Files.createDirectories(temp.resolve(c.name().replaceAll("[^a-z0-9_]+", "_")));
    Path base = Cli.migrations(dir.resolve("base"), "V1__schema.sql", c.oldDdl());
    Path head = Cli.migrations(dir.resolve("head"), "V1__schema.sql", c.newDdl());
    DiffReport report;
    try {
      report =
          SchemaDiff.run(
              new SchemaDiff.Request(
                  base.toString(),
                  head.toString(),
                  Map.of(),
                  Map.of(),
                  Map.of(),
                  PG.jdbcUrl(),
                  FailOn.NEVER));
    } catch (RuntimeException e) {
      FAILURES.incrementAndGet();
      throw e;
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
        .as("%s: %s\n%s", c.name(), v.sentence(), String.join("\n", report.diff().script()))
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

  @AfterAll
  static void counts() {
    System.out.printf(
        "schema-diff acceptance: %d cases, %d exact, %d refused by name, %d failures%n",
        CASES.get(), EXACT.get(), REFUSED.get(), FAILURES.get());
  }

  static List<String> lines(String text) {
    return List.of(text.split("\n"));
  }
}
