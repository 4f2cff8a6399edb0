package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code recordPromotion} with {@code why_erased} (issue 13, item 7), as the reference's {@code
 * record_promotion(at, spec, why_erased)} takes it: the flag is in the event and the row, survives
 * a replay, and the promotion is recorded once; and the recording joins a caller's transaction.
 */
class RecordPromotionTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @Test
  void a_promotion_recorded_with_its_why_erased_keeps_the_flag_through_a_replay() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    PromotionSpec erased =
        new PromotionSpec("wiki", "runbook/oncall", "reviewed", "ana", "bo", "", null, "d1", "d2");
    PromotionSpec kept =
        new PromotionSpec("wiki", "runbook/oncall", "gold", "ana", "bo", "solid", null, "d2", "");

    assertThat(ledger.recordPromotion(erased, true)).isTrue();
    assertThat(ledger.recordPromotion(erased, true)).isFalse();
    assertThat(ledger.recordPromotion(kept)).isTrue();
    List<Promotion> before = ledger.promotions("wiki", "runbook/oncall");
    assertThat(before).extracting(Promotion::whyErased).containsExactly(true, false);
    assertThat(before).extracting(p -> p.spec().why()).containsExactly("", "solid");

    List<String> payloads = new ArrayList<>();
    try (Connection c = PG.dataSource().getConnection();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT kind, payload::text FROM \""
                    + DomainSchemas.schemaName("wiki")
                    + "\".events WHERE task_id = 'promotion:runbook/oncall' ORDER BY seq")) {
      while (rs.next()) {
        assertThat(rs.getString(1)).isEqualTo("promoted");
        payloads.add(rs.getString(2));
      }
    }
    assertThat(payloads).hasSize(2);
    ObjectMapper json = new ObjectMapper();
    assertThat(json.readTree(payloads.get(0)).path("why_erased").asBoolean()).isTrue();
    assertThat(json.readTree(payloads.get(1)).path("why_erased").asBoolean()).isFalse();

    ledger.rebuild();
    assertThat(ledger.promotions("wiki", "runbook/oncall")).isEqualTo(before);

    try (Connection c = PG.dataSource().getConnection()) {
      c.setAutoCommit(false);
      PromotionSpec third =
          new PromotionSpec("wiki", "runbook/oncall", "gold", "cy", "bo", "", null, "d2", "");
      assertThat(ledger.in(c).recordPromotion(third, true)).isTrue();
      c.rollback();
    }
    assertThat(ledger.promotions("wiki", "runbook/oncall")).isEqualTo(before);
  }
}
