package dev.ledger.diff;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the review of the pull request's statements costs, on a realistic pull request: the ledger's
 * domain set at V9 against the set at its latest (the queue-controls table, the event feed and what
 * came after), on the embedded PostgreSQL. Runs the diff with and without the review, alternating,
 * and prints the times (for bench/RESULTS.md); asserts only that both reports agree.
 */
@Tag("slow")
class ReviewCostTest {

  private static final Path DOMAIN =
      Path.of(System.getProperty("basedir", "."))
          .resolve("../migrations/src/main/resources/db/ledger/domain");

  @TempDir Path temp;

  @Test
  void the_review_costs_at_most_one_migration_run() throws IOException {
    Path base = Files.createDirectories(temp.resolve("base"));
    try (Stream<Path> files = Files.list(DOMAIN)) {
      for (Path f : files.toList()) {
        String name = f.getFileName().toString();
        // the base stops at V9: every later script is the pull request's
        if (Integer.parseInt(name.substring(1, name.indexOf("__"))) <= 9) {
          Files.copy(f, base.resolve(name));
        }
      }
    }
    String url = System.getenv("LEDGER_TEST_JDBC_URL");
    SchemaDiff.Request request =
        Diffs.request(base, DOMAIN.toAbsolutePath().normalize(), url, FailOn.NEVER, false);
    List<Long> migration = new ArrayList<>();
    try (ScratchPostgres pg = url == null ? ScratchPostgres.embedded() : ScratchPostgres.at(url);
        MigrationSource head = MigrationSource.open("--head", DOMAIN.toString())) {
      for (int round = 0; round < 4; round++) {
        long t0 = System.nanoTime();
        pg.applyAndUse(head, "cost", Map.of(), (c, schema, before) -> null);
        if (round > 0) {
          migration.add((System.nanoTime() - t0) / 1_000_000);
        }
      }
    }
    List<Long> with = new ArrayList<>();
    List<Long> without = new ArrayList<>();
    DiffReport reviewed = null;
    DiffReport plain = null;
    for (int round = 0; round < 4; round++) {
      long t0 = System.nanoTime();
      plain = SchemaDiff.run(request, false);
      long t1 = System.nanoTime();
      reviewed = SchemaDiff.run(request, true);
      long t2 = System.nanoTime();
      if (round > 0) { // the first round warms the JIT and the server's caches
        without.add((t1 - t0) / 1_000_000);
        with.add((t2 - t1) / 1_000_000);
      }
    }
    assertThat(Diffs.changeLines(reviewed)).isEqualTo(Diffs.changeLines(plain));
    assertThat(reviewed.verified()).isTrue();
    assertThat(reviewed.review().statements()).isNotEmpty();
    System.out.println(
        "review cost: without "
            + without
            + " ms, with "
            + with
            + " ms, one migration run of the head (Flyway only, on a server already up) "
            + migration
            + " ms, statements "
            + reviewed.review().statements().size()
            + (url == null ? " (embedded)" : " (--url)"));
  }
}
