package dev.ledger.bench;

import static dev.ledger.codegen.db.ledger_template.Tables.TASKS;

import dev.ledger.Status;
import dev.ledger.TaskSpec;
import dev.ledger.codegen.convert.Rfc3339;
import dev.ledger.codegen.db.ledger_template.tables.records.TasksRecord;
import dev.ledger.event.Event;
import dev.ledger.event.Projection;
import java.io.StringReader;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import javax.sql.DataSource;
import org.jooq.Converter;
import org.jooq.Field;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyManager;

/**
 * Fills a provisioned domain with many tasks fast, for the setup of a benchmark (never measured):
 * each task's events are written in format v1 by the ledger's own {@link Event} classes, its row by
 * the ledger's own {@link Projection} fold, and all rows go in with {@code COPY}. The result is the
 * state the API would have left; B5 checks that a replay of it gives the same projection.
 *
 * <pre>{@code
 * try (Seeder s = new Seeder(dataSource, "acme", schema)) {
 *   s.add(TaskSpec.builder("acme", "t").build(), new Event.Admitted());
 * }
 * }</pre>
 */
final class Seeder implements AutoCloseable {

  private static final int FLUSH_TASKS = 5_000;

  private final DataSource dataSource;
  private final String domain;
  private final String schema;
  private final StringBuilder events = new StringBuilder();
  private final StringBuilder tasks = new StringBuilder();
  private final StringBuilder routes = new StringBuilder();
  private final Instant base;
  private final String idPrefix;
  private long n;
  private int pending;
  private long tick;

  /**
   * Creates a seeder.
   *
   * @param dataSource the database
   * @param domain the domain, already provisioned
   * @param schema its schema, bare
   * @throws SQLException when the schema's tasks cannot be counted
   */
  Seeder(DataSource dataSource, String domain, String schema) throws SQLException {
    // a day ago, so seeded tasks are older than anything filed live and leases are in the future
    this(dataSource, domain, schema, Instant.now().minus(1, ChronoUnit.DAYS));
  }

  /**
   * Creates a seeder whose events start at a given time (one microsecond apart from there).
   *
   * @param dataSource the database
   * @param domain the domain, already provisioned
   * @param schema its schema, bare
   * @param base the time just before the first event, e.g. older than a retention
   * @throws SQLException when the schema's tasks cannot be counted
   */
  Seeder(DataSource dataSource, String domain, String schema, Instant base) throws SQLException {
    this.dataSource = dataSource;
    this.domain = domain;
    this.schema = schema;
    this.base = base.truncatedTo(ChronoUnit.MICROS);
    this.idPrefix = Integer.toHexString(schema.hashCode() & 0xfffff);
    // a second seeder of the same schema (a top-up) numbers its tasks after the first one's
    this.n = Context.count(dataSource, "SELECT count(*) FROM \"" + schema + "\".tasks");
  }

  /**
   * Adds one task: its {@code created} event, then the given events, in that order.
   *
   * @param spec what it is filed with; its domain must be this seeder's
   * @param later the events after {@code created}, e.g. {@code admitted}
   * @return the task's id
   * @throws SQLException when a flush fails
   */
  String add(TaskSpec spec, Event... later) throws SQLException {
    if (!domain.equals(spec.domain())) {
      throw new IllegalArgumentException("spec of another domain: " + spec.domain());
    }
    n++;
    String id = String.format("t%014x-s%s%07x", n, idPrefix, n);
    Instant at = next();
    TasksRecord row = Projection.created(id, at, spec);
    event(id, at, new Event.Created(id, spec));
    for (Event e : later) {
      Instant when = next();
      event(id, when, e);
      Projection.apply(row, e);
    }
    row(row);
    csv(routes, id, domain, Status.COMPLETED.wire().equals(row.getStatus()) ? "t" : "f");
    if (++pending >= FLUSH_TASKS) {
      flush();
    }
    return id;
  }

  /**
   * A time after every time handed out so far by this seeder.
   *
   * @return the next microsecond
   */
  Instant next() {
    return base.plus(++tick, ChronoUnit.MICROS);
  }

  /**
   * Writes what is buffered.
   *
   * @throws SQLException when the server refuses
   */
  void flush() throws SQLException {
    if (pending == 0) {
      return;
    }
    try (Connection c = dataSource.getConnection()) {
      CopyManager copy = c.unwrap(PGConnection.class).getCopyAPI();
      String q = "\"" + schema + "\"";
      copy(
          copy,
          "COPY " + q + ".events (task_id, kind, at, payload) FROM STDIN (FORMAT csv)",
          events);
      StringBuilder columns = new StringBuilder();
      for (Field<?> f : TASKS.fields()) {
        columns
            .append(columns.length() == 0 ? "" : ", ")
            .append('"')
            .append(f.getName())
            .append('"');
      }
      copy(copy, "COPY " + q + ".tasks (" + columns + ") FROM STDIN (FORMAT csv)", tasks);
      copy(
          copy, "COPY public.ledger_tasks (id, domain, completed) FROM STDIN (FORMAT csv)", routes);
    } catch (java.io.IOException e) {
      throw new SQLException("COPY failed", e);
    }
    pending = 0;
  }

  /**
   * Writes what is buffered, then derives what the ledger keeps beside the rows for claims (domain
   * migration V6, directory V3), as their migrations backfill it.
   *
   * @throws SQLException when the server refuses
   */
  @Override
  public void close() throws SQLException {
    flush();
    try (Connection c = dataSource.getConnection();
        java.sql.Statement st = c.createStatement()) {
      derive(st, schema);
    }
  }

  /**
   * Derives a domain's claim classes, its dependency edges and the {@code blocked} flags from its
   * task rows and the routes: what {@code ClaimIndex} keeps live and a replay rebuilds.
   *
   * @param st a statement on the database (in the caller's transaction, if any)
   * @param schema the domain schema, bare
   * @throws SQLException when the server refuses
   */
  static void derive(java.sql.Statement st, String schema) throws SQLException {
    String s = "\"" + schema + "\"";
    st.execute(
        "INSERT INTO "
            + s
            + ".claim_classes (label_rank, requirements_md5, requirements)"
            + " SELECT DISTINCT label_rank, md5(requirements), requirements FROM "
            + s
            + ".tasks ON CONFLICT DO NOTHING");
    st.execute(
        "INSERT INTO public.ledger_dependencies (depends_on, task_id) SELECT DISTINCT dep, t.id"
            + " FROM "
            + s
            + ".tasks t, jsonb_array_elements_text(t.depends_on::jsonb) AS dep"
            + " ON CONFLICT DO NOTHING");
    st.execute(
        "UPDATE "
            + s
            + ".tasks t SET blocked = true WHERE t.depends_on <> '[]' AND EXISTS (SELECT 1 FROM"
            + " public.ledger_dependencies d LEFT JOIN public.ledger_tasks r ON r.id ="
            + " d.depends_on WHERE d.task_id = t.id AND (r.completed IS NULL OR NOT r.completed))");
  }

  private static void copy(CopyManager copy, String sql, StringBuilder rows)
      throws SQLException, java.io.IOException {
    copy.copyIn(sql, new StringReader(rows.toString()));
    rows.setLength(0);
  }

  private void event(String id, Instant at, Event e) {
    csv(events, id, e.kind().wire(), Rfc3339.format(at), e.payload().toString());
  }

  @SuppressWarnings("unchecked")
  private void row(TasksRecord row) {
    Field<?>[] fields = TASKS.fields();
    String[] values = new String[fields.length];
    for (int i = 0; i < fields.length; i++) {
      Object user = row.get(fields[i]);
      Object db = ((Converter<Object, Object>) fields[i].getConverter()).to(user);
      values[i] = db == null ? null : db.toString();
    }
    csv(tasks, values);
  }

  private static void csv(StringBuilder out, String... values) {
    for (int i = 0; i < values.length; i++) {
      if (i > 0) {
        out.append(',');
      }
      String v = values[i];
      if (v != null) {
        out.append('"').append(v.replace("\"", "\"\"")).append('"');
      }
    }
    out.append('\n');
  }

  /**
   * The JSON text of a list of ids or requirements, as the ledger stores it.
   *
   * @param values the values
   * @return e.g. {@code ["a","b"]}
   */
  static String jsonArray(List<String> values) {
    return new dev.ledger.codegen.convert.StringListConverter().to(values);
  }
}
