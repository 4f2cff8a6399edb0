package dev.ledger.diff;

import dev.ledger.diff.SchemaCatalog.Column;
import dev.ledger.diff.SchemaCatalog.Item;
import dev.ledger.diff.SchemaCatalog.Table;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A composite type changed in place with {@code ALTER TYPE ... ADD/DROP/ALTER ATTRIBUTE} instead of
 * dropped and made again (which fails while a column uses the type). A composite type's item
 * carries its SQL name as its first label, then one {@code NAME\tTYPE} per attribute in order (the
 * name quoted as SQL writes it, the type as {@code format_type} prints it).
 *
 * <p>In place works when the head keeps the base's remaining attributes in their order and appends
 * the new ones (an attribute is only ever added at the end). PostgreSQL refuses to change an
 * attribute's type while a column uses the type ({@link #refusal} says so); such a change, and one
 * whose attribute order cannot be reached in place while a column uses the type, swaps a new type
 * in instead ({@link #swap}).
 *
 * @param statements the {@code ALTER TYPE} statements, in order
 * @param risk the class: {@code destructive} when an attribute is dropped while a column uses the
 *     type (its values are lost), else {@code safe}
 * @param reason why, one clause
 * @param refusal why the change cannot be made while a column uses the type, or null
 */
record CompositeChange(List<String> statements, Risk risk, String reason, String refusal) {

  /**
   * The labels of a composite type.
   *
   * @param sqlName its SQL name
   * @param attributes each attribute as {@code quoted-name type}, in order, as {@code
   *     quote_ident(attname) || ' ' || format_type(...)} prints it
   * @return the labels
   */
  static List<String> labels(String sqlName, List<String> attributes) {
    List<String> labels = new ArrayList<>();
    labels.add(sqlName);
    for (String a : attributes) {
      int split = splitAt(a);
      labels.add(a.substring(0, split) + "\t" + a.substring(split + 1));
    }
    return List.copyOf(labels);
  }

  /** Where a {@code quoted-name type} splits: the space after the (possibly quoted) name. */
  private static int splitAt(String attribute) {
    if (!attribute.startsWith("\"")) {
      return attribute.indexOf(' ');
    }
    int i = 1;
    while (i < attribute.length()) {
      if (attribute.charAt(i) == '"') {
        if (i + 1 < attribute.length() && attribute.charAt(i + 1) == '"') {
          i += 2;
          continue;
        }
        return i + 1;
      }
      i++;
    }
    return attribute.indexOf(' ');
  }

  /**
   * The in-place change from one composite type to another.
   *
   * @param before the base's labels
   * @param after the head's labels
   * @param base the base's catalog: whether a column uses the type
   * @return the change, or null when the head's attribute order cannot be reached in place (the
   *     type is then dropped and made again)
   */
  static CompositeChange between(List<String> before, List<String> after, SchemaCatalog base) {
    if (before.isEmpty() || after.isEmpty() || !before.get(0).equals(after.get(0))) {
      return null;
    }
    String sqlName = after.get(0);
    Map<String, String> h = attributes(after);
    List<String> renamed = new ArrayList<>();
    List<String> renames = new ArrayList<>();
    Map<String, String> b = renamed(attributes(before), h, sqlName, renames, renamed);
    List<String> kept = new ArrayList<>(b.keySet());
    kept.retainAll(h.keySet());
    List<String> headOrder = new ArrayList<>(h.keySet());
    if (!headOrder.subList(0, kept.size()).equals(kept)) {
      return null;
    }
    List<String> users = users(base, sqlName);
    String alter = "ALTER TYPE " + sqlName;
    List<String> sql = new ArrayList<>(renames);
    List<String> dropped = new ArrayList<>();
    List<String> retyped = new ArrayList<>();
    for (String name : b.keySet()) {
      if (!h.containsKey(name)) {
        sql.add(alter + " DROP ATTRIBUTE " + name + ";");
        dropped.add(name);
      }
    }
    for (String name : kept) {
      if (!b.get(name).equals(h.get(name))) {
        sql.add(alter + " ALTER ATTRIBUTE " + name + " TYPE " + h.get(name) + ";");
        retyped.add(name + " (" + b.get(name) + " to " + h.get(name) + ")");
      }
    }
    List<String> added = headOrder.subList(kept.size(), headOrder.size());
    for (String name : added) {
      sql.add(alter + " ADD ATTRIBUTE " + name + " " + h.get(name) + ";");
    }
    String usedBy =
        users.isEmpty()
            ? ""
            : " while "
                + String.join(", ", users.stream().map(u -> "`" + u + "`").toList())
                + (users.size() == 1 ? " uses" : " use")
                + " it";
    if (!retyped.isEmpty() && !users.isEmpty()) {
      return new CompositeChange(
          sql,
          Risk.DESTRUCTIVE,
          "composite type's attribute type changed" + usedBy,
          "PostgreSQL cannot change the type of attribute "
              + String.join(", ", retyped)
              + usedBy
              + ": convert the columns yourself (a new type and ALTER COLUMN ... TYPE ... USING)");
    }
    List<String> what = new ArrayList<>();
    if (!renamed.isEmpty()) {
      what.add(
          "attribute "
              + String.join(", ", renamed)
              + " (RENAME ATTRIBUTE: values keep their place; the release still running that reads"
              + " the old name fails)");
    }
    if (!added.isEmpty()) {
      what.add("attribute " + String.join(", ", added) + " added (existing values hold NULL)");
    }
    if (!dropped.isEmpty()) {
      what.add("attribute " + String.join(", ", dropped) + " dropped");
    }
    if (!retyped.isEmpty()) {
      what.add("attribute " + String.join(", ", retyped) + " retyped");
    }
    boolean loses = !dropped.isEmpty() && !users.isEmpty();
    return new CompositeChange(
        sql,
        loses ? Risk.DESTRUCTIVE : Risk.SAFE,
        "composite type altered in place"
            + usedBy
            + ": "
            + String.join("; ", what)
            + (loses ? ": the dropped attributes' values are lost" : ": catalog only"),
        null);
  }

  /**
   * The plan for a composite type that cannot be changed in place while columns use it (an
   * attribute retyped, or attributes moved): the head's type is made as {@code NAME_ledger_new},
   * each column of the base that uses the type is converted ({@code ALTER COLUMN ... TYPE ...
   * USING}: a value column attribute by attribute, each with an explicit cast to its new type, a
   * new attribute {@code NULL}; an array column through {@code text}, each attribute then read by
   * its new type's input), the old type dropped and the new one renamed; what else depends on the
   * type is moved out of the way and back ({@link SwapDependents}). Where no cast exists between an
   * attribute's types the tool's check fails on the conversion, and {@link SchemaDiff} refuses the
   * type by name.
   *
   * @param b the base's item
   * @param h the head's item of the same key
   * @param base the base's catalog (the columns using the type)
   * @param head the head's catalog (the defaults set again)
   * @return the swap, or null when both are not composite types, the type can be changed in place,
   *     or no column uses it
   */
  static EnumChange swap(Item b, Item h, SchemaCatalog base, SchemaCatalog head) {
    if (b.kind() != Change.Kind.COMPOSITE_TYPE
        || h.kind() != Change.Kind.COMPOSITE_TYPE
        || b.labels().isEmpty()
        || h.labels().isEmpty()
        || b.labels().equals(h.labels())
        || !b.labels().get(0).equals(h.labels().get(0))) {
      return null;
    }
    CompositeChange inPlace = between(b.labels(), h.labels(), base);
    if (inPlace != null && inPlace.refusal() == null) {
      return null;
    }
    String sqlName = h.labels().get(0);
    List<Column> direct = new ArrayList<>();
    List<Table> tables = new ArrayList<>();
    List<Integer> dims = new ArrayList<>();
    for (Table t : base.tables().values()) {
      for (Column c : t.columns()) {
        int d = c.inherited() ? -1 : SwapDependents.arrayDims(c.type(), sqlName);
        if (d >= 0) {
          direct.add(c);
          tables.add(t);
          dims.add(d);
        }
      }
    }
    if (direct.isEmpty()) {
      return null;
    }
    Map<String, String> before = attributes(b.labels());
    Map<String, String> after = attributes(h.labels());
    Map<String, String> source = sources(before, after);
    String temporary = EnumChange.temporaryName(sqlName);
    java.util.Set<String> directKeys = new java.util.TreeSet<>();
    for (int i = 0; i < direct.size(); i++) {
      directKeys.add(tables.get(i).name() + ":" + direct.get(i).name());
    }
    SwapDependents dependents = SwapDependents.of(b.key(), sqlName, directKeys, base, head);
    List<String> sql = new ArrayList<>();
    sql.add("CREATE TYPE " + temporary + " AS " + h.definition() + ";");
    sql.addAll(dependents.before());
    List<String> rewritten = new ArrayList<>();
    String refusal = null;
    boolean positional = positional(before, after, source);
    for (int i = 0; i < direct.size(); i++) {
      Column c = direct.get(i);
      Table t = tables.get(i);
      String target = temporary + "[]".repeat(dims.get(i));
      String using;
      if (dims.get(i) == 0) {
        using = converted(c.sqlName(), after, before, source, temporary);
      } else if (positional) {
        using = c.sqlName() + "::text" + "[]".repeat(dims.get(i)) + "::" + target;
      } else {
        refusal =
            "`"
                + t.name()
                + "."
                + c.name()
                + "` is an array of it and its attributes move, are added or dropped: an array"
                + " converts only through text, which keeps attributes by position; convert the"
                + " column yourself";
        continue;
      }
      sql.add(
          "ALTER TABLE "
              + t.sqlName()
              + " ALTER COLUMN "
              + c.sqlName()
              + " TYPE "
              + target
              + " USING "
              + using
              + ";");
      if (!rewritten.contains(t.name())) {
        rewritten.add(t.name());
      }
    }
    sql.add("DROP TYPE " + sqlName + ";");
    sql.add("ALTER TYPE " + temporary + " RENAME TO " + EnumChange.bareName(sqlName) + ";");
    sql.addAll(dependents.after(head));
    dependents.rewrittenTables().stream()
        .filter(n -> !rewritten.contains(n))
        .forEach(rewritten::add);
    Risk risk = Risk.LOCKING;
    List<String> what = new ArrayList<>();
    for (Map.Entry<String, String> a : after.entrySet()) {
      String from = source.get(a.getKey());
      if (from == null) {
        what.add(a.getKey() + " added (NULL in existing values)");
      } else if (!before.get(from).equals(a.getValue())) {
        TypeChange.Verdict v = TypeChange.classify(before.get(from), a.getValue());
        risk = risk.max(v.risk());
        what.add(from + " " + before.get(from) + " to " + a.getValue());
      }
    }
    for (String name : before.keySet()) {
      if (!source.containsValue(name)) {
        risk = Risk.DESTRUCTIVE;
        what.add(name + " dropped (its values are lost)");
      }
    }
    List<String> users =
        java.util.stream.IntStream.range(0, direct.size())
            .mapToObj(i -> "`" + tables.get(i).name() + "." + direct.get(i).name() + "`")
            .toList();
    String reason =
        "composite type's attributes changed while "
            + String.join(", ", users)
            + (users.size() == 1 ? " uses" : " use")
            + " it ("
            + (what.isEmpty() ? "attributes reordered" : String.join("; ", what))
            + "): the head's type is made as "
            + temporary
            + ", each column converted (a value attribute by attribute with an explicit cast, an"
            + " array through text; rewrites "
            + String.join(", ", rewritten.stream().map(n -> "`" + n + "`").toList())
            + " under an ACCESS EXCLUSIVE lock)"
            + dependents.describe()
            + ", the old type dropped and the new one renamed"
            + (risk == Risk.DESTRUCTIVE ? "; a value that does not convert fails the script" : "");
    return new EnumChange(risk, reason, sql, true, dependents, refusal);
  }

  /**
   * Whether the head's attributes come from the base's at the same positions, all of them: then a
   * value's text form reads back as the head's type (attributes by position).
   */
  private static boolean positional(
      Map<String, String> before, Map<String, String> after, Map<String, String> source) {
    List<String> b = new ArrayList<>(before.keySet());
    List<String> h = new ArrayList<>(after.keySet());
    if (b.size() != h.size()) {
      return false;
    }
    for (int i = 0; i < h.size(); i++) {
      if (!b.get(i).equals(source.get(h.get(i)))) {
        return false;
      }
    }
    return true;
  }

  /**
   * A value column's conversion: {@code NULL} stays {@code NULL} (a row of {@code NULL}s stays
   * one), else a row of the head's attributes in order, each the base's attribute it comes from
   * cast to its new type, or {@code NULL} for a new one.
   */
  private static String converted(
      String column,
      Map<String, String> after,
      Map<String, String> before,
      Map<String, String> source,
      String temporary) {
    List<String> fields = new ArrayList<>();
    for (Map.Entry<String, String> a : after.entrySet()) {
      String from = source.get(a.getKey());
      if (from == null) {
        fields.add("NULL::" + a.getValue());
      } else if (before.get(from).equals(a.getValue())) {
        fields.add("(" + column + ")." + from);
      } else {
        fields.add("(" + column + ")." + from + "::" + a.getValue());
      }
    }
    return "CASE WHEN "
        + column
        + "::text IS NULL THEN NULL ELSE ROW("
        + String.join(", ", fields)
        + ")::"
        + temporary
        + " END";
  }

  /**
   * Where each head attribute's values come from: the base's attribute of the same name, or the one
   * it renames (same position and type, neither name on the other side); null for a new one.
   */
  private static Map<String, String> sources(Map<String, String> b, Map<String, String> h) {
    List<String> bNames = new ArrayList<>(b.keySet());
    List<String> hNames = new ArrayList<>(h.keySet());
    Map<String, String> source = new LinkedHashMap<>();
    for (int i = 0; i < hNames.size(); i++) {
      String to = hNames.get(i);
      String from = i < bNames.size() ? bNames.get(i) : null;
      if (b.containsKey(to)) {
        source.put(to, to);
      } else if (from != null
          && b.get(from).equals(h.get(to))
          && !h.containsKey(from)
          && !b.containsKey(to)) {
        source.put(to, from);
      } else {
        source.put(to, null);
      }
    }
    return source;
  }

  /**
   * The base's attributes with those the head renames under their new names: an attribute at the
   * same position with the same type whose name neither side holds on the other is renamed ({@code
   * RENAME ATTRIBUTE}, values kept), not dropped and added.
   *
   * @param b the base's attributes, in order
   * @param h the head's attributes, in order
   * @param sqlName the type's SQL name
   * @param sql receives the {@code RENAME ATTRIBUTE} statements
   * @param renamed receives {@code from renamed to to}, one per rename
   * @return the base's attributes, renamed, in order
   */
  private static Map<String, String> renamed(
      Map<String, String> b,
      Map<String, String> h,
      String sqlName,
      List<String> sql,
      List<String> renamed) {
    List<String> bNames = new ArrayList<>(b.keySet());
    List<String> hNames = new ArrayList<>(h.keySet());
    Map<String, String> result = new LinkedHashMap<>();
    for (int i = 0; i < bNames.size(); i++) {
      String from = bNames.get(i);
      String to = i < hNames.size() ? hNames.get(i) : null;
      if (to != null
          && !from.equals(to)
          && b.get(from).equals(h.get(to))
          && !h.containsKey(from)
          && !b.containsKey(to)) {
        sql.add("ALTER TYPE " + sqlName + " RENAME ATTRIBUTE " + from + " TO " + to + ";");
        renamed.add(from + " renamed to " + to);
        result.put(to, b.get(from));
      } else {
        result.put(from, b.get(from));
      }
    }
    return result;
  }

  private static Map<String, String> attributes(List<String> labels) {
    Map<String, String> byName = new LinkedHashMap<>();
    for (String label : labels.subList(1, labels.size())) {
      int tab = label.indexOf('\t');
      byName.put(label.substring(0, tab), label.substring(tab + 1));
    }
    return byName;
  }

  /**
   * The base's columns ({@code table.column}) whose type is the composite type or an array of it.
   */
  static List<String> users(SchemaCatalog base, String sqlName) {
    List<String> users = new ArrayList<>();
    for (Table t : base.tables().values()) {
      for (Column c : t.columns()) {
        if (!c.type().startsWith(sqlName)) {
          continue;
        }
        String rest = c.type().substring(sqlName.length());
        if (rest.isEmpty() || rest.matches("(\\[\\])+")) {
          users.add(t.name() + "." + c.name());
        }
      }
    }
    return users;
  }
}
