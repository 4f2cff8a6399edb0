package dev.ledger.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The reference stack's PostgreSQL backend ({@code shared/seeds/000_*.txt}, {@code
 * crates/ledger/src/postgres.rs}) emulated with its own SQL: the statements {@code ensure_domain},
 * {@code append}/{@code apply}/{@code project}, {@code insert_task} and {@code rebuild} issue, in
 * the same order and transactions, over plain JDBC. It writes only the reference's columns and
 * tables, so whatever this ledger derives from them must be kept right by the database.
 *
 * <p>Times are passed as the RFC 3339 text the reference's {@code fmt_time} writes. Not
 * thread-safe: one instance per connection.
 */
public final class ReferenceStack implements AutoCloseable {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** The reference's DOMAIN_TABLES, PROMOTION_TABLE and PROMOTION_INDEX; {s} the quoted schema. */
  private static final String DOMAIN_DDL =
      """
      CREATE TABLE IF NOT EXISTS {s}.events (
          seq      BIGSERIAL PRIMARY KEY,
          task_id  TEXT NOT NULL,
          kind     TEXT NOT NULL,
          at       TEXT NOT NULL,
          payload  TEXT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS events_task ON {s}.events (task_id, seq);
      CREATE TABLE IF NOT EXISTS {s}.tasks (
          id             TEXT PRIMARY KEY,
          domain         TEXT NOT NULL,
          title          TEXT NOT NULL,
          body           TEXT NOT NULL,
          requirements   TEXT NOT NULL,
          depends_on     TEXT NOT NULL,
          origin         TEXT,
          upstream_event TEXT,
          created_by     TEXT NOT NULL,
          label_rank     BIGINT NOT NULL,
          priority       BIGINT NOT NULL,
          created        TEXT NOT NULL,
          status         TEXT NOT NULL,
          holder         TEXT,
          lease_until    TEXT,
          attempts       BIGINT NOT NULL DEFAULT 0,
          handoff        TEXT,
          reason         TEXT,
          superseded_by  TEXT,
          posted_to      TEXT
      );
      CREATE INDEX IF NOT EXISTS tasks_queue ON {s}.tasks (status, priority DESC, created);
      CREATE UNIQUE INDEX IF NOT EXISTS tasks_origin ON {s}.tasks (origin, upstream_event)
          WHERE origin IS NOT NULL AND upstream_event IS NOT NULL;
      CREATE TABLE IF NOT EXISTS {s}.promotions (
          seq        BIGSERIAL PRIMARY KEY,
          domain     TEXT NOT NULL,
          entry      TEXT NOT NULL,
          tier       TEXT NOT NULL,
          promoter   TEXT NOT NULL,
          author     TEXT NOT NULL,
          why        TEXT NOT NULL,
          label_rank BIGINT NOT NULL,
          digest     TEXT NOT NULL,
          new_digest TEXT NOT NULL DEFAULT '',
          at         TEXT NOT NULL,
          why_erased BIGINT NOT NULL DEFAULT 0
      );
      ALTER TABLE {s}.promotions ADD COLUMN IF NOT EXISTS new_digest TEXT NOT NULL DEFAULT '';
      ALTER TABLE {s}.promotions ADD COLUMN IF NOT EXISTS why_erased BIGINT NOT NULL DEFAULT 0;
      CREATE UNIQUE INDEX IF NOT EXISTS promotions_version
          ON {s}.promotions (entry, tier, digest, promoter);
      """;

  private static final Map<String, Long> RANKS =
      Map.of("public", 0L, "internal", 1L, "confidential", 2L, "restricted", 3L);

  private final Connection c;

  /**
   * Opens the emulation on its own connection to a database of the test server.
   *
   * @param database the database name
   * @throws SQLException when the connection fails
   */
  public ReferenceStack(String database) throws SQLException {
    this(PostgresExtension.connect(database));
  }

  /**
   * Opens the emulation on a connection of the caller's, which it closes with itself.
   *
   * @param connection an open connection to the ledger's database
   */
  public ReferenceStack(Connection connection) {
    this.c = connection;
  }

  /**
   * The reference's {@code ensure_domain} in a transaction of its own: the domain's schema and
   * route, made when missing (no Flyway history: the reference knows none).
   *
   * @param domain the domain
   * @return the quoted schema
   * @throws SQLException when a statement fails
   */
  public String ensureDomain(String domain) throws SQLException {
    return inTransaction(() -> ensureDomainIn(domain));
  }

  /**
   * Files a task as the reference's {@code append} of a {@code created} event does: the domain's
   * lock, the event, the row born proposed, the route.
   *
   * @param domain the domain
   * @param id the new task's id
   * @param title its title
   * @param requirements its requirements
   * @param dependsOn its dependencies' ids
   * @param priority its priority
   * @param at the time, RFC 3339 text
   * @throws SQLException when a statement fails
   */
  public void file(
      String domain,
      String id,
      String title,
      List<String> requirements,
      List<String> dependsOn,
      long priority,
      String at)
      throws SQLException {
    ObjectNode spec = JSON.createObjectNode();
    spec.put("domain", domain);
    spec.put("title", title);
    spec.put("body", "");
    ArrayNode req = spec.putArray("requirements");
    requirements.forEach(req::add);
    ArrayNode deps = spec.putArray("depends_on");
    dependsOn.forEach(deps::add);
    spec.putNull("origin");
    spec.putNull("upstream_event");
    spec.put("created_by", "reference");
    spec.put("classification", "public");
    spec.put("priority", priority);
    ObjectNode payload = JSON.createObjectNode();
    payload.put("id", id);
    payload.set("spec", spec);
    inTransaction(
        () -> {
          String s = ensureDomainIn(domain);
          apply(s, id, "created", at, payload);
          return null;
        });
  }

  /**
   * Appends one event to an existing task and projects it, as the reference's {@code append}.
   *
   * @param id the task id
   * @param kind the event kind
   * @param at the time, RFC 3339 text
   * @param payload the payload, format v1 JSON text
   * @throws SQLException when a statement fails or no task has the id
   */
  public void append(String id, String kind, String at, String payload) throws SQLException {
    JsonNode p = parse(payload);
    inTransaction(
        () -> {
          String s = schemaOfTask(id);
          apply(s, id, kind, at, p);
          return null;
        });
  }

  /**
   * The reference's {@code rebuild}: every domain in domain order, in one transaction: the domain's
   * lock, its tasks, promotions and routes deleted, its events projected again one statement at a
   * time.
   *
   * @return how many events were replayed
   * @throws SQLException when a statement fails
   */
  public long rebuild() throws SQLException {
    return inTransaction(
        () -> {
          List<String[]> domains = new ArrayList<>();
          try (Statement st = c.createStatement();
              ResultSet rs =
                  st.executeQuery(
                      "SELECT domain, schema FROM public.ledger_domains ORDER BY domain")) {
            while (rs.next()) {
              domains.add(new String[] {rs.getString(1), rs.getString(2)});
            }
          }
          long n = 0;
          for (String[] d : domains) {
            lockDomain(d[0]);
            String s = d[1];
            update("DELETE FROM " + s + ".tasks");
            update("DELETE FROM " + s + ".promotions");
            update("DELETE FROM public.ledger_tasks WHERE domain = ?", d[0]);
            List<String[]> events = new ArrayList<>();
            try (Statement st = c.createStatement();
                ResultSet rs =
                    st.executeQuery(
                        "SELECT task_id, at, payload, kind FROM " + s + ".events ORDER BY seq")) {
              while (rs.next()) {
                events.add(
                    new String[] {
                      rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4)
                    });
              }
            }
            for (String[] e : events) {
              project(s, e[0], e[3], e[1], parse(e[2]));
              n++;
            }
          }
          return n;
        });
  }

  @Override
  public void close() throws SQLException {
    c.close();
  }

  // ---------------------------------------------------------------------------------------------

  private String ensureDomainIn(String domain) throws SQLException {
    lockDomain(domain);
    try (PreparedStatement q =
        c.prepareStatement("SELECT schema FROM public.ledger_domains WHERE domain = ?")) {
      q.setString(1, domain);
      try (ResultSet rs = q.executeQuery()) {
        if (rs.next()) {
          return rs.getString(1);
        }
      }
    }
    String s = "\"" + dev.ledger.schema.DomainSchemas.schemaName(domain) + "\"";
    try (Statement st = c.createStatement()) {
      st.execute("CREATE SCHEMA IF NOT EXISTS " + s + ";" + DOMAIN_DDL.replace("{s}", s));
    }
    update("INSERT INTO public.ledger_domains (domain, schema) VALUES (?, ?)", domain, s);
    return s;
  }

  private void lockDomain(String domain) throws SQLException {
    try (PreparedStatement q =
        c.prepareStatement("SELECT pg_advisory_xact_lock(hashtext('ledger_domain:' || ?))")) {
      q.setString(1, domain);
      q.execute();
    }
  }

  private String schemaOfTask(String id) throws SQLException {
    try (PreparedStatement q =
        c.prepareStatement(
            "SELECT d.schema FROM public.ledger_tasks t"
                + " JOIN public.ledger_domains d ON d.domain = t.domain WHERE t.id = ?")) {
      q.setString(1, id);
      try (ResultSet rs = q.executeQuery()) {
        if (!rs.next()) {
          throw new SQLException("no task " + id);
        }
        return rs.getString(1);
      }
    }
  }

  private void apply(String s, String id, String kind, String at, JsonNode payload)
      throws SQLException {
    update(
        "INSERT INTO " + s + ".events (task_id, kind, at, payload) VALUES (?, ?, ?, ?)",
        id,
        kind,
        at,
        payload.toString());
    project(s, id, kind, at, payload);
  }

  /** The reference's {@code project}: one statement per event (two for {@code created}). */
  private void project(String s, String id, String kind, String at, JsonNode p)
      throws SQLException {
    String t = "UPDATE " + s + ".tasks ";
    switch (kind) {
      case "created" -> {
        JsonNode spec = p.get("spec");
        String newId = p.get("id").asText();
        update(
            "INSERT INTO "
                + s
                + ".tasks (id, domain, title, body, requirements, depends_on, origin,"
                + " upstream_event, created_by, label_rank, priority, created, status)"
                + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'proposed')",
            newId,
            spec.get("domain").asText(),
            spec.get("title").asText(),
            spec.get("body").asText(),
            spec.get("requirements").toString(),
            spec.get("depends_on").toString(),
            text(spec.get("origin")),
            text(spec.get("upstream_event")),
            spec.get("created_by").asText(),
            RANKS.get(spec.get("classification").asText()),
            spec.get("priority").asLong(),
            at);
        update(
            "INSERT INTO public.ledger_tasks (id, domain) VALUES (?, ?)",
            newId,
            spec.get("domain").asText());
      }
      case "promoted" -> {
        JsonNode spec = p.get("spec");
        update(
            "INSERT INTO "
                + s
                + ".promotions (domain, entry, tier, promoter, author, why, label_rank, digest,"
                + " new_digest, at, why_erased) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            spec.get("domain").asText(),
            spec.get("entry").asText(),
            spec.get("tier").asText(),
            spec.get("by").asText(),
            spec.get("author").asText(),
            spec.get("why").asText(),
            RANKS.get(spec.get("classification").asText()),
            spec.get("digest").asText(),
            spec.path("new_digest").asText(""),
            at,
            p.path("why_erased").asBoolean(false) ? 1L : 0L);
      }
      case "admitted" -> update(t + "SET status = 'admitted' WHERE id = ?", id);
      case "claimed" ->
          update(
              t
                  + "SET status = 'claimed', holder = ?, lease_until = ?,"
                  + " attempts = attempts + 1 WHERE id = ?",
              p.get("holder").asText(),
              p.get("until").asText(),
              id);
      case "heartbeat" ->
          update(t + "SET lease_until = ? WHERE id = ?", p.get("until").asText(), id);
      case "released" ->
          update(t + "SET status = 'admitted', holder = NULL, lease_until = NULL WHERE id = ?", id);
      case "handoff_left" -> update(t + "SET handoff = ? WHERE id = ?", text(p.get("handoff")), id);
      case "completed" ->
          update(
              t + "SET status = 'completed', handoff = ?, lease_until = NULL WHERE id = ?",
              text(p.get("handoff")),
              id);
      case "invalidated" ->
          update(
              t
                  + "SET status = 'invalidated', reason = ?, superseded_by = ?,"
                  + " lease_until = NULL WHERE id = ?",
              text(p.get("reason")),
              text(p.get("superseded_by")),
              id);
      case "posted" -> update(t + "SET posted_to = ? WHERE id = ?", p.get("to").asText(), id);
      case "rescored" ->
          update(t + "SET priority = ? WHERE id = ?", p.get("priority").asLong(), id);
      default -> throw new IllegalArgumentException("unknown event kind " + kind);
    }
  }

  private static String text(JsonNode n) {
    return n == null || n.isNull() ? null : n.asText();
  }

  private static JsonNode parse(String json) {
    try {
      return JSON.readTree(json);
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("not JSON: " + json, e);
    }
  }

  private void update(String sql, Object... args) throws SQLException {
    try (PreparedStatement q = c.prepareStatement(sql)) {
      for (int i = 0; i < args.length; i++) {
        q.setObject(i + 1, args[i]);
      }
      q.executeUpdate();
    }
  }

  @FunctionalInterface
  private interface Work<T> {
    T run() throws SQLException;
  }

  private <T> T inTransaction(Work<T> work) throws SQLException {
    c.setAutoCommit(false);
    try {
      T result = work.run();
      c.commit();
      return result;
    } catch (SQLException | RuntimeException e) {
      c.rollback();
      throw e;
    } finally {
      c.setAutoCommit(true);
    }
  }
}
