package dev.ledger.kernel;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.jooq.Converter;
import org.jooq.DSLContext;
import org.jooq.DataType;
import org.jooq.Field;
import org.jooq.Param;
import org.jooq.Query;
import org.jooq.QueryPart;
import org.jooq.Record;
import org.jooq.Table;
import org.jooq.conf.MappedSchema;
import org.jooq.conf.RenderMapping;
import org.jooq.impl.DSL;

/**
 * A statement built with jOOQ's DSL once per schema and kept as SQL text, then run again with fresh
 * bind values through jOOQ's plain-SQL API. Building and rendering a statement costs far more
 * client CPU than running it (the claim's is several kilobytes of nested CTEs: about 1 ms per call,
 * most of a claim's client time, bench B2); the jOOQ manual ("Performance considerations")
 * recommends caching the SQL jOOQ generates for such hot statements.
 *
 * <p>Every bind value of a cached statement is a {@link Slot}: a template is built with each slot's
 * {@link Slot#field() placeholder} where a value goes, and the statement learns which slot each
 * {@code ?} stands for by finding the placeholders among the template's bind values. A bind value
 * that is no slot's placeholder would be frozen into the cached text, so {@link #render} refuses
 * it: constants of a cached statement are {@code DSL.inline}d. Executions still go through jOOQ
 * (execute listeners, converters, bindings), so what runs is exactly what the DSL rendered.
 *
 * <pre>{@code
 * Slot<String> ID = Slot.of("id", TASKS.ID.getDataType());
 * RenderedStatement lock = cache.get(tx, "lock task",
 *     () -> DSL.selectFrom(TASKS).where(TASKS.ID.eq(ID.field())).forUpdate(), List.of(ID));
 * List<Record> rows = lock.fetch(tx, TASKS.fields(), id);
 * }</pre>
 */
public final class RenderedStatement {

  private static final AtomicInteger MARKERS = new AtomicInteger();

  private final String sql;

  /**
   * For each {@code ?} of the leads and then of {@link #sql}, in order: the index of its slot in
   * the caller's list.
   */
  private final int[] positions;

  private final List<Slot<?>> slots;

  /** The statements sent before {@link #sql} in the same round trip, in order; maybe none. */
  private final List<String> leads;

  /** How many bind values each lead takes (the first ones of {@link #positions}). */
  private final int[] leadBinds;

  private RenderedStatement(
      String sql, int[] positions, List<Slot<?>> slots, List<String> leads, int[] leadBinds) {
    this.sql = sql;
    this.positions = positions;
    this.slots = slots;
    this.leads = leads;
    this.leadBinds = leadBinds;
  }

  /**
   * A named bind value of a cached statement, typed by a column's data type (so the column's
   * converter binds it). Its placeholder holds a value no caller binds, the slot's marker: a value
   * of the slot's own Java type for {@link String}, {@link Long}, {@link Integer}, {@link Instant}
   * and {@code String[]} (found by identity), and for other types (booleans, lists) an object of a
   * private type, bound through a converted data type that renders the same SQL.
   *
   * @param <T> the Java type bound
   */
  public static final class Slot<T> {
    private final String name;
    private final DataType<T> type;
    private final Object marker;
    private final Field<T> placeholder;

    private Slot(String name, DataType<T> type, Object marker, Field<T> placeholder) {
      this.name = name;
      this.type = type;
      this.marker = marker;
      this.placeholder = placeholder;
    }

    /**
     * A slot of a data type.
     *
     * @param name what the value is, for error messages, e.g. {@code holder}
     * @param type the data type, usually a column's ({@code TASKS.HOLDER.getDataType()}), not null
     * @param <T> the Java type
     * @return the slot
     */
    public static <T> Slot<T> of(String name, DataType<T> type) {
      int n = MARKERS.incrementAndGet();
      Class<T> c = type.getType();
      Object natural = null;
      if (c == String.class) {
        natural = "\u0000slot " + n + " " + name;
      } else if (c == Long.class) {
        natural = Long.MIN_VALUE + n;
      } else if (c == Integer.class) {
        natural = Integer.MIN_VALUE + n;
      } else if (c == Instant.class) {
        natural = Instant.EPOCH.minusSeconds(n);
      } else if (c == String[].class) {
        natural = new String[] {"\u0000slot " + n + " " + name}; // found by identity
      }
      if (natural != null) {
        return new Slot<>(name, type, natural, DSL.val(c.cast(natural), type));
      }
      Marker marker = new Marker(n, name);
      DataType<?> sqlType = type.getSQLDataType();
      Object neutral =
          sqlType.getType() == String.class
              ? ""
              : sqlType.getType() == Boolean.class ? Boolean.FALSE : null;
      if (neutral == null) {
        throw new IllegalArgumentException(
            "slot " + name + ": no placeholder for " + c.getName() + " stored as " + sqlType);
      }
      Field<T> placeholder = placeholder(sqlType, marker, neutral);
      return new Slot<>(name, type, marker, placeholder);
    }

    /**
     * The placeholder to build a template with, where this slot's value goes. Render it only.
     *
     * @return a bind value holding the slot's marker
     */
    public Field<T> field() {
      return placeholder;
    }

    /**
     * The slot's name.
     *
     * @return e.g. {@code holder}
     */
    public String name() {
      return name;
    }
  }

  /**
   * A placeholder of the column's database type holding a marker: rendering converts it to {@code
   * neutral} (jOOQ's bindings look at the value they render), it is never bound.
   */
  private static <T, D> Field<T> placeholder(DataType<D> sqlType, Marker marker, Object neutral) {
    Class<D> d = sqlType.getType();
    DataType<Marker> markerType =
        sqlType.asConvertedDataType(
            Converter.of(
                d,
                Marker.class,
                v -> {
                  throw new IllegalStateException("slot " + marker.name() + " is a placeholder");
                },
                m -> d.cast(neutral)));
    @SuppressWarnings("unchecked")
    Field<T> field = (Field<T>) (Field<?>) DSL.val(marker, markerType);
    return field;
  }

  /** The marker of a slot whose Java type has no spare values. */
  private record Marker(int id, String name) {}

  /**
   * Renders a template once.
   *
   * @param ctx the context to render with (its settings: the schema's render mapping), not null
   * @param template the statement, built with the slots' {@link Slot#field() placeholders}
   * @param slots the statement's slots, in the order callers pass values; each used at least once
   * @return the rendered statement
   * @throws IllegalStateException when a bind value of the template is no slot's placeholder, or a
   *     slot is not used
   */
  public static RenderedStatement render(DSLContext ctx, Query template, List<Slot<?>> slots) {
    return render(ctx, List.of(), template, slots);
  }

  /** The slot index of each bind value of {@code q}, checking that each is a slot's placeholder. */
  private static int[] positionsOf(
      DSLContext ctx, Query q, Map<Object, Integer> byMarker, boolean[] used) {
    List<Object> binds = ctx.extractBindValues(q);
    int[] positions = new int[binds.size()];
    for (int i = 0; i < positions.length; i++) {
      Integer slot = byMarker.get(binds.get(i));
      if (slot == null) {
        throw new IllegalStateException(
            "bind value "
                + (i + 1)
                + " of a cached statement is not a slot ("
                + binds.get(i)
                + "): inline the constant or make it a slot");
      }
      positions[i] = slot;
      used[slot] = true;
    }
    return positions;
  }

  /**
   * Renders a template once, to run after lead statements in the same round trip: all are sent
   * together, as one JDBC execute (one network round trip; each statement takes its own snapshot
   * under READ COMMITTED, so the template's sees what committed while a lead waited for a lock; in
   * autocommit mode the server runs the whole text as one implicit transaction, committed before
   * the execute returns). The leads' results are skipped; {@link #fetch} returns the template's
   * rows. The leads may take the slots' values too (e.g. {@code set_config} of a transaction's
   * bounds). With execute listeners each statement runs on its own, in order, each seen by the
   * listeners.
   *
   * @param ctx the context to render with, not null
   * @param leads the statements sent first, in order; their results are skipped
   * @param template the statement whose rows are read, built with the slots' placeholders
   * @param slots the slots of the leads and the template, in the order callers pass values; each
   *     used at least once
   * @return the rendered statements
   * @throws IllegalStateException see {@link #render(DSLContext, Query, List)}
   */
  public static RenderedStatement render(
      DSLContext ctx, List<? extends Query> leads, Query template, List<Slot<?>> slots) {
    Map<Object, Integer> byMarker = new HashMap<>();
    for (int i = 0; i < slots.size(); i++) {
      if (byMarker.put(slots.get(i).marker, i) != null) {
        throw new IllegalStateException("slot " + slots.get(i).name + " is listed twice");
      }
    }
    boolean[] used = new boolean[slots.size()];
    List<String> leadSql = new ArrayList<>(leads.size());
    int[] leadBinds = new int[leads.size()];
    List<int[]> parts = new ArrayList<>(leads.size() + 1);
    for (int i = 0; i < leads.size(); i++) {
      int[] p = positionsOf(ctx, leads.get(i), byMarker, used);
      leadBinds[i] = p.length;
      parts.add(p);
      leadSql.add(ctx.render(leads.get(i)));
    }
    parts.add(positionsOf(ctx, template, byMarker, used));
    for (int i = 0; i < used.length; i++) {
      if (!used[i]) {
        throw new IllegalStateException("slot " + slots.get(i).name + " is not used");
      }
    }
    int[] positions = parts.stream().flatMapToInt(java.util.Arrays::stream).toArray();
    return new RenderedStatement(
        ctx.render(template), positions, List.copyOf(slots), List.copyOf(leadSql), leadBinds);
  }

  /**
   * Runs the statement and reads the rows it returns.
   *
   * @param ctx the context to run on (a transaction's), mapped to the schema it was rendered for
   * @param fields the columns the statement returns, in order: each value is read with the field's
   *     converter
   * @param values the slots' values, in the order the slots were listed; nulls allowed
   * @return the rows, typed by {@code fields}
   * @throws IllegalArgumentException when a value's count or type does not match the slots
   * @throws org.jooq.exception.DataAccessException when the database refuses it
   */
  public List<Record> fetch(DSLContext ctx, Field<?>[] fields, Object... values) {
    return rows(ctx, fields, () -> ctx.newRecord(fields), values);
  }

  /**
   * Runs the statement and reads the rows it returns as records of a table, read and unchanged (so
   * {@code changed()} then says what the caller set).
   *
   * @param ctx the context to run on (a transaction's), mapped to the schema it was rendered for
   * @param table the table whose every column the statement returns, in the table's order
   * @param values the slots' values, in the order the slots were listed; nulls allowed
   * @param <R> the record type
   * @return the records
   * @throws IllegalArgumentException when a value's count or type does not match the slots
   * @throws org.jooq.exception.DataAccessException when the database refuses it
   */
  public <R extends Record> List<R> fetchInto(DSLContext ctx, Table<R> table, Object... values) {
    return rows(ctx, table.fields(), () -> ctx.newRecord(table), values);
  }

  /** Runs the statement; each row read into a new record of {@code fields}, left unchanged. */
  private <R extends Record> List<R> rows(
      DSLContext ctx, Field<?>[] fields, Supplier<R> newRecord, Object[] values) {
    Object[] bound = ordered(values);
    if (observed(ctx)) {
      int from = 0;
      for (int i = 0; i < leads.size(); i++) {
        ctx.execute(leads.get(i), (Object[]) params(bound, from, from + leadBinds[i]));
        from += leadBinds[i];
      }
      List<R> rows = new ArrayList<>();
      for (Record r :
          ctx.resultQuery(sql, (Object[]) params(bound, from, bound.length))
              .coerce(fields)
              .fetch()) {
        R row = newRecord.get();
        for (Field<?> f : fields) {
          copy(r, row, f);
        }
        row.changed(false);
        rows.add(row);
      }
      return rows;
    }
    if (!leads.isEmpty()) {
      return ctx.connectionResult(
          c -> {
            try (PreparedStatement ps =
                c.prepareStatement(String.join(";\n", leads) + ";\n" + sql)) {
              bind(ps, bound);
              ps.execute(); // the first lead's result, skipped
              for (int i = 0; i < leads.size(); i++) {
                // each further result: the next lead's, skipped, then the statement's
                if (!ps.getMoreResults()) {
                  throw new IllegalStateException(
                      "the statement after lead " + (i + 1) + " returned no rows");
                }
              }
              try (ResultSet rs = ps.getResultSet()) {
                return readAll(rs, fields, newRecord);
              }
            }
          });
    }
    return ctx.connectionResult(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, bound);
            try (ResultSet rs = ps.executeQuery()) {
              return readAll(rs, fields, newRecord);
            }
          }
        });
  }

  private static <R extends Record> List<R> readAll(
      ResultSet rs, Field<?>[] fields, Supplier<R> newRecord) throws SQLException {
    List<R> rows = new ArrayList<>();
    while (rs.next()) {
      rows.add(read(rs, newRecord.get(), fields));
    }
    return rows;
  }

  private static <U> void copy(Record from, Record to, Field<U> field) {
    to.set(field, from.get(field));
  }

  /**
   * Reads the current row into a record, each value read as its column's database type and
   * converted by the field's converter, as jOOQ's own fetch does, without its cursor machinery (a
   * tenth of an admit's client time, bench B1).
   */
  private static <R extends Record> R read(ResultSet rs, R record, Field<?>[] fields)
      throws SQLException {
    for (int i = 0; i < fields.length; i++) {
      set(rs, i + 1, record, fields[i]);
    }
    record.changed(false);
    return record;
  }

  private static <U> void set(ResultSet rs, int index, Record record, Field<U> field)
      throws SQLException {
    DataType<U> type = field.getDataType();
    Class<?> db = type.getSQLDataType().getType();
    Object value;
    if (db == String.class) {
      value = rs.getString(index);
    } else if (db == Long.class) {
      long v = rs.getLong(index);
      value = rs.wasNull() ? null : v;
    } else if (db == Integer.class) {
      int v = rs.getInt(index);
      value = rs.wasNull() ? null : v;
    } else if (db == Boolean.class) {
      boolean v = rs.getBoolean(index);
      value = rs.wasNull() ? null : v;
    } else {
      throw new IllegalStateException(
          "column "
              + field.getName()
              + ": cannot read "
              + db.getName()
              + " from a cached statement");
    }
    @SuppressWarnings("unchecked")
    Converter<Object, U> converter = (Converter<Object, U>) type.getConverter();
    record.set(field, converter.from(value));
  }

  /**
   * Runs the statement.
   *
   * @param ctx the context to run on, mapped to the schema it was rendered for
   * @param values the slots' values, in the order the slots were listed; nulls allowed
   * @return the rows it affected
   * @throws IllegalArgumentException when a value's count or type does not match the slots
   * @throws org.jooq.exception.DataAccessException when the database refuses it
   */
  public int execute(DSLContext ctx, Object... values) {
    if (!leads.isEmpty()) {
      throw new IllegalStateException("a statement with a lead is fetched, not executed");
    }
    Object[] bound = ordered(values);
    if (observed(ctx)) {
      return ctx.execute(sql, (Object[]) params(bound, 0, bound.length));
    }
    return ctx.connectionResult(
        c -> {
          try (PreparedStatement ps = c.prepareStatement(sql)) {
            bind(ps, bound);
            return ps.executeUpdate();
          }
        });
  }

  /**
   * Whether the context has execute listeners: then statements run through jOOQ's plain-SQL API, so
   * the listeners see them (a test's SQL guard, the benchmark's capture). Otherwise they run as
   * JDBC prepared statements on the context's connection: jOOQ would parse the text again for its
   * placeholders and the statement type on every call, half of the client time left once the
   * statement is rendered (bench B1/B2 profile).
   */
  private static boolean observed(DSLContext ctx) {
    return ctx.configuration().executeListenerProviders().length > 0;
  }

  /**
   * The SQL text, with {@code ?} for every bind value.
   *
   * @return the text
   */
  public String sql() {
    return sql;
  }

  /** The slots' values checked against their types and put in the order of the placeholders. */
  private Object[] ordered(Object[] values) {
    if (values.length != slots.size()) {
      throw new IllegalArgumentException(
          "the statement has " + slots.size() + " slots, given " + values.length + " values");
    }
    for (int i = 0; i < values.length; i++) {
      Class<?> c = slots.get(i).type.getType();
      if (values[i] != null && !c.isInstance(values[i])) {
        throw new IllegalArgumentException(
            "slot "
                + slots.get(i).name
                + " takes "
                + c.getSimpleName()
                + ", given "
                + values[i].getClass().getSimpleName());
      }
    }
    Object[] out = new Object[positions.length];
    for (int i = 0; i < positions.length; i++) {
      out[i] = values[positions[i]];
    }
    return out;
  }

  /** The ordered values {@code from} to {@code to} as jOOQ bind values of their slots' types. */
  private QueryPart[] params(Object[] ordered, int from, int to) {
    QueryPart[] out = new QueryPart[to - from];
    for (int i = from; i < to; i++) {
      out[i - from] = param(slots.get(positions[i]), ordered[i]);
    }
    return out;
  }

  private static <T> Param<T> param(Slot<T> slot, Object value) {
    return DSL.val(slot.type.getType().cast(value), slot.type);
  }

  /**
   * Binds the ordered values as jOOQ would: each converted to its database type by the slot's
   * converter, then set as that JDBC type (so the server plans and caches the same statement).
   */
  private void bind(PreparedStatement ps, Object[] ordered) throws SQLException {
    for (int i = 0; i < ordered.length; i++) {
      Slot<?> slot = slots.get(positions[i]);
      Object db = toDatabase(slot, ordered[i]);
      int index = i + 1;
      if (db == null) {
        ps.setNull(index, slot.type.getSQLType());
      } else if (db instanceof String v) {
        ps.setString(index, v);
      } else if (db instanceof Long v) {
        ps.setLong(index, v);
      } else if (db instanceof Integer v) {
        ps.setInt(index, v);
      } else if (db instanceof Boolean v) {
        ps.setBoolean(index, v);
      } else if (db instanceof String[] v) {
        ps.setArray(index, ps.getConnection().createArrayOf("text", v));
      } else {
        throw new IllegalStateException(
            "slot " + slot.name + ": cannot bind " + db.getClass().getName());
      }
    }
  }

  private static <U> Object toDatabase(Slot<U> slot, Object value) {
    return slot.type.getConverter().to(slot.type.getType().cast(value));
  }

  /**
   * Rendered statements by render mapping and name, rendered on first use. The key is what the
   * rendered text depends on: the context's render mapping (which schemas the template schemas
   * become) and the statement's name. Thread-safe.
   *
   * <p>Entries are never evicted: a ledger's statements number a few dozen per domain schema.
   */
  public static final class Cache {
    private final Map<String, RenderedStatement> byKey = new ConcurrentHashMap<>();

    /**
     * The statement of this name for {@code ctx}'s render mapping, rendered with {@code ctx} the
     * first time.
     *
     * @param ctx a context (a transaction's, or a render-mapped one), not null
     * @param name the statement's name, e.g. {@code claim}; one name, one template
     * @param leads builds the statements sent first in the same round trip (see {@link
     *     RenderedStatement#render(DSLContext, List, Query, List)})
     * @param template builds the statement; called once per render mapping and name
     * @param slots the statement's slots, in the order callers pass values
     * @return the statement
     * @throws IllegalStateException see {@link #render}
     */
    public RenderedStatement get(
        DSLContext ctx,
        String name,
        Supplier<? extends List<? extends Query>> leads,
        Supplier<? extends Query> template,
        List<Slot<?>> slots) {
      String key = key(ctx, name);
      RenderedStatement s = byKey.get(key);
      if (s == null) {
        s = byKey.computeIfAbsent(key, k -> render(ctx, leads.get(), template.get(), slots));
      }
      return s;
    }

    /**
     * The statement of this name for {@code ctx}'s render mapping, rendered with {@code ctx} the
     * first time.
     *
     * @param ctx a context (a transaction's, or a render-mapped one), not null
     * @param name the statement's name, e.g. {@code claim}; one name, one template
     * @param template builds the statement; called once per render mapping and name
     * @param slots the statement's slots, in the order callers pass values
     * @return the statement
     * @throws IllegalStateException see {@link #render}
     */
    public RenderedStatement get(
        DSLContext ctx, String name, Supplier<? extends Query> template, List<Slot<?>> slots) {
      String key = key(ctx, name);
      RenderedStatement s = byKey.get(key);
      if (s == null) {
        s = byKey.computeIfAbsent(key, k -> render(ctx, template.get(), slots));
      }
      return s;
    }

    private static String key(DSLContext ctx, String name) {
      StringBuilder key = new StringBuilder(name);
      RenderMapping mapping = ctx.settings().getRenderMapping();
      if (mapping != null) {
        for (MappedSchema m : mapping.getSchemata()) {
          key.append('\u0000').append(m.getInput()).append('=').append(m.getOutput());
        }
      }
      return key.toString();
    }
  }
}
