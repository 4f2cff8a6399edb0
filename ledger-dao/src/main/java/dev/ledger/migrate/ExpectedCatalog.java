package dev.ledger.migrate;

import dev.ledger.codegen.db.ledger_directory.LedgerDirectory;
import dev.ledger.codegen.db.ledger_template.LedgerTemplate;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.jooq.Configuration;
import org.jooq.Field;
import org.jooq.Index;
import org.jooq.SQLDialect;
import org.jooq.Schema;
import org.jooq.SortField;
import org.jooq.SortOrder;
import org.jooq.Table;
import org.jooq.UniqueKey;
import org.jooq.impl.DefaultConfiguration;

/**
 * The catalog a schema must have at the current version: tables, columns (type, nullability) and
 * indexes (name, uniqueness, key columns and their order), taken from the jOOQ classes the build
 * generates from the migrations applied to a real PostgreSQL, so it follows the migrations with no
 * list kept by hand.
 *
 * <p>Each entry is one line, in the form {@link Catalog} reads from {@code pg_catalog}:
 *
 * <pre>
 * table tasks
 * column tasks.priority bigint not null
 * index tasks.tasks_queue plain (status, priority desc, created)
 * </pre>
 *
 * <p>Not compared: defaults, check and foreign-key constraints, partial-index predicates (jOOQ's
 * generated {@code Index} does not carry them), and indexes on expressions (jOOQ's code generator
 * leaves them out, e.g. domain V6's {@code tasks_claim_class}; {@link Catalog} leaves them out on
 * the database's side too).
 */
final class ExpectedCatalog {

  private static final Configuration POSTGRES = new DefaultConfiguration().set(SQLDialect.POSTGRES);

  /**
   * jOOQ's short names of PostgreSQL types against {@code format_type}'s, which {@link Catalog}
   * reads: without it an {@code integer} column was expected as {@code int} and every schema
   * holding one looked drifted.
   */
  private static final java.util.Map<String, String> FORMAT_TYPE_NAMES =
      java.util.Map.ofEntries(
          java.util.Map.entry("int", "integer"),
          java.util.Map.entry("int4", "integer"),
          java.util.Map.entry("int2", "smallint"),
          java.util.Map.entry("int8", "bigint"),
          java.util.Map.entry("bool", "boolean"),
          java.util.Map.entry("varchar", "character varying"),
          java.util.Map.entry("char", "character"),
          java.util.Map.entry("float4", "real"),
          java.util.Map.entry("float8", "double precision"),
          java.util.Map.entry("decimal", "numeric"),
          java.util.Map.entry("timestamp", "timestamp without time zone"),
          java.util.Map.entry("timestamptz", "timestamp with time zone"),
          java.util.Map.entry("time", "time without time zone"),
          java.util.Map.entry("timetz", "time with time zone"));

  /** The domain schema's tables (the generated {@code ledger_template}). */
  static final ExpectedCatalog DOMAIN = new ExpectedCatalog(LedgerTemplate.LEDGER_TEMPLATE);

  /** The directory's routing tables (the generated {@code ledger_directory}). */
  static final ExpectedCatalog DIRECTORY = new ExpectedCatalog(LedgerDirectory.LEDGER_DIRECTORY);

  private final Set<String> lines;
  private final Set<String> tables;
  private final String fingerprint;

  private ExpectedCatalog(Schema schema) {
    Set<String> out = new TreeSet<>();
    Set<String> names = new TreeSet<>();
    for (Table<?> table : schema.getTables()) {
      names.add(table.getName());
      out.addAll(linesOf(table));
    }
    this.lines = Set.copyOf(out);
    this.tables = Set.copyOf(names);
    this.fingerprint = fingerprint(out);
  }

  /**
   * A column's type as {@code format_type} names it. A type jOOQ does not know (domain V11's and
   * directory V9's {@code xid8}) has no SQL data type: its generated name, unquoted and without its
   * schema, is PostgreSQL's.
   */
  static String typeName(Field<?> f) {
    if (f.getDataType().getSQLDataType() != null) {
      String jooq = f.getDataType().getSQLDataType().getTypeName(POSTGRES);
      return FORMAT_TYPE_NAMES.getOrDefault(jooq, jooq);
    }
    String name = f.getDataType().getTypeName().replace("\"", "");
    return name.substring(name.lastIndexOf('.') + 1);
  }

  /**
   * The catalog lines of one table.
   *
   * @param table a generated table
   * @return its table, column and index lines
   */
  static List<String> linesOf(Table<?> table) {
    List<String> out = new ArrayList<>();
    String t = table.getName();
    out.add("table " + t);
    for (Field<?> f : table.fields()) {
      out.add(
          "column "
              + t
              + "."
              + f.getName()
              + " "
              + typeName(f)
              + (f.getDataType().nullable() ? " null" : " not null"));
    }
    for (UniqueKey<?> key : table.getKeys()) {
      out.add(
          "index "
              + t
              + "."
              + key.getName()
              + " unique ("
              + key.getFields().stream().map(Field::getName).collect(Collectors.joining(", "))
              + ")");
    }
    for (Index index : table.getIndexes()) {
      out.add(
          "index "
              + t
              + "."
              + index.getName()
              + (index.getUnique() ? " unique (" : " plain (")
              + index.getFields().stream()
                  .map(ExpectedCatalog::keyColumn)
                  .collect(Collectors.joining(", "))
              + ")");
    }
    return out;
  }

  private static String keyColumn(SortField<?> f) {
    return f.getName() + (f.getOrder() == SortOrder.DESC ? " desc" : "");
  }

  /**
   * The MD5 of the sorted lines joined by newlines, lowercase hex: what PostgreSQL's {@code
   * md5(string_agg(line, E'\n' ORDER BY line COLLATE "C"))} gives for the same lines.
   *
   * @param lines the lines, ASCII
   * @return 32 hex digits
   */
  static String fingerprint(Set<String> lines) {
    String joined = lines.stream().sorted().collect(Collectors.joining("\n"));
    try {
      MessageDigest md5 = MessageDigest.getInstance("MD5");
      return HexFormat.of().formatHex(md5.digest(joined.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java platform has MD5", e);
    }
  }

  /**
   * Every expected line.
   *
   * @return the lines, unmodifiable
   */
  Set<String> lines() {
    return lines;
  }

  /**
   * The expected tables' names.
   *
   * @return e.g. {@code events}, {@code promotions}, {@code tasks}
   */
  Set<String> tables() {
    return tables;
  }

  /**
   * The fingerprint of {@link #lines()}.
   *
   * @return 32 hex digits
   */
  String fingerprint() {
    return fingerprint;
  }

  /**
   * What differs between this catalog and a schema's.
   *
   * @param actual the schema's lines (restricted to the tables this catalog concerns)
   * @return the missing lines (expected, absent) and the extra ones (present, not expected)
   */
  Diff diff(Set<String> actual) {
    Set<String> missing = new TreeSet<>(lines);
    missing.removeAll(actual);
    Set<String> extra = new TreeSet<>(actual);
    extra.removeAll(lines);
    return new Diff(List.copyOf(missing), List.copyOf(extra));
  }

  /**
   * The difference of a schema's catalog from the expected one.
   *
   * @param missing expected lines the schema lacks (a column of another type or nullability shows
   *     as one missing and one extra line)
   * @param extra lines the schema has beyond the expected ones
   */
  record Diff(List<String> missing, List<String> extra) {}
}
