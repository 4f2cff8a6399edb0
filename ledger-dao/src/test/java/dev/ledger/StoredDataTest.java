package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.PostgresExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A bad time in a stored event is bad stored data naming the event, not a database failure with
 * SQLState 00000 (issue #13, item 11).
 */
class StoredDataTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @Test
  void a_stored_event_whose_time_is_not_rfc3339_is_reported_as_bad_data_naming_the_event()
      throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    String id = ledger.file(TaskSpec.builder("stored-data", "a task").build());
    String schema = DomainSchemas.schemaName("stored-data");
    long seq;
    try (Connection c = PostgresExtension.connect(PG.databaseName());
        PreparedStatement s =
            c.prepareStatement(
                "UPDATE \""
                    + schema
                    + "\".events SET at = 'yesterday noon' WHERE task_id = ? RETURNING seq")) {
      s.setString(1, id);
      try (var rs = s.executeQuery()) {
        rs.next();
        seq = rs.getLong(1);
      }
    }
    assertThatThrownBy(() -> ledger.history(id))
        .isInstanceOfSatisfying(
            StoredDataException.class, e -> assertThat(e.operation()).isEqualTo("history"))
        .hasMessageStartingWith(
            "history failed: bad stored data: event "
                + seq
                + " of task "
                + id
                + " in "
                + schema
                + ".events has the time 'yesterday noon', which is not an RFC 3339 time")
        .hasMessageNotContaining("SQLState");
  }
}
