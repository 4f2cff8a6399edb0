package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.event.Event;
import dev.ledger.schema.DomainSchemas;
import dev.ledger.testing.Fixtures;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.SettableClock;
import dev.ledger.testing.TemplateSchemaGuard;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Replay writes the projection with {@code COPY}: texts that need escaping come back exactly as the
 * live operations wrote them, and a replay that fails midway, in the server or in the client,
 * leaves the old projection of every domain as it was.
 */
class ReplayCopyTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  static final SettableClock CLOCK = new SettableClock(Instant.parse("2026-11-29T23:35:59.5Z"));
  static final TemplateSchemaGuard GUARD = new TemplateSchemaGuard();
  static final Duration LEASE = Duration.ofMinutes(5);

  /** Every domain the tests file into; the failing ones sort last, so others replay first. */
  static final List<String> DOMAINS = List.of("a texts", "b bulk", "c more bulk");

  static final java.util.concurrent.atomic.AtomicInteger BULK =
      new java.util.concurrent.atomic.AtomicInteger();

  static Ledger ledger;

  @BeforeAll
  static void open() {
    ledger =
        Ledger.open(
            PG.dataSource(), LedgerConfig.builder().clock(CLOCK).executeListener(GUARD).build());
  }

  @Test
  void texts_that_need_escaping_replay_exactly() throws Exception {
    List<String> texts =
        List.of(
            "tab\there",
            "new\nline",
            "cr\r\nlf",
            "back\\slash\\",
            "\\N",
            "\\.",
            "x\n\\.\ny",
            "quotes \" ' and, commas",
            "é 日本語 🚀 𝄞 e\u0301",
            "\u0001\u001f\u007f controls",
            "null",
            " spaced ");
    String domain = DOMAINS.get(0);
    String previous = null;
    String completed = null;
    for (int i = 0; i < texts.size(); i++) {
      String t = texts.get(i);
      String id =
          ledger.file(
              TaskSpec.builder(domain, t)
                  .body(i % 3 == 0 ? "" : t + " body")
                  .requirements(List.of(t, "sql"))
                  .dependsOn(completed == null ? List.of() : List.of(completed))
                  .origin(i % 2 == 0 ? "tracker:" + t : null, i % 4 == 0 ? t : null)
                  .createdBy(t)
                  .classification(Label.ofRank(i % 4))
                  .priority(i % 2 == 0 ? Long.MIN_VALUE : Long.MAX_VALUE)
                  .build());
      ledger.admit(id);
      Lease l = ledger.claim(id, t, LEASE, List.of(t, "sql"), Label.RESTRICTED);
      ledger.leaveHandoff(l, t);
      switch (i % 4) {
        case 0, 1 -> {
          ledger.complete(l, i % 4 == 0 ? null : "");
          ledger.post(id, t);
          completed = id;
        }
        case 2 -> ledger.invalidate(id, t, previous);
        default -> {
          ledger.release(l);
          ledger.rescore(id, -i, t);
        }
      }
      ledger.recordPromotion(
          new PromotionSpec(
              domain, t, "reviewed", t, t, t, Label.PUBLIC, "d" + i, i % 2 == 0 ? "" : t));
      previous = id;
    }
    // the longest texts the ledger takes, multi-byte characters across COPY's buffers
    StringBuilder body = new StringBuilder();
    for (int i = 0; body.codePointCount(0, body.length()) < Validation.MAX_BODY - 10; i++) {
      body.append(i % 3 == 0 ? "🚀" : i % 3 == 1 ? "\\\t\n" : "é,\"");
    }
    String big =
        ledger.file(
            TaskSpec.builder(domain, "é".repeat(Validation.MAX_TITLE))
                .body(body.toString())
                .build());
    ledger.invalidate(big, body.toString(), null);

    List<List<List<String>>> live = snapshot();
    long replayed = ledger.rebuild();
    assertThat(replayed).isEqualTo(ledger.eventCount());
    assertThat(snapshot()).isEqualTo(live);
    assertThat(ledger.get(big).spec().body()).isEqualTo(body.toString());
    assertThat(ledger.get(previous).spec().title()).isEqualTo(" spaced ");
  }

  @Test
  void a_row_the_server_refuses_midway_leaves_every_old_projection_intact() throws Exception {
    bulk(DOMAINS.get(1), 300);
    bulk(DOMAINS.get(2), 300);
    List<List<List<String>>> live = snapshot();
    // a created event that repeats a filed task's origin and upstream event (tasks_origin is
    // unique): the last row of the last domain's COPY into tasks, after some 300 kB of others
    TaskSpec again =
        TaskSpec.builder(DOMAINS.get(2), "filed twice")
            .origin("bulk:" + DOMAINS.get(2), "e" + (BULK.get() - 300))
            .build();
    long bad = appendEvent(DOMAINS.get(2), "t-again", new Event.Created("t-again", again));

    assertThatThrownBy(() -> ledger.rebuild())
        .isInstanceOf(LedgerStorageException.class)
        .satisfies(e -> assertThat(((LedgerStorageException) e).sqlState()).isEqualTo("23505"));
    assertThat(snapshot()).isEqualTo(live);
    // the pool's connections are fine: operations go on
    String id = ledger.file(TaskSpec.builder(DOMAINS.get(2), "after").build());
    assertThat(ledger.get(id).status()).isEqualTo(Status.PROPOSED);

    deleteEvent(DOMAINS.get(2), bad);
    live = snapshot();
    ledger.rebuild();
    assertThat(snapshot()).isEqualTo(live);
  }

  @Test
  void a_value_the_writer_refuses_midway_leaves_every_old_projection_intact() throws Exception {
    bulk(DOMAINS.get(1), 300);
    bulk(DOMAINS.get(2), 300);
    List<List<List<String>>> live = snapshot();
    // U+0000 passes JSON (as \u0000) but no text column: refused by the writer, client side,
    // in the last task row of the last domain's COPY into tasks, after some 300 kB of others
    long bad =
        appendEvent(
            DOMAINS.get(2),
            "t-nul",
            new Event.Created(
                "t-nul", TaskSpec.builder(DOMAINS.get(2), "secret \u0000 title").build()));

    assertThatThrownBy(() -> ledger.rebuild())
        .isInstanceOf(LedgerException.class)
        .hasMessage(
            "rebuild: COPY into tasks: column title holds U+0000, which PostgreSQL text cannot"
                + " store")
        .hasMessageNotContaining("secret");
    assertThat(snapshot()).isEqualTo(live);
    // the pool's connections are fine: operations go on
    String id = ledger.file(TaskSpec.builder(DOMAINS.get(2), "after").build());
    assertThat(ledger.get(id).status()).isEqualTo(Status.PROPOSED);

    deleteEvent(DOMAINS.get(2), bad);
    live = snapshot();
    ledger.rebuild();
    assertThat(snapshot()).isEqualTo(live);
  }

  @Test
  void an_event_not_in_format_v1_midway_through_the_log_leaves_every_old_projection_intact()
      throws Exception {
    bulk(DOMAINS.get(1), 300);
    long bad = appendEvent(DOMAINS.get(1), "t-bad", new Event.Admitted());
    try (Connection c = PG.dataSource().getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "UPDATE \""
              + DomainSchemas.schemaName(DOMAINS.get(1))
              + "\".events SET kind = 'claimed', payload = '{\"holder\":5}' WHERE seq = "
              + bad);
    }
    bulk(DOMAINS.get(1), 300); // events after the bad one: it is read midway
    bulk(DOMAINS.get(2), 300);
    List<List<List<String>>> live = snapshot();

    assertThatThrownBy(() -> ledger.rebuild())
        .isInstanceOf(LedgerException.class)
        .hasMessageStartingWith("event of task 't-bad' (kind claimed) is not format v1");
    assertThat(snapshot()).isEqualTo(live);
    String id = ledger.file(TaskSpec.builder(DOMAINS.get(1), "after").build());
    assertThat(ledger.get(id).status()).isEqualTo(Status.PROPOSED);

    deleteEvent(DOMAINS.get(1), bad);
    live = snapshot();
    ledger.rebuild();
    assertThat(snapshot()).isEqualTo(live);
  }

  /** Files tasks of about 1 kB each, admits and completes some. */
  static void bulk(String domain, int n) {
    int from = BULK.getAndAdd(n);
    for (int i = from; i < from + n; i++) {
      String id =
          ledger.file(
              TaskSpec.builder(domain, "bulk " + i)
                  .body("body\t" + i + "\n" + "x".repeat(1000))
                  .origin(i % 2 == 0 ? "bulk:" + domain : null, i % 2 == 0 ? "e" + i : null)
                  .priority(i % 5)
                  .build());
      if (i % 3 != 0) {
        ledger.admit(id);
      }
      if (i % 3 == 2) {
        ledger.complete(ledger.claim(id, "w", LEASE, List.of(), Label.PUBLIC), "done " + i);
      }
    }
  }

  /** Appends an event straight to a domain's log (as a bug or a hand edit could); returns seq. */
  static long appendEvent(String domain, String taskId, Event e) throws SQLException {
    try (Connection c = PG.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement(
                "INSERT INTO \""
                    + DomainSchemas.schemaName(domain)
                    + "\".events (task_id, kind, at, payload) VALUES (?, ?, ?, ?) RETURNING seq")) {
      ps.setString(1, taskId);
      ps.setString(2, e.kind().wire());
      ps.setString(3, "2026-11-30T00:00:00.000000Z");
      ps.setString(4, e.payload().toString());
      try (var rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  static void deleteEvent(String domain, long seq) throws SQLException {
    try (Connection c = PG.dataSource().getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "DELETE FROM \"" + DomainSchemas.schemaName(domain) + "\".events WHERE seq = " + seq);
    }
  }

  /** Every row of every table a replay writes, each column as PostgreSQL's text. */
  static List<List<List<String>>> snapshot() throws SQLException {
    List<List<List<String>>> out = new ArrayList<>();
    try (Connection c = PG.dataSource().getConnection()) {
      for (String domain : ledger.domains()) {
        String s = "\"" + DomainSchemas.schemaName(domain) + "\"";
        out.add(Fixtures.rows(c, "SELECT * FROM " + s + ".tasks ORDER BY id"));
        out.add(Fixtures.rows(c, "SELECT * FROM " + s + ".promotions ORDER BY seq"));
        out.add(
            Fixtures.rows(
                c, "SELECT * FROM " + s + ".claim_classes ORDER BY label_rank, requirements_md5"));
      }
      out.add(Fixtures.rows(c, "SELECT * FROM public.ledger_tasks ORDER BY id"));
      out.add(
          Fixtures.rows(
              c, "SELECT * FROM public.ledger_dependencies ORDER BY depends_on, task_id"));
    }
    return out;
  }
}
