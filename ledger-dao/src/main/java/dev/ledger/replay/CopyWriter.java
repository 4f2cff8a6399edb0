package dev.ledger.replay;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jooq.Converter;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.JSON;
import org.jooq.JSONB;
import org.jooq.Record;
import org.jooq.Table;
import org.jooq.conf.RenderQuotedNames;
import org.jooq.conf.Settings;
import org.jooq.impl.DSL;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;

/**
 * Writes jOOQ records into a table with PostgreSQL's {@code COPY ... FROM STDIN} (text format) on
 * the connection of the caller's jOOQ transaction: what a replay uses to write a whole projection.
 *
 * <p>Why {@code COPY} and not jOOQ's DSL: jOOQ cannot express {@code COPY ... FROM STDIN} (its
 * {@code loadInto} API issues {@code INSERT}s), and a multi-row {@code INSERT} costs the client a
 * bind value per column per row and the server a parse and plan per statement; {@code COPY} streams
 * rows in one statement. What stays jOOQ's: the statement text is rendered from the generated table
 * and field objects through the caller's context, so the render mapping names the real schema,
 * every identifier is quoted, and the column list cannot drift from the schema; each value goes
 * through its field's converter ({@code Instant} to RFC 3339 text, {@code List<String>} to JSON,
 * ...) exactly as a bind value would.
 *
 * <p>Text format: columns separated by a tab, rows ended by a newline, {@code \N} for null; in
 * every value a backslash, newline, carriage return and tab are written {@code \\}, {@code \n},
 * {@code \r}, {@code \t}, so no value can end a field, a row or the data ({@code \.}); every other
 * character is itself, UTF-8 (the client encoding pgjdbc always uses). Database types written: text
 * ({@link String}), {@code bigint}/{@code integer}/{@code smallint} ({@link Long}, {@link Integer},
 * {@link Short}), {@code numeric} ({@link BigDecimal}), {@code boolean} ({@code t}/{@code f}),
 * {@code json}/{@code jsonb} ({@link JSON}/{@link JSONB}, their text), and {@code timestamptz}
 * ({@link OffsetDateTime} or {@link Instant}: UTC, microseconds, e.g. {@code
 * 2026-11-29T23:35:59.123456Z}; sub-microsecond digits are dropped). A U+0000 in text is refused
 * (PostgreSQL text cannot hold it); a lone surrogate is written {@code ?}, as pgjdbc encodes it for
 * a bind value.
 *
 * <pre>{@code
 * long rows = CopyWriter.copy(tx, TASKS, List.of(TASKS.fields()), taskRecords);
 * }</pre>
 */
final class CopyWriter {

  /** Bytes buffered before they are sent to the server as one {@code CopyData} message. */
  private static final int BUFFER = 1 << 16;

  /** Distinct list values per column whose converted form is kept for the rest of a COPY. */
  private static final int LIST_CACHE = 1024;

  private final CopyIn copy;
  private final String table;
  private final List<? extends Field<?>> columns;
  private final Converter<Object, Object>[] converters;
  private final Map<List<?>, Object>[] lists;
  private final byte[] buf = new byte[BUFFER];
  private int pos;

  private CopyWriter(CopyIn copy, String table, List<? extends Field<?>> columns) {
    this.copy = copy;
    this.table = table;
    this.columns = columns;
    this.converters = converters(columns);
    this.lists = lists(columns.size());
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static Map<List<?>, Object>[] lists(int n) {
    Map<List<?>, Object>[] out = new Map[n];
    for (int i = 0; i < n; i++) {
      out[i] = new HashMap<>();
    }
    return out;
  }

  /**
   * Writes rows into a table with one {@code COPY ... FROM STDIN}, in the caller's transaction.
   *
   * @param db a context whose connection is in the caller's transaction (from {@code
   *     ctx.transaction(c -> ...)}, possibly derived for another schema); its render mapping names
   *     the table's schema
   * @param table the generated table, e.g. {@code TASKS}
   * @param columns the columns to write, fields of {@code table}, in order; columns left out take
   *     their defaults (e.g. a serial {@code seq})
   * @param rows the rows, each a record holding every column in {@code columns}; written in order
   * @return how many rows PostgreSQL copied: as many as {@code rows} holds
   * @throws org.jooq.exception.DataAccessException when PostgreSQL refuses a row (a key or
   *     constraint violated, a value it cannot read) or the connection fails; the {@code COPY} is
   *     ended and the transaction is left aborted, to be rolled back
   * @throws IllegalArgumentException when a value cannot be written (a U+0000 in text, a type with
   *     no text form here): names the table and the column, never the value; the {@code COPY} is
   *     cancelled
   */
  static long copy(
      DSLContext db,
      Table<?> table,
      List<? extends Field<?>> columns,
      Iterable<? extends Record> rows) {
    String sql = statement(db, table, columns);
    return db.connectionResult(
        c -> {
          CopyIn in = copyIn(c, sql);
          try {
            CopyWriter w = new CopyWriter(in, table.getName(), columns);
            long sent = 0;
            for (Record r : rows) {
              w.row(r);
              sent++;
            }
            w.flush();
            long copied = in.endCopy();
            if (copied != sent) {
              throw new IllegalStateException(
                  "COPY into " + table.getName() + " took " + copied + " of " + sent + " rows");
            }
            return copied;
          } catch (RuntimeException | Error | SQLException e) {
            if (in.isActive()) {
              try {
                in.cancelCopy(); // ends the COPY with an error, so the transaction can roll back
              } catch (SQLException cancel) {
                e.addSuppressed(cancel);
              }
            }
            CopyConnections.abortIfStuck(c, in.isActive(), e);
            throw e;
          }
        });
  }

  /**
   * The {@code COPY} statement: the table and columns rendered by jOOQ from the generated objects
   * through the caller's settings (its render mapping), every identifier quoted.
   *
   * @param ctx the caller's context
   * @param table the table
   * @param columns its columns to write
   * @return e.g. {@code COPY "ledger_acme_822b33ad"."tasks" ("id", "domain", ...) FROM STDIN
   *     (FORMAT text)}
   */
  static String statement(DSLContext ctx, Table<?> table, List<? extends Field<?>> columns) {
    Settings quoted =
        ((Settings) ctx.settings().clone()).withRenderQuotedNames(RenderQuotedNames.ALWAYS);
    DSLContext render = DSL.using(ctx.dialect(), quoted);
    StringBuilder sql = new StringBuilder("COPY ").append(render.render(table)).append(" (");
    for (int i = 0; i < columns.size(); i++) {
      Field<?> f = columns.get(i);
      if (table.field(f) == null) {
        throw new IllegalArgumentException(
            "column " + f.getName() + " is not a field of table " + table.getName());
      }
      sql.append(i == 0 ? "" : ", ").append(render.render(DSL.name(f.getName())));
    }
    return sql.append(") FROM STDIN (FORMAT text)").toString();
  }

  private static CopyIn copyIn(Connection c, String sql) throws SQLException {
    return c.unwrap(PGConnection.class).getCopyAPI().copyIn(sql);
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static Converter<Object, Object>[] converters(List<? extends Field<?>> columns) {
    Converter<Object, Object>[] out = new Converter[columns.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = (Converter<Object, Object>) columns.get(i).getConverter();
    }
    return out;
  }

  /** One row: each column's value through its converter, then in its text form. */
  private void row(Record r) throws SQLException {
    for (int i = 0; i < converters.length; i++) {
      if (i > 0) {
        put((byte) '\t');
      }
      Object user = r.get(columns.get(i));
      Object db;
      if (user instanceof List<?> list) {
        // JSON-array columns hold few distinct lists, and their converter runs Jackson: convert
        // each distinct list once per COPY (nothing mutates the rows while they are written)
        db = lists[i].get(list);
        if (db == null) {
          db = converters[i].to(user);
          if (lists[i].size() < LIST_CACHE) {
            lists[i].put(new ArrayList<>(list), db);
          }
        }
      } else {
        db = converters[i].to(user);
      }
      value(i, db);
    }
    put((byte) '\n');
  }

  private void value(int column, Object v) throws SQLException {
    if (v == null) {
      ascii("\\N");
    } else if (v instanceof String s) {
      text(column, s);
    } else if (v instanceof Long || v instanceof Integer || v instanceof Short) {
      ascii(v.toString());
    } else if (v instanceof Boolean b) {
      put(b ? (byte) 't' : (byte) 'f');
    } else if (v instanceof JSONB j) {
      text(column, j.data());
    } else if (v instanceof JSON j) {
      text(column, j.data());
    } else if (v instanceof OffsetDateTime t) {
      ascii(timestamp(column, t.toInstant()));
    } else if (v instanceof Instant t) {
      ascii(timestamp(column, t));
    } else if (v instanceof BigDecimal d) {
      ascii(d.toPlainString());
    } else {
      throw new IllegalArgumentException(
          "COPY into "
              + table
              + ": column "
              + columns.get(column).getName()
              + " holds a "
              + v.getClass().getName()
              + ", which has no COPY text form here");
    }
  }

  /** A {@code timestamptz} in UTC to the microsecond, e.g. {@code 2026-11-29T23:35:59.123456Z}. */
  private String timestamp(int column, Instant t) {
    LocalDateTime u =
        LocalDateTime.ofEpochSecond(
            t.getEpochSecond(), t.truncatedTo(ChronoUnit.MICROS).getNano(), ZoneOffset.UTC);
    if (u.getYear() < 1 || u.getYear() > 9999) {
      throw new IllegalArgumentException(
          "COPY into "
              + table
              + ": column "
              + columns.get(column).getName()
              + " holds a time outside years 1 to 9999");
    }
    return String.format(
        "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ",
        u.getYear(),
        u.getMonthValue(),
        u.getDayOfMonth(),
        u.getHour(),
        u.getMinute(),
        u.getSecond(),
        u.getNano() / 1000);
  }

  /** Text, escaped for the text format and encoded as UTF-8. */
  private void text(int column, String s) throws SQLException {
    int n = s.length();
    for (int i = 0; i < n; i++) {
      if (pos > BUFFER - 4) {
        flush();
      }
      char c = s.charAt(i);
      if (c < 0x80) {
        switch (c) {
          case '\\' -> escape('\\');
          case '\n' -> escape('n');
          case '\r' -> escape('r');
          case '\t' -> escape('t');
          case 0 ->
              throw new IllegalArgumentException(
                  "COPY into "
                      + table
                      + ": column "
                      + columns.get(column).getName()
                      + " holds U+0000, which PostgreSQL text cannot store");
          default -> buf[pos++] = (byte) c;
        }
      } else if (c < 0x800) {
        buf[pos++] = (byte) (0xc0 | c >> 6);
        buf[pos++] = (byte) (0x80 | c & 0x3f);
      } else if (Character.isHighSurrogate(c)
          && i + 1 < n
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        int cp = Character.toCodePoint(c, s.charAt(++i));
        buf[pos++] = (byte) (0xf0 | cp >> 18);
        buf[pos++] = (byte) (0x80 | cp >> 12 & 0x3f);
        buf[pos++] = (byte) (0x80 | cp >> 6 & 0x3f);
        buf[pos++] = (byte) (0x80 | cp & 0x3f);
      } else if (Character.isSurrogate(c)) {
        buf[pos++] = '?'; // a lone surrogate: what String.getBytes(UTF_8), and so pgjdbc, writes
      } else {
        buf[pos++] = (byte) (0xe0 | c >> 12);
        buf[pos++] = (byte) (0x80 | c >> 6 & 0x3f);
        buf[pos++] = (byte) (0x80 | c & 0x3f);
      }
    }
  }

  private void escape(char c) {
    buf[pos++] = '\\';
    buf[pos++] = (byte) c;
  }

  /** ASCII that needs no escaping: numbers, {@code \N}, times. */
  private void ascii(String s) throws SQLException {
    for (int i = 0; i < s.length(); i++) {
      put((byte) s.charAt(i));
    }
  }

  private void put(byte b) throws SQLException {
    if (pos == BUFFER) {
      flush();
    }
    buf[pos++] = b;
  }

  private void flush() throws SQLException {
    if (pos > 0) {
      copy.writeToCopy(buf, 0, pos);
      pos = 0;
    }
  }
}
