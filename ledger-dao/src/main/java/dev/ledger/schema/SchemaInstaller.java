package dev.ledger.schema;

import static org.jooq.impl.DSL.name;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32;
import org.flywaydb.core.api.MigrationVersion;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.Record3;
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
 * <p>Only scripts whose effect is certain are applied this way ({@link #prepare}): versioned SQL
 * migrations from locations that hold nothing but the set's scripts (no callback, script
 * configuration or Java migration), each text with the checksum Flyway resolved for it (so the text
 * is the one Flyway would run), no placeholder but {@code ${flyway:defaultSchema}}, {@code
 * ${flyway:table}} and {@code ${flyway:filename}}, nothing that cannot share one transaction with
 * the other scripts ({@code CONCURRENTLY}, {@code VACUUM}, {@code REINDEX SCHEMA}, a new enum
 * value, {@code COPY ... FROM STDIN}, Flyway's {@code executeInTransaction}), no statement that
 * ends the transaction or changes the session for the scripts after it ({@code COMMIT}, {@code SET}
 * without {@code LOCAL}), and no repeatable migration. Anything else is refused with its reason and
 * the caller runs Flyway instead. Like Flyway, the scripts run with the schema first on the {@code
 * search_path} (for this transaction only).
 *
 * <p>Source: Flyway 13's PostgreSQL history table ({@code PostgreSQLDatabase.getRawCreateScript}),
 * its schema-creation marker ({@code SchemaHistory.addSchemasMarker}) and its checksum ({@code
 * ChecksumCalculator}: CRC32 over the UTF-8 bytes of each line, line breaks and byte-order marks
 * left out).
 *
 * <p>Size: over 600 lines, a third of them documentation. One class on purpose: the checks of what
 * may be installed, the placeholder substitution, the checksum and the history rows must agree with
 * one another and with Flyway, and are read together when Flyway changes.
 */
public final class SchemaInstaller {

  /** The description of Flyway's schema-creation marker row. */
  public static final String SCHEMA_MARKER = "<< Flyway Schema Creation >>";

  private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([^}]*)}");

  /**
   * What cannot share one transaction with the other scripts, anywhere in a script: statements
   * PostgreSQL refuses inside a transaction block, {@code COPY ... FROM STDIN} (Flyway feeds it the
   * script's inline data), a new enum value (unusable until the transaction that adds it commits,
   * where Flyway commits each script), Flyway's own per-script switch, and a session setting
   * changed through {@code set_config}.
   */
  private static final Pattern UNSHARABLE =
      Pattern.compile(
          "\\b(CONCURRENTLY|VACUUM|executeInTransaction|ALTER\\s+SYSTEM"
              + "|(?:CREATE|DROP)\\s+(?:DATABASE|TABLESPACE)"
              + "|(?:CREATE|ALTER|DROP)\\s+SUBSCRIPTION|REINDEX\\s+(?:SCHEMA|DATABASE|SYSTEM)"
              + "|DISCARD\\s+ALL|FROM\\s+STDIN|ADD\\s+VALUE|set_config)\\b",
          Pattern.CASE_INSENSITIVE);

  /**
   * Statements that end or split the transaction ({@code COMMIT}, {@code BEGIN}, ...) or change the
   * session for the scripts after them ({@code SET} without {@code LOCAL}, {@code RESET}; Flyway
   * restores the session after each script), at the start of a statement. Looked for with comments
   * and dollar-quoted bodies (functions, {@code DO} blocks) left out.
   */
  private static final Pattern SESSION_OR_TRANSACTION =
      Pattern.compile(
          "(?:^|;)\\s*(COMMIT|ROLLBACK|END|ABORT|BEGIN|START\\s+TRANSACTION|SAVEPOINT|RELEASE"
              + "|PREPARE\\s+TRANSACTION|SET(?!\\s+LOCAL\\b)|RESET)\\b",
          Pattern.CASE_INSENSITIVE);

  private static final Pattern COMMENTS_AND_BODIES =
      Pattern.compile("--[^\\n]*|/\\*.*?\\*/|\\$(\\w*)\\$.*?\\$\\1\\$", Pattern.DOTALL);

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
   * @param locations the set's Flyway locations, e.g. {@value LedgerMigrations#DOMAIN_LOCATION} and
   *     a deployment's {@code filesystem:/opt/ledger/extra}
   * @param historyTable the Flyway history table, e.g. {@value LedgerMigrations#DOMAIN_HISTORY}
   * @param migrations the resolved migrations in Flyway's order (version order)
   * @return the installer, immutable and thread-safe
   * @throws NotInstallableException naming the migration or file and the reason, when some
   *     migration's effect in one transaction is not certain: a location holds a file that is no
   *     script of the set (a callback, a script configuration, a Java migration), a script is not
   *     found or its checksum differs from Flyway's, a repeatable migration, an unknown
   *     placeholder, or a statement Flyway runs outside a transaction
   */
  public static SchemaInstaller prepare(
      ClassLoader loader, List<String> locations, String historyTable, List<Migration> migrations)
      throws NotInstallableException {
    if (migrations.isEmpty()) {
      throw new NotInstallableException("locations " + locations + " hold no migration");
    }
    Set<String> scriptNames = new HashSet<>();
    for (Migration m : migrations) {
      scriptNames.add(m.script());
    }
    Map<String, String> texts = texts(loader, locations, scriptNames);
    List<Script> scripts = new ArrayList<>();
    for (Migration m : migrations) {
      String label = (m.version() == null ? "R" : "V" + m.version()) + " (" + m.script() + ")";
      if (m.version() == null) {
        throw new NotInstallableException(label + " is a repeatable migration; Flyway runs it");
      }
      if (!m.script().toLowerCase(Locale.ROOT).endsWith(".sql")) {
        throw new NotInstallableException(label + " is not a SQL script; Flyway runs it");
      }
      String text = texts.get(m.script());
      if (text == null) {
        throw new NotInstallableException(
            label + " is not found in " + locations + "; Flyway runs it");
      }
      int checksum = checksum(text);
      if (m.checksum() == null || checksum != m.checksum()) {
        throw new NotInstallableException(
            label
                + ": the text found has checksum "
                + checksum
                + ", Flyway resolved "
                + m.checksum()
                + "; Flyway runs it");
      }
      String refusal = refusal(text);
      if (refusal != null) {
        throw new NotInstallableException(label + " " + refusal + "; Flyway runs it");
      }
      scripts.add(new Script(m, text));
    }
    return new SchemaInstaller(historyTable, List.copyOf(scripts));
  }

  /**
   * Why a script cannot run in one transaction with the others, or null when it can: a placeholder
   * this class does not replace, a statement that cannot share the transaction, or one that ends it
   * or changes the session for the scripts after it.
   *
   * @param text the script
   * @return e.g. {@code holds 'CONCURRENTLY', which cannot share one transaction with the other
   *     scripts}; null when the script can be applied in one transaction
   */
  static String refusal(String text) {
    Matcher placeholder = PLACEHOLDER.matcher(text);
    while (placeholder.find()) {
      String key = placeholder.group(1);
      if (!key.equals("flyway:defaultSchema")
          && !key.equals("flyway:table")
          && !key.equals("flyway:filename")) {
        return "uses the placeholder ${" + key + "}";
      }
    }
    Matcher unsharable = UNSHARABLE.matcher(text);
    if (unsharable.find()) {
      return "holds '"
          + unsharable.group(1)
          + "', which cannot share one transaction with the other scripts";
    }
    Matcher statement =
        SESSION_OR_TRANSACTION.matcher(COMMENTS_AND_BODIES.matcher(text).replaceAll(" "));
    if (statement.find()) {
      return "holds a '"
          + statement.group(1).toUpperCase(Locale.ROOT).replaceAll("\\s+", " ")
          + "' statement, which would end the transaction or change the session for the scripts"
          + " after it";
    }
    return null;
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
    return inTransaction(connection, schema, true, this::create);
  }

  /**
   * Makes the schema as {@link #install} does, inside the caller's transaction: nothing is
   * committed or rolled back here, so the schema commits with what else the transaction writes (run
   * time provisioning inserts the domain's route and state row with it).
   *
   * @param connection the transaction's connection (auto-commit off)
   * @param schema the new schema, a domain schema name
   * @return the versions applied, in order
   * @throws IllegalArgumentException when {@code schema} is not a domain schema name
   * @throws InstallException naming the step that failed; the caller must roll back
   */
  public List<String> installWithin(Connection connection, String schema) throws InstallException {
    return inTransaction(connection, schema, false, this::create);
  }

  private List<String> create(Connection connection, String schema, DSLContext ctx, String[] step)
      throws SQLException {
    step[0] = "CREATE SCHEMA";
    ctx.createSchema(name(schema)).execute();
    List<Long> millis = runScripts(ctx, connection, schema, scripts, step);
    step[0] = "the history table " + historyTable;
    createHistory(ctx, schema);
    writeHistory(ctx, schema, 1, scripts, millis, true);
    return versions(scripts);
  }

  /**
   * Applies the pending migrations to a schema whose Flyway history ends at {@code fromVersion}:
   * each script after that version, then their history rows (ranks after the last), in one
   * transaction, committed on success and rolled back on any failure. The history table is locked
   * ({@code SHARE ROW EXCLUSIVE}) for the transaction and read again under the lock: when its
   * latest successful version is not {@code fromVersion}, or it records a failed migration (someone
   * migrated it since it was read), nothing is done and {@link StaleHistoryException} says so.
   *
   * @param connection a connection in auto-commit mode; left in auto-commit mode
   * @param schema the schema, a domain schema name
   * @param fromVersion the latest version its history records, e.g. {@code 6}
   * @return the versions applied, in order (empty when none is after {@code fromVersion})
   * @throws IllegalArgumentException when {@code schema} is not a domain schema name
   * @throws StaleHistoryException when the history no longer ends at {@code fromVersion}
   * @throws InstallException naming the script that failed, after rolling back
   */
  public List<String> migrate(Connection connection, String schema, String fromVersion)
      throws InstallException, StaleHistoryException {
    MigrationVersion from = MigrationVersion.fromVersion(fromVersion);
    List<Script> pending =
        scripts.stream()
            .filter(s -> MigrationVersion.fromVersion(s.migration().version()).compareTo(from) > 0)
            .toList();
    String[] stale = new String[1];
    List<String> applied =
        inTransaction(
            connection,
            schema,
            true,
            (c, sch, ctx, step) -> {
              step[0] = "locking the history table " + historyTable;
              Table<Record> history = DSL.table(name(schema, historyTable));
              ctx.execute("LOCK TABLE {0} IN SHARE ROW EXCLUSIVE MODE", history);
              Field<Integer> rank = DSL.field(name("installed_rank"), Integer.class);
              Field<String> version = DSL.field(name("version"), String.class);
              Field<Boolean> success = DSL.field(name("success"), Boolean.class);
              int lastRank = -1;
              MigrationVersion latest = null;
              for (Record3<Integer, String, Boolean> row :
                  ctx.select(rank, version, success).from(history).fetch()) {
                lastRank = Math.max(lastRank, row.value1());
                if (!Boolean.TRUE.equals(row.value3())) {
                  stale[0] = "its history records a failed migration (rank " + row.value1() + ")";
                } else if (row.value2() != null) {
                  MigrationVersion v = MigrationVersion.fromVersion(row.value2());
                  latest = latest == null || v.compareTo(latest) > 0 ? v : latest;
                }
              }
              if (stale[0] == null && (latest == null || latest.compareTo(from) != 0)) {
                stale[0] =
                    "its history now ends at "
                        + (latest == null ? "no version" : latest.getVersion())
                        + ", not "
                        + fromVersion;
              }
              if (stale[0] != null) {
                return List.of();
              }
              List<Long> millis = runScripts(ctx, c, sch, pending, step);
              step[0] = "the history table " + historyTable;
              writeHistory(ctx, sch, lastRank + 1, pending, millis, false);
              return versions(pending);
            });
    if (stale[0] != null) {
      throw new StaleHistoryException(schema + ": " + stale[0] + "; nothing was applied");
    }
    return applied;
  }

  /** A step of a transaction: the work, with the name of what it is doing kept in step[0]. */
  @FunctionalInterface
  private interface TransactionWork {
    List<String> run(Connection connection, String schema, DSLContext ctx, String[] step)
        throws SQLException;
  }

  /**
   * Runs work on the connection. With {@code own}, in a transaction of its own: committed when it
   * returns (having changed nothing, when {@link #migrate} found the history stale), rolled back
   * when it throws, the connection left in auto-commit mode. Without, in the caller's transaction,
   * which the caller ends.
   */
  private List<String> inTransaction(
      Connection connection, String schema, boolean own, TransactionWork work)
      throws InstallException {
    if (!DomainSchemas.isDomainSchemaName(schema)) {
      throw new IllegalArgumentException("schema: not a domain schema name: " + schema);
    }
    String[] step = {"BEGIN"};
    try {
      DSLContext ctx =
          DSL.using(connection, SQLDialect.POSTGRES, new Settings().withExecuteLogging(false));
      if (!own) {
        return work.run(connection, schema, ctx, step);
      }
      connection.setAutoCommit(false);
      try {
        List<String> done = work.run(connection, schema, ctx, step);
        connection.commit();
        return done;
      } catch (SQLException | RuntimeException e) {
        rollback(connection, e);
        throw e;
      } finally {
        connection.setAutoCommit(true);
      }
    } catch (SQLException e) {
      throw new InstallException(schema, step[0], e.getMessage(), e.getSQLState(), e);
    } catch (org.jooq.exception.DataAccessException e) {
      throw new InstallException(schema, step[0], e.getMessage(), e.sqlState(), e);
    }
  }

  /**
   * Puts the schema first on the search path for this transaction, as Flyway does, then runs each
   * script; returns each one's time, ms.
   */
  private List<Long> runScripts(
      DSLContext ctx, Connection connection, String schema, List<Script> run, String[] step)
      throws SQLException {
    step[0] = "setting the search_path";
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
      for (Script s : run) {
        step[0] = "V" + s.migration().version() + " (" + s.migration().script() + ")";
        long t0 = System.nanoTime();
        statement.execute(substitute(s, schema));
        millis.add((System.nanoTime() - t0) / 1_000_000);
      }
    }
    return millis;
  }

  private static List<String> versions(List<Script> scripts) {
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
    return substitute(s.text(), schema, historyTable, s.migration().script());
  }

  /**
   * A script's text with the placeholders this class knows replaced as Flyway replaces them, or
   * null when it holds another.
   */
  private static String substitute(String text, String schema, String table, String script) {
    Matcher m = PLACEHOLDER.matcher(text);
    StringBuilder out = new StringBuilder(text.length());
    while (m.find()) {
      String value =
          switch (m.group(1)) {
            case "flyway:defaultSchema" -> schema;
            case "flyway:table" -> table;
            case "flyway:filename" -> script.substring(script.lastIndexOf('/') + 1);
            default -> null;
          };
      if (value == null) {
        return null;
      }
      m.appendReplacement(out, Matcher.quoteReplacement(value));
    }
    m.appendTail(out);
    return out.toString();
  }

  /**
   * The checksum Flyway records for a repeatable migration applied to a schema: unlike a versioned
   * one's, it is taken over the text with its placeholders replaced, so a script that names {@code
   * ${flyway:defaultSchema}} has another checksum in every schema (Flyway 13 re-runs a repeatable
   * migration when a placeholder's value changes).
   *
   * @param text the script, as on the class path or disk
   * @param schema the schema it is applied to, bare
   * @param historyTable the history table ({@code ${flyway:table}})
   * @param script the script's name ({@code ${flyway:filename}})
   * @return the checksum; null when the text holds a placeholder whose value is not known here
   *     (e.g. {@code ${flyway:timestamp}}, a user's own)
   */
  public static Integer repeatableChecksum(
      String text, String schema, String historyTable, String script) {
    String replaced = substitute(text, schema, historyTable, script);
    return replaced == null ? null : checksum(replaced);
  }

  /**
   * The text of every file of some Flyway locations, by its name below its location (the first
   * location that has a name wins, as the order of Flyway's locations).
   *
   * @param loader the class loader of {@code classpath:} locations
   * @param locations e.g. {@code classpath:db/ledger/domain}, {@code filesystem:/opt/ledger/extra}
   * @return name to UTF-8 text
   * @throws NotInstallableException when a location cannot be listed
   */
  public static Map<String, String> scriptTexts(ClassLoader loader, List<String> locations)
      throws NotInstallableException {
    return texts(loader, locations, null);
  }

  /**
   * The texts of the locations' files; with {@code only}, refused when a location holds a file not
   * named there (a callback, a script configuration, a Java migration).
   */
  private static Map<String, String> texts(
      ClassLoader loader, List<String> locations, Set<String> only) throws NotInstallableException {
    Map<String, String> texts = new HashMap<>();
    for (String location : locations) {
      for (Map.Entry<String, byte[]> file : ScriptLocation.files(loader, location).entrySet()) {
        if (only != null && !only.contains(file.getKey())) {
          throw new NotInstallableException(
              "location "
                  + location
                  + " holds "
                  + file.getKey()
                  + ", which is no migration of the set (a callback, a script configuration or a"
                  + " Java migration?); Flyway runs it");
        }
        texts.putIfAbsent(file.getKey(), new String(file.getValue(), StandardCharsets.UTF_8));
      }
    }
    return texts;
  }

  /** Flyway's PostgreSQL history table (its {@code getRawCreateScript}: columns, key, index). */
  private void createHistory(DSLContext ctx, String schema) {
    Table<Record> history = DSL.table(name(schema, historyTable));
    Field<Integer> rank = DSL.field(name("installed_rank"), Integer.class);
    ctx.createTable(history)
        .column(rank, SQLDataType.INTEGER.notNull())
        .column(name("version"), SQLDataType.VARCHAR(50).null_())
        .column(name("description"), SQLDataType.VARCHAR(200).notNull())
        .column(name("type"), SQLDataType.VARCHAR(20).notNull())
        .column(name("script"), SQLDataType.VARCHAR(1000).notNull())
        .column(name("checksum"), SQLDataType.INTEGER.null_())
        .column(name("installed_by"), SQLDataType.VARCHAR(100).notNull())
        .column(
            name("installed_on"),
            SQLDataType.LOCALDATETIME
                .notNull()
                .defaultValue(DSL.function("now", SQLDataType.LOCALDATETIME)))
        .column(name("execution_time"), SQLDataType.INTEGER.notNull())
        .column(name("success"), SQLDataType.BOOLEAN.notNull())
        .constraints(DSL.constraint(name(historyTable + "_pk")).primaryKey(rank))
        .execute();
    ctx.createIndex(name(historyTable + "_s_idx"))
        .on(history, DSL.field(name("success"), Boolean.class))
        .execute();
  }

  /**
   * The rows Flyway writes: with {@code marker}, its schema-creation row at rank 0, then one {@code
   * SQL} row per script from {@code firstRank}, {@code installed_on} left to the column's default
   * ({@code now()}) as Flyway does.
   */
  private void writeHistory(
      DSLContext ctx,
      String schema,
      int firstRank,
      List<Script> written,
      List<Long> millis,
      boolean marker) {
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
    List<org.jooq.Row9<Integer, String, String, String, String, Integer, String, Integer, Boolean>>
        rows = new ArrayList<>();
    if (marker) {
      rows.add(
          DSL.row(
              DSL.val(0),
              DSL.castNull(String.class),
              DSL.val(SCHEMA_MARKER),
              DSL.val("SCHEMA"),
              DSL.val(quote(schema)),
              DSL.castNull(Integer.class),
              DSL.currentUser(),
              DSL.val(0),
              DSL.val(true)));
    }
    for (int i = 0; i < written.size(); i++) {
      Migration m = written.get(i).migration();
      rows.add(
          DSL.row(
              DSL.val(firstRank + i),
              DSL.val(m.version()),
              DSL.val(m.description()),
              DSL.val("SQL"),
              DSL.val(m.script()),
              DSL.val(m.checksum()),
              DSL.currentUser(),
              DSL.val((int) Math.min(Integer.MAX_VALUE, millis.get(i))),
              DSL.val(true)));
    }
    if (rows.isEmpty()) {
      return;
    }
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
        .valuesOfRows(rows)
        .execute();
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

  /**
   * A schema's history moved on between the job's reading and {@link #migrate}: nothing was
   * applied; the caller runs Flyway, which reads the history afresh.
   */
  public static final class StaleHistoryException extends Exception {
    private static final long serialVersionUID = 1L;

    StaleHistoryException(String message) {
      super(message);
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
