package dev.ledger.diff;

import dev.ledger.diff.PartitionRebuild.Placement;
import dev.ledger.diff.PartitionRebuild.RowCheck;
import dev.ledger.diff.SchemaCatalog.Column;
import dev.ledger.diff.SchemaCatalog.Table;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The sample rows that check a {@link PartitionRebuild}'s copy: for each partition of the head
 * whose bound names a value of a plain key column (range and list partitions), a row holding that
 * value, which must be found in that partition after the script; for hash partitions covering every
 * value, a few rows with different keys; for a head that is not partitioned, a few rows. Every row
 * must also fit the base's partitions when the base's table is partitioned. Columns that must hold
 * a value get one made from their type. Stateless.
 */
final class RowChecks {

  private static final Pattern MODULUS =
      Pattern.compile("FOR VALUES WITH \\(modulus (\\d+), remainder (\\d+)\\)");

  private RowChecks() {}

  /**
   * The row check of one rebuild.
   *
   * @param b the base's table
   * @param h the head's table
   * @param base the base's catalog
   * @param head the head's catalog
   * @param generic how many rows to write where no bound picks the key
   * @return the check; with no inserts (and a note) when no row can be made
   */
  static RowCheck of(Table b, Table h, SchemaCatalog base, SchemaCatalog head, int generic) {
    List<String> compared = new ArrayList<>();
    for (Column c : h.columns()) {
      Column was = b.column(c.name()).orElse(null);
      if (was != null
          && c.type().equals(was.type())
          && c.generatedExpression() == null
          && was.generatedExpression() == null) {
        compared.add(c.sqlName());
      }
    }
    List<Map<String, String>> baseSlots = slots(b, base, null);
    if (baseSlots == null || baseSlots.isEmpty()) {
      return none(h, compared, "the base's partitions give no key for a sample row");
    }
    List<Placement> placements = new ArrayList<>();
    List<Map<String, String>> headSlots = slots(h, head, placements);
    if (headSlots == null || headSlots.isEmpty()) {
      return none(
          h,
          compared,
          h.partitionKey() == null
              ? "no sample row could be made"
              : "no partition of the head gives a key for a sample row");
    }
    List<String> inserts = new ArrayList<>();
    int row = 0;
    for (int s = 0; s < headSlots.size(); s++) {
      Map<String, String> want = headSlots.get(s);
      int copies = want.isEmpty() || want.containsKey(HASH) ? generic : 1;
      for (int k = 0; k < copies; k++) {
        Map<String, String> merged = merge(baseSlots, want, row);
        if (merged == null) {
          return none(h, compared, "no sample row fits both the base's and the head's partitions");
        }
        merged.remove(HASH);
        List<String> columns = new ArrayList<>();
        List<String> values = new ArrayList<>();
        for (Column c : b.columns()) {
          String value = merged.get(c.name());
          if (value == null && needsValue(c, h.column(c.name()).orElse(null))) {
            value = typed(c.type(), row);
            if (value == null) {
              return none(
                  h,
                  compared,
                  "no sample value of type " + c.type() + " for column `" + c.name() + "`");
            }
          }
          if (value != null) {
            columns.add(c.sqlName());
            values.add(value);
          }
        }
        inserts.add(
            "INSERT INTO "
                + b.sqlName()
                + (columns.isEmpty()
                    ? " DEFAULT VALUES;"
                    : " ("
                        + String.join(", ", columns)
                        + ") VALUES ("
                        + String.join(", ", values)
                        + ");"));
        row++;
      }
    }
    return new RowCheck(h.name(), h.sqlName(), inserts, compared, placements, null);
  }

  private static RowCheck none(Table h, List<String> compared, String note) {
    return new RowCheck(h.name(), h.sqlName(), List.of(), compared, List.of(), note);
  }

  /** Marks a slot whose key a hash picks: its key columns get values made from their type. */
  private static final String HASH = "\0hash";

  /**
   * The key values rows of a table must hold, one map per slot (column name to literal): one empty
   * map for a table that is not partitioned; one per range or list partition; one marked {@link
   * #HASH} for hash partitions that cover every value. Null when the key is not plain columns.
   * Placements for the head's slots are added to {@code placements} when it is not null.
   */
  private static List<Map<String, String>> slots(
      Table t, SchemaCatalog catalog, List<Placement> placements) {
    if (t.partitionKey() == null) {
      return List.of(new LinkedHashMap<>());
    }
    List<Column> keyColumns = keyColumns(t);
    if (keyColumns == null) {
      return null;
    }
    List<Table> partitions =
        catalog.tables().values().stream()
            .filter(p -> p.isPartition() && p.parents().equals(List.of(t.name())))
            .toList();
    List<Map<String, String>> slots = new ArrayList<>();
    if (t.partitionKey().startsWith("HASH")) {
      long lcm = 1;
      for (Table p : partitions) {
        Long m = modulus(p.partitionBound());
        if (m == null || p.partitionKey() != null) {
          return slots;
        }
        lcm = lcm * m / gcd(lcm, m);
      }
      long covered = 0;
      for (Table p : partitions) {
        covered += lcm / modulus(p.partitionBound());
      }
      if (!partitions.isEmpty() && covered == lcm) {
        Map<String, String> slot = new LinkedHashMap<>();
        slot.put(HASH, "");
        for (Column c : keyColumns) {
          slot.put("\0key:" + c.name(), c.type());
        }
        slots.add(slot);
      }
      return slots;
    }
    for (Table p : partitions) {
      if (p.partitionKey() != null || p.partitionBound().equals("DEFAULT")) {
        continue;
      }
      List<String> values = lowerValues(p.partitionBound(), t.partitionKey().startsWith("LIST"));
      if (values == null || values.size() != keyColumns.size()) {
        continue;
      }
      Map<String, String> slot = new LinkedHashMap<>();
      List<String> condition = new ArrayList<>();
      for (int i = 0; i < values.size(); i++) {
        Column c = keyColumns.get(i);
        String v = values.get(i);
        if (v.equals("NULL")) {
          condition.add(c.sqlName() + " IS NULL");
          slot.put(c.name(), "NULL");
        } else {
          condition.add(c.sqlName() + " = " + v);
          slot.put(c.name(), v);
        }
      }
      slots.add(slot);
      if (placements != null) {
        placements.add(new Placement(p.name(), p.sqlName(), String.join(" AND ", condition)));
      }
    }
    return slots;
  }

  /** The columns a partition key names, or null when a part of it is an expression. */
  private static List<Column> keyColumns(Table t) {
    String key = t.partitionKey();
    int open = key.indexOf('(');
    int close = key.lastIndexOf(')');
    if (open < 0 || close < open) {
      return null;
    }
    List<Column> columns = new ArrayList<>();
    for (String part : key.substring(open + 1, close).split(", ")) {
      Column match = null;
      for (Column c : t.columns()) {
        if (c.sqlName().equals(part)) {
          match = c;
        }
      }
      if (match == null) {
        return null;
      }
      columns.add(match);
    }
    return columns;
  }

  /**
   * The values of a bound a row holding them falls in: a range's lower bound (inclusive), a list's
   * first value; null when there is none (MINVALUE) or the bound does not parse.
   */
  private static List<String> lowerValues(String bound, boolean list) {
    String inner;
    if (list) {
      if (!bound.startsWith("FOR VALUES IN (") || !bound.endsWith(")")) {
        return null;
      }
      List<String> all = split(bound.substring("FOR VALUES IN (".length(), bound.length() - 1));
      return all == null || all.isEmpty() ? null : List.of(all.get(0));
    }
    int to = bound.indexOf(") TO (");
    if (!bound.startsWith("FOR VALUES FROM (") || to < 0) {
      return null;
    }
    inner = bound.substring("FOR VALUES FROM (".length(), to);
    List<String> values = split(inner);
    if (values == null
        || values.stream().anyMatch(v -> v.equals("MINVALUE") || v.equals("MAXVALUE"))) {
      return null;
    }
    return values;
  }

  /** Splits {@code 'a', 'b''c', 10} at the commas outside quotes; null when quotes do not close. */
  private static List<String> split(String text) {
    List<String> parts = new ArrayList<>();
    StringBuilder at = new StringBuilder();
    boolean quoted = false;
    for (int i = 0; i < text.length(); i++) {
      char ch = text.charAt(i);
      if (ch == '\'') {
        quoted = !quoted;
      }
      if (ch == ',' && !quoted) {
        parts.add(at.toString().trim());
        at.setLength(0);
      } else {
        at.append(ch);
      }
    }
    if (quoted) {
      return null;
    }
    parts.add(at.toString().trim());
    return parts;
  }

  /**
   * A hash partition's modulus.
   *
   * @param bound e.g. {@code FOR VALUES WITH (modulus 4, remainder 1)}
   * @return the modulus, or null for another bound
   */
  static Long modulus(String bound) {
    Matcher m = MODULUS.matcher(bound);
    return m.matches() ? Long.parseLong(m.group(1)) : null;
  }

  private static long gcd(long a, long b) {
    return b == 0 ? a : gcd(b, a % b);
  }

  /**
   * A row's key values: the head slot's, and those of a base slot that does not contradict them;
   * hash keys made from their types. Null when every base slot contradicts the head's.
   */
  private static Map<String, String> merge(
      List<Map<String, String>> baseSlots, Map<String, String> want, int row) {
    for (int k = 0; k < baseSlots.size(); k++) {
      Map<String, String> from = baseSlots.get((row + k) % baseSlots.size());
      Map<String, String> merged = resolve(from, row);
      if (merged == null) {
        continue;
      }
      boolean fits = true;
      for (Map.Entry<String, String> e : resolve(want, row).entrySet()) {
        String there = merged.get(e.getKey());
        if (there != null && !there.equals(e.getValue())) {
          fits = false;
        }
        merged.put(e.getKey(), e.getValue());
      }
      if (fits) {
        return merged;
      }
    }
    return null;
  }

  /** A slot with its hash keys made from their types for one row. */
  private static Map<String, String> resolve(Map<String, String> slot, int row) {
    Map<String, String> out = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : slot.entrySet()) {
      if (e.getKey().startsWith("\0key:")) {
        String v = typed(e.getValue(), row);
        if (v == null) {
          return null;
        }
        out.put(e.getKey().substring("\0key:".length()), v);
      } else if (!e.getKey().equals(HASH)) {
        out.put(e.getKey(), e.getValue());
      }
    }
    return out;
  }

  /** Whether a sample row must hold a value in a column: it has no default and may not be NULL. */
  private static boolean needsValue(Column c, Column now) {
    if (c.defaultExpression() != null || c.identity() != null || c.generatedExpression() != null) {
      return false;
    }
    return c.notNull() || (now != null && now.notNull() && now.generatedExpression() == null);
  }

  /**
   * A literal of a type, different for each row; null for a type it cannot make.
   *
   * @param type as {@code format_type} prints it
   * @param row the row's number, from 0
   * @return e.g. {@code 3}, {@code 'r3'}, {@code '2003-01-01'}
   */
  static String typed(String type, int row) {
    String t = type.toLowerCase(java.util.Locale.ROOT);
    if (t.equals("smallint")
        || t.equals("integer")
        || t.equals("bigint")
        || t.equals("real")
        || t.equals("double precision")
        || t.startsWith("numeric")) {
      return String.valueOf(row + 1);
    }
    if (t.equals("text") || t.startsWith("character")) {
      String v = "r" + row;
      Matcher m = Pattern.compile("\\((\\d+)\\)$").matcher(t);
      if (m.find() && Integer.parseInt(m.group(1)) < v.length()) {
        v = String.valueOf((char) ('a' + row % 26));
      }
      return Sql.literal(v);
    }
    if (t.equals("boolean")) {
      return row % 2 == 0 ? "true" : "false";
    }
    if (t.equals("date")) {
      return "'" + (2000 + row) + "-01-01'";
    }
    if (t.startsWith("timestamp")) {
      return "'" + (2000 + row) + "-01-01 00:00:00'";
    }
    if (t.equals("uuid")) {
      return String.format("'00000000-0000-0000-0000-%012d'", row);
    }
    if (t.equals("json") || t.equals("jsonb")) {
      return "'{}'";
    }
    return null;
  }
}
