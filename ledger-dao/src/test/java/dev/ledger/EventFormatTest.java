package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.event.Event;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Golden JSON of event format v1 for every kind (docs/storage-and-replay.md), byte for byte. */
class EventFormatTest {

  static final ObjectMapper JSON = new ObjectMapper();
  static final Instant UNTIL = Instant.parse("2025-03-01T09:05:02.048300Z");

  static String json(Event e) throws Exception {
    return JSON.writeValueAsString(e.payload());
  }

  @Test
  void golden_payloads_of_every_kind() throws Exception {
    TaskSpec spec =
        new TaskSpec(
            "acme",
            "Résumé parser #1",
            "Line one.\nTab\there 🚀",
            List.of("sql", "java"),
            List.of("t000001-5f915ef0"),
            "tracker:ops",
            "evt-1",
            "alice",
            Label.CONFIDENTIAL,
            -4);
    assertThat(json(new Event.Created("t000002-cb01c357", spec)))
        .isEqualTo(
            "{\"id\":\"t000002-cb01c357\",\"spec\":{\"domain\":\"acme\",\"title\":\"Résumé parser"
                + " #1\",\"body\":\"Line one.\\nTab\\there 🚀\",\"requirements\":[\"sql\",\"java\"],"
                + "\"depends_on\":[\"t000001-5f915ef0\"],\"origin\":\"tracker:ops\","
                + "\"upstream_event\":\"evt-1\",\"created_by\":\"alice\","
                + "\"classification\":\"confidential\",\"priority\":-4}}");
    TaskSpec bare = TaskSpec.builder("acme", "t").createdBy("planner").build();
    assertThat(json(new Event.Created("t1", bare)))
        .isEqualTo(
            "{\"id\":\"t1\",\"spec\":{\"domain\":\"acme\",\"title\":\"t\",\"body\":\"\","
                + "\"requirements\":[],\"depends_on\":[],\"origin\":null,\"upstream_event\":null,"
                + "\"created_by\":\"planner\",\"classification\":\"public\",\"priority\":0}}");
    assertThat(json(new Event.Admitted())).isEqualTo("{}");
    assertThat(json(new Event.Released())).isEqualTo("{}");
    assertThat(json(new Event.Claimed("worker-4", UNTIL)))
        .isEqualTo("{\"holder\":\"worker-4\",\"until\":\"2025-03-01T09:05:02.048300Z\"}");
    assertThat(json(new Event.Heartbeat(UNTIL)))
        .isEqualTo("{\"until\":\"2025-03-01T09:05:02.048300Z\"}");
    assertThat(json(new Event.HandoffLeft("halfway: see notes")))
        .isEqualTo("{\"handoff\":\"halfway: see notes\"}");
    assertThat(json(new Event.Completed(null))).isEqualTo("{\"handoff\":null}");
    assertThat(json(new Event.Completed("merged in 4f2a")))
        .isEqualTo("{\"handoff\":\"merged in 4f2a\"}");
    assertThat(json(new Event.Invalidated("obsolete", null)))
        .isEqualTo("{\"reason\":\"obsolete\",\"superseded_by\":null}");
    assertThat(json(new Event.Invalidated("dup", "t9")))
        .isEqualTo("{\"reason\":\"dup\",\"superseded_by\":\"t9\"}");
    assertThat(json(new Event.Posted("tracker:ops"))).isEqualTo("{\"to\":\"tracker:ops\"}");
    assertThat(json(new Event.Rescored(9, "triage")))
        .isEqualTo("{\"priority\":9,\"why\":\"triage\"}");
    PromotionSpec p =
        new PromotionSpec(
            "acme",
            "runbook/oncall",
            "reviewed",
            "dan",
            "erin",
            "accurate",
            Label.INTERNAL,
            "d17",
            "e42");
    assertThat(json(new Event.Promoted(p, false)))
        .isEqualTo(
            "{\"spec\":{\"domain\":\"acme\",\"entry\":\"runbook/oncall\",\"tier\":\"reviewed\","
                + "\"by\":\"dan\",\"author\":\"erin\",\"why\":\"accurate\","
                + "\"classification\":\"internal\",\"digest\":\"d17\",\"new_digest\":\"e42\"},"
                + "\"why_erased\":false}");
  }

  /**
   * Payloads as the reference stack wrote them (lines of shared/fixtures) read back and re-write
   * identically.
   */
  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "created|{\"id\":\"t000001-5f915ef0\",\"spec\":{\"domain\":\"acme\",\"title\":\"Résumé parser #1\",\"body\":\"\",\"requirements\":[],\"depends_on\":[],\"origin\":null,\"upstream_event\":null,\"created_by\":\"planner\",\"classification\":\"public\",\"priority\":5}}",
        "admitted|{}",
        "rescored|{\"priority\":-4,\"why\":\"triage\"}",
        "claimed|{\"holder\":\"worker-4\",\"until\":\"2025-03-01T09:05:02.048300Z\"}",
        "handoff_left|{\"handoff\":\"halfway: see notes\"}",
        "released|{}",
        "heartbeat|{\"until\":\"2025-03-01T09:10:14.248562Z\"}",
        "completed|{\"handoff\":null}",
        "invalidated|{\"reason\":\"obsolete\",\"superseded_by\":null}",
        "posted|{\"to\":\"task:t000029-c0831265\"}",
      })
  void reference_payloads_round_trip_byte_for_byte(String kind, String payload) throws Exception {
    Event e = Event.parse("t", kind, JSON.readTree(payload));
    assertThat(e.kind().wire()).isEqualTo(kind);
    assertThat(json(e)).isEqualTo(payload);
  }

  @Test
  void a_first_shape_promotion_reads_with_no_new_digest_and_why_not_erased() throws Exception {
    Event e =
        Event.parse(
            "promotion:guide/setup",
            "promoted",
            JSON.readTree(
                "{\"spec\":{\"domain\":\"acme\",\"entry\":\"guide/setup\",\"tier\":\"canonical\","
                    + "\"by\":\"dan\",\"author\":\"erin\",\"why\":\"ok\",\"classification\":\"public\","
                    + "\"digest\":\"cd0a\"}}"));
    Event.Promoted p = (Event.Promoted) e;
    assertThat(p.spec().newDigest()).isEmpty();
    assertThat(p.whyErased()).isFalse();
  }
}
