package dev.ledger.replay;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.Arrays;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Select;
import org.jooq.exception.DataAccessException;
import org.postgresql.PGConnection;
import org.postgresql.copy.PGCopyInputStream;

/**
 * Streams the rows of a jOOQ {@code SELECT} of text columns with PostgreSQL's {@code COPY (...) TO
 * STDOUT (FORMAT binary)} on the connection of the caller's jOOQ transaction: what a replay reads a
 * domain's whole event log with.
 *
 * <p>Why {@code COPY} and not a result set: a result set with a fetch size (a portal read in
 * batches) stops the server after every batch until the client asks for the next, so the server's
 * work and the client's parsing take turns; {@code COPY TO STDOUT} streams without waiting, and
 * both run at once (measured on 1M events: 1.3 to 1.5 s against 1.9 to 2.1 s for a result set
 * fetching 10,000 rows at a time, the same client CPU). jOOQ cannot express {@code COPY}, so the
 * {@code SELECT} is built with jOOQ from the generated classes and rendered through the caller's
 * context (its render mapping names the real schema), then wrapped in {@code COPY}.
 *
 * <p>Binary format: a signature and header, then per row a field count and per field a byte length
 * ({@code -1} for null) and the bytes; for {@code text} these are the value's UTF-8 bytes (pgjdbc's
 * client encoding), with no escaping at all. Only text columns are read.
 *
 * <pre>{@code
 * long n = CopyReader.forEach(tx, tx.select(EVENTS.TASK_ID, EVENTS.PAYLOAD).from(EVENTS),
 *     row -> System.out.println(row[0]));
 * }</pre>
 */
final class CopyReader {

  /** What every binary {@code COPY} stream starts with. */
  private static final byte[] SIGNATURE = {
    'P', 'G', 'C', 'O', 'P', 'Y', '\n', (byte) 0xff, '\r', '\n', 0
  };

  /** One row's values. */
  @FunctionalInterface
  interface Row {
    /**
     * Takes one row.
     *
     * @param values the row's values in the select's column order, null for SQL null; the array is
     *     reused for the next row, so keep the values, not the array
     */
    void accept(String[] values);
  }

  private CopyReader() {}

  /**
   * Runs a select with {@code COPY (...) TO STDOUT (FORMAT binary)} in the caller's transaction and
   * hands each row to {@code row}, in the select's order.
   *
   * @param ctx a context whose connection is in the caller's transaction; its render mapping names
   *     the tables' schema
   * @param select a select of text columns only, with no bind values (rendered inlined)
   * @param row takes each row; whatever it throws is thrown on, once the rest of the {@code COPY}
   *     is read and dropped
   * @return how many rows were read
   * @throws DataAccessException when the database fails (the SQLState is kept) or the stream is not
   *     the binary {@code COPY} format
   * @throws IllegalArgumentException when the select has a column that is not text
   */
  static long forEach(DSLContext ctx, Select<?> select, Row row) {
    Field<?>[] fields = select.getSelect().toArray(new Field<?>[0]);
    for (Field<?> f : fields) {
      if (!f.getDataType().isString()) {
        throw new IllegalArgumentException(
            "column " + f.getName() + " is not text; CopyReader reads text columns only");
      }
    }
    String sql = "COPY (" + ctx.renderInlined(select) + ") TO STDOUT (FORMAT binary)";
    return ctx.connectionResult(
        c -> {
          PGCopyInputStream copy = new PGCopyInputStream(c.unwrap(PGConnection.class), sql);
          try {
            return rows(copy, fields.length, row);
          } catch (EOFException e) {
            throw drained(c, copy, malformed("the stream ended inside a row"));
          } catch (IOException e) {
            // pgjdbc reports a failed COPY as an IOException around the SQLException: keep that
            // one as the cause, so its SQLState is the error's
            SQLException database = sqlCause(e);
            throw drained(
                c,
                copy,
                new DataAccessException(
                    "COPY TO STDOUT failed: "
                        + (database != null ? database.getMessage() : e.getMessage()),
                    database != null ? database : e));
          } catch (RuntimeException | Error e) {
            throw drained(c, copy, e);
          }
        });
  }

  private static long rows(PGCopyInputStream copy, int columns, Row row) throws IOException {
    DataInputStream in = new DataInputStream(new BufferedInputStream(copy, 1 << 16));
    header(in);
    String[] values = new String[columns];
    byte[] buf = new byte[1 << 12];
    long n = 0;
    while (true) {
      short count = in.readShort();
      if (count == -1) {
        break; // the trailer
      }
      if (count != columns) {
        throw malformed("a row of " + count + " fields, not " + columns);
      }
      for (int i = 0; i < values.length; i++) {
        int length = in.readInt();
        if (length == -1) {
          values[i] = null;
        } else if (length < 0) {
          throw malformed("a field of length " + length);
        } else {
          if (length > buf.length) {
            buf = new byte[Math.max(length, buf.length * 2)];
          }
          in.readFully(buf, 0, length);
          values[i] = new String(buf, 0, length, StandardCharsets.UTF_8);
        }
      }
      row.accept(values);
      n++;
    }
    if (in.read() != -1) {
      throw malformed("data after the trailer");
    }
    return n;
  }

  /**
   * Reads what is left of a {@code COPY} that stopped early (a row refused by the caller), so the
   * connection ends the {@code COPY} and can roll back. Not {@code cancelCopy()}: in pgjdbc 42.7 a
   * cancelled {@code COPY TO} leaves the rest of its messages on the wire, and the next statement
   * on the connection reads them (pgjdbc issue 3163). The server finishes the statement. When the
   * connection died under the {@code COPY} (nothing more can be read), it is aborted instead
   * ({@link CopyConnections}): otherwise the rollback would wait for the copy's lock forever.
   */
  private static <T extends Throwable> T drained(
      java.sql.Connection c, PGCopyInputStream copy, T failure) {
    try {
      while (copy.isActive() && copy.readFromCopy() != null) {
        // dropped
      }
    } catch (SQLException e) {
      failure.addSuppressed(e);
    }
    CopyConnections.abortIfStuck(c, copy.isActive(), failure);
    return failure;
  }

  private static SQLException sqlCause(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof SQLException s) {
        return s;
      }
    }
    return null;
  }

  private static void header(DataInputStream in) throws IOException {
    byte[] signature = new byte[SIGNATURE.length];
    in.readFully(signature);
    if (!Arrays.equals(signature, SIGNATURE)) {
      throw malformed("no binary COPY signature");
    }
    int flags = in.readInt();
    if (flags != 0) {
      throw malformed("header flags " + Integer.toHexString(flags) + " (OIDs or unknown)");
    }
    int extension = in.readInt();
    in.skipNBytes(extension);
  }

  private static DataAccessException malformed(String what) {
    return new DataAccessException("COPY TO STDOUT (FORMAT binary): " + what);
  }
}
