package dev.ledger.schema;

import static org.jooq.impl.DSL.name;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Name;
import org.jooq.Record;
import org.jooq.SQLDialect;
import org.jooq.Table;
import org.jooq.conf.Settings;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

/**
 * Makes a new domain schema in one transaction: {@code CREATE SCHEMA}, every script of the domain
 * set in version order, then the Flyway history table with the rows Flyway would have written had
 * it run each script ({@code << Flyway Schema Creation >>} at rank 0, one {@code SQL} row per
 * migration with Flyway's checksum). A later Flyway run, or the migration job's check, sees the
 * schema exactly as if Flyway had made it; a test compares the two catalogs and histories.
 *
 * <p>Why: a Flyway run per new schema costs 40 to 75 ms, most of it Flyway's own metadata queries
 * (one {@code pg_class} lookup per history read; on a catalog whose statistics are stale it scans
 * every schema's history table, so the cost grows with the schema count) and one transaction per
 * script. This is one round trip per script in one transaction, and a failure anywhere leaves no
 * schema at all, where a failed Flyway run leaves a half-made schema with a failed history row.
 *
 * <p>Only scripts whose effect is certain are installed this way ({@link #prepare}): versioned SQL
 * migrations of one classpath location, read from the class path with the checksum Flyway resolved
 * for them (so the text is the one Flyway would run), no placeholder but {@code
 * ${flyway:defaultSchema}}, {@code ${flyway:table}} and {@code ${flyway:filename}}, nothing Flyway
 * would run outside a transaction ({@code CONCURRENTLY}, {@code VACUUM}, {@code
 * executeInTransaction}, {@code COPY ... FROM STDIN}) and no repeatable migration. Anything else is
 * refused with its reason and the caller runs Flyway instead. Like Flyway, the scripts run with the
 * new schema first on the {@code search_path} (for this transaction only).
 *
 * <p>Source: Flyway 13's PostgreSQL history table ({@code PostgreSQLDatabase.getRawCreateScript}),
 * its schema-creation marker ({@code SchemaHistory.addSchemasMarker}) and its checksum ({@code
 * ChecksumCalculator}: CRC32 over the UTF-8 bytes of each line, line breaks and byte-order marks
 * left out).
 */
public final class SchemaInstaller {

  /** The description of Flyway's schema-creation marker row. */
  public static final String SCHEMA_MARKER = "<< Flyway Schema Creation >>";

  private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([^}]*)}");
  private static final Pattern NON_TRANSACTIONAL =
      Pattern.compile(
          "\\b(CONCURRENTLY|VACUUM|executeInTransaction|ALTER\\s+SYSTEM|CREATE\\s+DATABASE"
              + "|DROP\\s+DATABASE|FROM\\s+STDIN)\\b",
          Pattern.CASE_INSENSITIVE);

  private final String historyTable;
  private final List<Script> scripts;

  /**
   * One migration as Flyway resolved it.
   *
   * @param version e.g. {@code 3}; never null (repeatable migrations are refused)
   * @param description e.g. {@code promotions}
   * @param script the script's path below its location, e.g. {@code V2__promotions.sql}
   * @param checksum Flyway's checksum of it
   */
  public record Migration(String version, String description, String script, Integer checksum) {}

  /** A migration with its text, checked against Flyway's checksum. */
  private record Script(Migration migration, String text) {}

  /**
   * Why a set cannot be installed in one transaction (the caller runs Flyway instead).
   *
   * <p>Thrown by {@link #prepare}; the message names the migration and the reason.
   */
  public static final class NotInstallableException extends Exception {
    private static final long serialVersionUID = 1L;

    NotInstallableException(String message) {
      super(message);
    }
  }

  private SchemaInstaller(String historyTable, List<Script> scripts) {
    this.historyTable = historyTable;
    this.scripts = scripts;
  }

  /**
   * Reads and checks a set's scripts once, for any number of installs.
   *
   * @param loader the class loader Flyway resolved the set with
   * @param location the set's one location, e.g. {@value LedgerMigrations#DOMAIN_LOCATION}; only
   *     {@code classpath:} locations are installed
   * @param historyTable the Flyway history table, e.g. {@value LedgerMigrations#DOMAIN_HISTORY}
   * @param migrations the resolved migrations in Flyway's order (version order)
   * @return the installer, immutable and thread-safe
   * @throws NotInstallableException naming the migration and the reason, when some migration's
   *     effect in one transaction is not certain: not on the class path, checksum differs from
   *     Flyway's, a repeatable migration, an unknown placeholder, or a statement Flyway runs
   *     outside a transaction
   */
  public static SchemaInstaller prepare(
      ClassLoader loader, String location, String historyTable, List<Migration> migrations)
      throws NotInstallableException {
    if (!location.startsWith("classpath:")) {
      throw new NotInstallableException(
          "location " + location + " is not a classpath location; Flyway runs it");
    }
    if (migrations.isEmpty()) {
      throw new NotInstallableException("location " + location + " holds no migration");
    }
    String folder = location.substring("classpath:".length()).replaceAll("^/+|/+$", "");
    List<Script> scripts = new ArrayList<>();
    for (Migration m : migrations) {
      String label = (m.version() == null ? "R" : "V" + m.version()) + " (" + m.script() + ")";
      if (m.version() == null) {
        throw new NotInstallableException(label + " is a repeatable migration; Flyway runs it");
      }
      if (!m.script().toLowerCase(Locale.ROOT).endsWith(".sql")) {
        throw new NotInstallableException(label + " is not a SQL script; Flyway runs it");
      }
      String text = read(loader, folder + "/" + m.script());
      if (text == null) {
        throw new NotInstallableException(
            label + " is not on the class path at " + folder + "; Flyway runs it");
      }
      int checksum = checksum(text);
      if (m.checksum() == null || checksum != m.checksum()) {
        throw new NotInstallableException(
            label
                + ": the class path's text has checksum "
                + checksum
                + ", Flyway resolved "
                + m.checksum()
                + "; Flyway runs it");
      }
      Matcher placeholder = PLACEHOLDER.matcher(text);
      while (placeholder.find()) {
        String key = placeholder.group(1);
        if (!key.equals("flyway:defaultSchema")
            && !key.equals("flyway:table")
            && !key.equals("flyway:filename")) {
          throw new NotInstallableException(
              label + " uses the placeholder ${" + key + "}; Flyway runs it");
        }
      }
      Matcher outside = NON_TRANSACTIONAL.matcher(text);
      if (outside.find()) {
        throw new NotInstallableException(
            label
                + " holds '"
                + outside.group(1)
                + "', which Flyway may run outside a transaction; Flyway runs it");
      }
      scripts.add(new Script(m, text));
    }
    return new SchemaInstaller(historyTable, List.copyOf(scripts));
  }

  /**
   * Makes the schema: {@code CREATE SCHEMA}, each script, the history table and its rows, in one
   * transaction on the given connection, committed on success and rolled back on any failure.
   *
   * @param connection a connection in auto-commit mode (as a pool hands it out); left in
   *     auto-commit mode
   * @param schema the new schema, a domain schema name ({@link DomainSchemas#isDomainSchemaName})
   * @return the versions applied, in order
   * @throws IllegalArgumentException when {@code schema} is not a domain schema name
   * @throws InstallException naming the script that failed (or the history write), with the
   *     database's message and SQLSTATE, after rolling back: nothing of the schema is left
   */
  public List<String> install(Connection connection, String schema) throws InstallException {
    if (!DomainSchemas.isDomainSchemaName(schema)) {
      throw new IllegalArgumentException("schema: not a domain schema name: " + schema);
    }
    String step = "CREATE SCHEMA";
    try {
      connection.setAutoCommit(false);
      try {
        DSLContext ctx =
            DSL.using(connection, SQLDialect.POSTGRES, new Settings().withExecuteLogging(false));
        ctx.createSchema(name(schema)).execute();
        String searchPath =
            ctx.fetchValue(DSL.function("current_setting", String.class, DSL.val("search_path")));
        ctx.select(
                DSL.function(
                    "set_config",
                    String.class,
                    DSL.val("search_path"),
                    DSL.val(quote(schema) + (searchPath.isBlank() ? "" : ", " + searchPath)),
                    DSL.val(true)))
            .fetch();
        List<Long> millis = new ArrayList<>();
        try (Statement statement = connection.createStatement()) {
          for (Script s : scripts) {
            step = "V" + s.migration().version() + " (" + s.migration().script() + ")";
            long t0 = System.nanoTime();
            statement.execute(substitute(s, schema));
            millis.add((System.nanoTime() - t0) / 1_000_000);
          }
        }
        step = "the history table " + historyTable;
        writeHistory(ctx, schema, millis);
        connection.commit();
      } catch (SQLException | RuntimeException e) {
        rollback(connection, e);
        throw e;
      } finally {
        connection.setAutoCommit(true);
      }
    } catch (SQLException e) {
      throw new InstallException(schema, step, e.getMessage(), e.getSQLState(), e);
    } catch (org.jooq.exception.DataAccessException e) {
      throw new InstallException(schema, step, e.getMessage(), e.sqlState(), e);
    }
    return scripts.stream().map(s -> s.migration().version()).toList();
  }

  /**
   * The versions this installer applies, in order.
   *
   * @return e.g. {@code [1, 2, 3, 4, 5, 6]}
   */
  public List<String> versions() {
    return scripts.stream().map(s -> s.migration().version()).toList();
  }

  /**
   * Flyway's checksum of a script's text: CRC32 over the UTF-8 bytes of each line, without its line
   * break, a byte-order mark at a line's start left out (Flyway 13's {@code ChecksumCalculator}).
   *
   * @param text the script
   * @return the checksum, as Flyway stores it (a signed 32-bit int)
   */
  public static int checksum(String text) {
    CRC32 crc32 = new CRC32();
    try (BufferedReader reader = new BufferedReader(new StringReader(text))) {
      String line;
      while ((line = reader.readLine()) != null) {
        if (!line.isEmpty() && line.charAt(0) == '\uFEFF') {
          line = line.substring(1);
        }
        crc32.update(line.getBytes(StandardCharsets.UTF_8));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a StringReader does not fail
    }
    return (int) crc32.getValue();
  }

  private String substitute(Script s, String schema) {
    Matcher m = PLACEHOLDER.matcher(s.text());
    StringBuilder out = new StringBuilder(s.text().length());
    while (m.find()) {
      String value =
          switch (m.group(1)) {
            case "flyway:defaultSchema" -> schema;
            case "flyway:table" -> historyTable;
            default -> s.migration().script(); // flyway:filename; others refused in prepare
          };
      m.appendReplacement(out, Matcher.quoteReplacement(value));
    }
    m.appendTail(out);
    return out.toString();
  }

  /** The history table and rows Flyway writes (its PostgreSQL create script and inserts). */
  private void writeHistory(DSLContext ctx, String schema, List<Long> millis) {
    Table<Record> history = DSL.table(name(schema, historyTable));
    Field<Integer> rank = DSL.field(name("installed_rank"), Integer.class);
    Field<String> version = DSL.field(name("version"), String.class);
    Field<String> description = DSL.field(name("description"), String.class);
    Field<String> type = DSL.field(name("type"), String.class);
    Field<String> script = DSL.field(name("script"), String.class);
    Field<Integer> checksum = DSL.field(name("checksum"), Integer.class);
    Field<String> installedBy = DSL.field(name("installed_by"), String.class);
    Field<Integer> executionTime = DSL.field(name("execution_time"), Integer.class);
    Field<Boolean> success = DSL.field(name("success"), Boolean.class);
    Name pk = name(historyTable + "_pk");
    ctx.createTable(history)
        .column(rank, SQLDataType.INTEGER.notNull())
        .column(version, SQLDataType.VARCHAR(50).null_())
        .column(description, SQLDataType.VARCHAR(200).notNull())
        .column(type, SQLDataType.VARCHAR(20).notNull())
        .column(script, SQLDataType.VARCHAR(1000).notNull())
        .column(checksum, SQLDataType.INTEGER.null_())
        .column(installedBy, SQLDataType.VARCHAR(100).notNull())
        .column(
            name("installed_on"),
            SQLDataType.LOCALDATETIME
                .notNull()
                .defaultValue(DSL.function("now", SQLDataType.LOCALDATETIME)))
        .column(executionTime, SQLDataType.INTEGER.notNull())
        .column(success, SQLDataType.BOOLEAN.notNull())
        .constraints(DSL.constraint(pk).primaryKey(rank))
        .execute();
    ctx.createIndex(name(historyTable + "_s_idx")).on(history, success).execute();
    var insert =
        ctx.insertInto(
                history,
                rank,
                version,
                description,
                type,
                script,
                checksum,
                installedBy,
                executionTime,
                success)
            .values(
                DSL.val(0),
                DSL.castNull(String.class),
                DSL.val(SCHEMA_MARKER),
                DSL.val("SCHEMA"),
                DSL.val(quote(schema)),
                DSL.castNull(Integer.class),
                DSL.currentUser(),
                DSL.val(0),
                DSL.val(true));
    for (int i = 0; i < scripts.size(); i++) {
      Migration m = scripts.get(i).migration();
      insert =
          insert.values(
              DSL.val(i + 1),
              DSL.val(m.version()),
              DSL.val(m.description()),
              DSL.val("SQL"),
              DSL.val(m.script()),
              DSL.val(m.checksum()),
              DSL.currentUser(),
              DSL.val((int) Math.min(Integer.MAX_VALUE, millis.get(i))),
              DSL.val(true));
    }
    insert.execute();
  }

  /** The schema as Flyway writes it in its marker row and search path: in double quotes. */
  private static String quote(String schema) {
    return "\"" + schema + "\"";
  }

  private static void rollback(Connection connection, Exception cause) {
    try {
      connection.rollback();
    } catch (SQLException e) {
      cause.addSuppressed(e);
    }
  }

  private static String read(ClassLoader loader, String path) throws NotInstallableException {
    try (InputStream in = loader.getResourceAsStream(path)) {
      return in == null ? null : new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new NotInstallableException("could not read " + path + ": " + e.getMessage());
    }
  }

  /**
   * An install that failed and was rolled back: nothing of the schema is left.
   *
   * <p>{@link #getMessage()} names the schema, the step ({@code V3 (V3__x.sql)}, {@code CREATE
   * SCHEMA} or the history table) and the database's message.
   */
  public static final class InstallException extends Exception {
    private static final long serialVersionUID = 1L;

    private final String sqlState;

    InstallException(String schema, String step, String message, String sqlState, Throwable cause) {
      super("installing " + schema + " failed at " + step + ": " + message, cause);
      this.sqlState = sqlState;
    }

    /**
     * The database's SQLSTATE, e.g. {@code 42P06} when the schema already exists.
     *
     * @return the code; null when the failure was not the database's
     */
    public String sqlState() {
      return sqlState;
    }
  }
}
