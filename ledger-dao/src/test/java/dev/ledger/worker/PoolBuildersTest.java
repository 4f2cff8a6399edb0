package dev.ledger.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.ledger.InvalidInputException;
import dev.ledger.Ledger;
import dev.ledger.LedgerConfig;
import dev.ledger.tenants.TenantDirectory;
import dev.ledger.testing.PostgresExtension;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The two pool builders ({@link WorkerPool.Builder}, {@link TenantWorkerPool.Builder}) refuse a bad
 * setting alike: for every shared setter and bad value, both throw an {@link InvalidInputException}
 * with the same field and the same message; and both take the edge values of each range.
 */
class PoolBuildersTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static Ledger ledger;
  private static TenantDirectory directory;

  @BeforeAll
  static void open() {
    ledger = Ledger.open(PG.dataSource());
    directory =
        TenantDirectory.builder()
            .control(PG.dataSource())
            .refreshInterval(Duration.ZERO)
            .ledgerConfig(LedgerConfig.builder().runtimeDdl(false).build())
            .open();
  }

  @AfterAll
  static void close() {
    if (directory != null) {
      directory.close();
    }
  }

  private static List<PoolBuilder<?>> builders() {
    return List.of(WorkerPool.builder(ledger), TenantWorkerPool.builder(directory));
  }

  static Stream<Arguments> badSettings() {
    return Stream.of(
        bad("concurrency", "concurrency 0", b -> b.concurrency(0)),
        bad("concurrency", "concurrency -1", b -> b.concurrency(-1)),
        bad("concurrency", "concurrency 1001", b -> b.concurrency(1001)),
        bad("lease", "lease null", b -> b.lease(null)),
        bad("lease", "lease zero", b -> b.lease(Duration.ZERO)),
        bad("lease", "lease negative", b -> b.lease(Duration.ofSeconds(-1))),
        bad("lease", "lease 299 ms", b -> b.lease(Duration.ofMillis(299))),
        bad("lease", "lease 8 days", b -> b.lease(Duration.ofDays(8))),
        bad("poll_interval", "poll null", b -> b.pollInterval(null)),
        bad("poll_interval", "poll 9 ms", b -> b.pollInterval(Duration.ofMillis(9))),
        bad("poll_interval", "poll 61 min", b -> b.pollInterval(Duration.ofMinutes(61))),
        bad("shutdown_timeout", "shutdown null", b -> b.shutdownTimeout(null)),
        bad("shutdown_timeout", "shutdown -1 s", b -> b.shutdownTimeout(Duration.ofSeconds(-1))),
        bad("handler_timeout", "handler timeout 9 ms", b -> b.handlerTimeout(Duration.ofMillis(9))),
        bad("handler_timeout", "handler timeout 2 days", b -> b.handlerTimeout(Duration.ofDays(2))),
        bad("manifest", "manifest null", b -> b.manifest(null)),
        bad("manifest", "manifest with an empty entry", b -> b.manifest(List.of("sql", ""))),
        bad("manifest", "manifest with a blank entry", b -> b.manifest(List.of(" "))),
        bad("manifest", "manifest with a null entry", b -> b.manifest(Arrays.asList("a", null))),
        bad("manifest", "manifest entry too long", b -> b.manifest(List.of("m".repeat(501)))),
        bad("holder", "holder null", b -> b.holder(null)),
        bad("holder", "holder empty", b -> b.holder("")),
        bad("holder", "holder blank", b -> b.holder("  ")),
        bad("holder", "holder too long", b -> b.holder("h".repeat(501))),
        bad("handling", "handling null", b -> b.handling(null)),
        bad("retry", "retry null", b -> b.retry(null)),
        bad("metrics", "metrics null", b -> b.metrics(null)));
  }

  private static Arguments bad(String field, String what, Consumer<PoolBuilder<?>> setter) {
    return Arguments.of(field, what, setter);
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("badSettings")
  void both_builders_refuse_a_bad_setting_with_the_same_field_and_message(
      String field, String what, Consumer<PoolBuilder<?>> setter) {
    List<InvalidInputException> refusals =
        builders().stream()
            .map(b -> catchThrowableOfType(() -> setter.accept(b), InvalidInputException.class))
            .toList();
    assertThat(refusals).as(what).doesNotContainNull();
    assertThat(refusals).extracting(InvalidInputException::field).containsOnly(field);
    assertThat(refusals.get(1).getMessage())
        .as(what)
        .isEqualTo(refusals.get(0).getMessage())
        .startsWith(field + ": ");
  }

  @Test
  void both_builders_take_the_edges_of_every_range() {
    for (PoolBuilder<?> b : builders()) {
      b.concurrency(1).concurrency(1000);
      b.lease(Duration.ofMillis(300)).lease(Duration.ofDays(7));
      b.pollInterval(Duration.ofMillis(10)).pollInterval(Duration.ofHours(1));
      b.shutdownTimeout(Duration.ZERO);
      b.manifest(List.of()).manifest(List.of("m".repeat(500)));
      b.holder("h".repeat(500));
      PoolSettings s = b.settings("default");
      assertThat(s.concurrency()).isEqualTo(1000);
      assertThat(s.lease()).isEqualTo(Duration.ofDays(7));
      assertThat(s.pollInterval()).isEqualTo(Duration.ofHours(1));
      assertThat(s.manifest()).containsExactly("m".repeat(500));
    }
  }

  @Test
  void the_messages_say_the_range_and_the_value() {
    assertThat(
            catchThrowableOfType(
                () -> TenantWorkerPool.builder(directory).concurrency(1001),
                InvalidInputException.class))
        .hasMessage("concurrency: must be 1 to 1000, was 1001");
    assertThat(
            catchThrowableOfType(
                () -> WorkerPool.builder(ledger).pollInterval(Duration.ofHours(2)),
                InvalidInputException.class))
        .hasMessage("poll_interval: must be 10 ms to 1 hour");
    assertThat(
            catchThrowableOfType(
                () -> TenantWorkerPool.builder(directory).quantum(0), InvalidInputException.class))
        .hasMessage("quantum: must be 1 to 100, was 0");
    assertThat(
            catchThrowableOfType(
                () -> WorkerPool.builder(ledger).batchSize(0), InvalidInputException.class))
        .hasMessage("batch_size: must be 1 to 1000, was 0");
  }
}
