package dev.ledger.diff.against;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How the data checks read in a report: row estimates, the database's name, durations. */
class ReportTextTest {

  @Test
  void row_estimates_are_rounded_to_three_figures_at_most() {
    assertThat(TableSize.estimate(0)).isEqualTo("~0 rows");
    assertThat(TableSize.estimate(1)).isEqualTo("~1 row");
    assertThat(TableSize.estimate(999)).isEqualTo("~999 rows");
    assertThat(TableSize.estimate(1_234)).isEqualTo("~1.2k rows");
    assertThat(TableSize.estimate(120_000_000)).isEqualTo("~120M rows");
    assertThat(TableSize.estimate(999_600)).isEqualTo("~1.0M rows");
    assertThat(TableSize.estimate(3_400_000_000L)).isEqualTo("~3.4B rows");
    assertThat(
            new TableSize(
                    "orders", "rewrites", "ACCESS EXCLUSIVE", "x", "48 GB", 120_000_000L, null)
                .sentence())
        .isEqualTo("rewrites `orders` (48 GB, ~120M rows) under ACCESS EXCLUSIVE");
    assertThat(new TableSize("orders", "locks", "SHARE", "x", "8192 bytes", null, null).sentence())
        .isEqualTo("locks `orders` (8192 bytes, rows not estimated (never analyzed)) under SHARE");
  }

  @Test
  void the_database_is_named_without_parameters_or_credentials() {
    assertThat(
            AgainstReport.displayName(
                "jdbc:postgresql://db.internal:5433/app?user=ci&password=secret&currentSchema=app"))
        .isEqualTo("db.internal:5433/app");
    assertThat(AgainstReport.displayName("jdbc:postgresql://ci:secret@db/app")).isEqualTo("db/app");
    assertThat(AgainstReport.displayName("jdbc:postgresql:app")).isEqualTo("app");
  }

  @Test
  void a_check_that_is_not_counted_is_neither_clean_nor_an_error() {
    DataCheck notCounted =
        new DataCheck(
            DataCheck.Kind.UNIQUE,
            "t",
            "constraint `t_excl`",
            DataCheck.Status.NOT_COUNTED,
            0,
            false,
            "an exclusion constraint is not counted");
    AgainstReport report =
        new AgainstReport(
            "db/app", Duration.ofMillis(1500), 1000, null, List.of(notCounted), List.of());
    assertThat(report.incomplete()).isFalse();
    assertThat(report.rejects()).isFalse();
    assertThat(report.summary()).isEqualTo("Against `db/app`: 1 not counted.");
    assertThat(notCounted.count()).isEqualTo("-");
    assertThat(AgainstReport.duration(Duration.ofMillis(1500))).isEqualTo("1500 ms");
  }
}
