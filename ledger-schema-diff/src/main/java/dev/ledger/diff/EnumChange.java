package dev.ledger.diff;

import dev.ledger.diff.SchemaCatalog.Column;
import dev.ledger.diff.SchemaCatalog.Item;
import dev.ledger.diff.SchemaCatalog.Table;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * An enum whose values are renamed, removed or reordered, changed without dropping it while columns
 * use it (dropping it would fail, or lose the columns). Two plans:
 *
 * <ul>
 *   <li><b>renamed values</b>: when both lists have the same length and every position that differs
 *       holds a label the other side does not have, the catalog shows a rename in place: {@code
 *       ALTER TYPE ... RENAME VALUE}, catalog only, rows keep their value under its new label;
 *   <li><b>a new type swapped in</b>: the head's type is made under a temporary name ({@code
 *       NAME_ledger_new}), every column of the base that uses the type (or an array of it) has its
 *       default dropped and is converted through {@code text} ({@code ALTER COLUMN ... TYPE ...
 *       USING col::text::NAME_ledger_new}: a rewrite of its table under {@code ACCESS EXCLUSIVE}; a
 *       row holding a removed value fails the conversion), the old type is dropped, the new one
 *       renamed to the old name, and the head's defaults set again. Views over those columns are
 *       dropped and re-made around it ({@link Differ}'s changed columns); the domains, composite
 *       types and functions that use the type, their columns, and the indexes, checks and defaults
 *       that name it are moved out of the way and back ({@link SwapDependents}).
 * </ul>
 *
 * <p>An enum nothing uses (no column, no dependent) is still dropped and made again, and only added
 * values take {@code ADD VALUE} ({@link ItemDiffer}).
 *
 * <p>The same record holds the swap of a composite type that cannot change in place while columns
 * use it ({@link CompositeChange#swap}); {@link #swap} and {@link #swaps} return both kinds.
 *
 * @param risk the class of the change
 * @param reason why, one clause
 * @param statements the statements, in order
 * @param swapsType whether the type is replaced by a new one (a new OID): what depends on the type
 *     itself is made again
 * @param dependents for a swap, what is moved out of its way ({@link SwapDependents}); else null
 * @param ownRefusal why the swap itself cannot be made as planned, or null ({@link #refusal()} adds
 *     its dependents')
 */
record EnumChange(
    Risk risk,
    String reason,
    List<String> statements,
    boolean swapsType,
    SwapDependents dependents,
    String ownRefusal) {

  /**
   * A plan the tool can make, or a swap whose dependents may still refuse.
   *
   * @param risk the class
   * @param reason why
   * @param statements the statements
   * @param swapsType whether the type is replaced
   * @param dependents what a swap moves, or null
   */
  EnumChange(
      Risk risk,
      String reason,
      List<String> statements,
      boolean swapsType,
      SwapDependents dependents) {
    this(risk, reason, statements, swapsType, dependents, null);
  }

  /**
   * Why the plan cannot be run as printed: the swap's own refusal, else what its dependents refuse
   * ({@link SwapDependents#refusal()}).
   *
   * @return the refusal, or null when the plan can run
   */
  String refusal() {
    if (ownRefusal != null) {
      return ownRefusal;
    }
    return dependents == null ? null : dependents.refusal();
  }

  /** Appended to the type's name while the head's type is built beside the base's. */
  static final String TEMPORARY_SUFFIX = "_ledger_new";

  /**
   * The plan from the base's enum to the head's, when one of the two applies.
   *
   * @param b the base's enum
   * @param h the head's enum, of the same name; its labels differ from the base's and are not the
   *     base's with values added
   * @param base the base's catalog (the columns using the type)
   * @param head the head's catalog (the defaults set again)
   * @return the plan, or null when the enum is not renamed in place and no column uses it (it is
   *     then dropped and made again)
   */
  static EnumChange between(Item b, Item h, SchemaCatalog base, SchemaCatalog head) {
    String sqlName = sqlName(h);
    List<String> renames = renames(sqlName, b.labels(), h.labels());
    if (!renames.isEmpty()) {
      return new EnumChange(
          Risk.SAFE,
          "enum values renamed in place (ALTER TYPE ... RENAME VALUE, each at its position):"
              + " catalog only, rows keep their value under the new label; the release still"
              + " running that writes an old label fails",
          renames,
          false,
          null);
    }
    List<Use> uses = uses(base, sqlName);
    Set<String> direct = new java.util.TreeSet<>();
    uses.forEach(u -> direct.add(u.table().name() + ":" + u.column().name()));
    SwapDependents dependents = SwapDependents.of(b.key(), sqlName, direct, base, head);
    if (uses.isEmpty() && dependents.isEmpty()) {
      return null;
    }
    String temporary = temporaryName(sqlName);
    List<String> sql = new ArrayList<>();
    sql.add("CREATE TYPE " + temporary + " AS " + h.definition() + ";");
    sql.addAll(dependents.before());
    List<String> tables = new ArrayList<>();
    for (Use u : uses) {
      String alter = "ALTER TABLE " + u.table().sqlName() + " ALTER COLUMN " + u.column().sqlName();
      String target = temporary + u.arraySuffix();
      String via = "text" + u.arraySuffix();
      sql.add(
          alter
              + " TYPE "
              + target
              + " USING "
              + u.column().sqlName()
              + "::"
              + via
              + "::"
              + target
              + ";");
      if (!tables.contains(u.table().name())) {
        tables.add(u.table().name());
      }
    }
    sql.add("DROP TYPE " + sqlName + ";");
    sql.add("ALTER TYPE " + temporary + " RENAME TO " + bareName(sqlName) + ";");
    sql.addAll(dependents.after(head));
    dependents.rewrittenTables().stream().filter(t -> !tables.contains(t)).forEach(tables::add);
    List<String> removed = b.labels().stream().filter(l -> !h.labels().contains(l)).toList();
    String how =
        (uses.isEmpty() && dependents.convertedColumns().isEmpty()
                ? " while other objects depend on it: the head's type is made as " + temporary
                : " while columns use it: the head's type is made as "
                    + temporary
                    + ", each column converted through text (rewrites "
                    + String.join(", ", tables.stream().map(n -> "`" + n + "`").toList())
                    + " under an ACCESS EXCLUSIVE lock)")
            + dependents.describe()
            + ", the old type dropped and the new one renamed";
    if (uses.isEmpty()
        && dependents.convertedColumns().isEmpty()
        && dependents.movedKeys().isEmpty()) {
      return new EnumChange(
          removed.isEmpty() ? Risk.SAFE : Risk.DESTRUCTIVE,
          (removed.isEmpty()
                  ? "enum values reordered"
                  : "enum values removed ("
                      + String.join(", ", removed.stream().map(Sql::literal).toList())
                      + ")")
              + how
              + (removed.isEmpty() ? ": catalog only" : "; a value held elsewhere fails"),
          sql,
          true,
          dependents);
    }
    return removed.isEmpty()
        ? new EnumChange(Risk.LOCKING, "enum values reordered" + how, sql, true, dependents)
        : new EnumChange(
            Risk.DESTRUCTIVE,
            "enum values removed ("
                + String.join(", ", removed.stream().map(Sql::literal).toList())
                + ")"
                + how
                + "; a row holding a removed value fails the conversion",
            sql,
            true,
            dependents);
  }

  /**
   * The columns that the plan from {@code b} to {@code h} converts, so that they change type for a
   * moment (and views over them are made again).
   *
   * @param b the base's enum
   * @param h the head's enum
   * @param base the base's catalog
   * @param head the head's catalog
   * @return the base's columns that are converted, as {@code table:column}; empty when none is
   */
  static Set<String> convertedColumns(Item b, Item h, SchemaCatalog base, SchemaCatalog head) {
    EnumChange c = swap(b, h, base, head);
    if (c == null) {
      return Set.of();
    }
    Set<String> columns = new java.util.TreeSet<>();
    uses(base, sqlName(h)).forEach(u -> columns.add(u.table().name() + ":" + u.column().name()));
    columns.addAll(c.dependents().convertedColumns());
    return columns;
  }

  /**
   * The plan from {@code b} to {@code h} when it swaps the type for a new one.
   *
   * @param b the base's item
   * @param h the head's item of the same key
   * @param base the base's catalog
   * @param head the head's catalog
   * @return the swap, or null when both are not enums (or composite types, {@link
   *     CompositeChange#swap}) or the plan keeps the type
   */
  static EnumChange swap(Item b, Item h, SchemaCatalog base, SchemaCatalog head) {
    if (b.kind() == Change.Kind.COMPOSITE_TYPE) {
      return CompositeChange.swap(b, h, base, head);
    }
    if (b.kind() != Change.Kind.ENUM
        || h.kind() != Change.Kind.ENUM
        || b.labels().equals(h.labels())
        || addsOnly(b.labels(), h.labels())) {
      return null;
    }
    EnumChange c = between(b, h, base, head);
    return c != null && c.swapsType() ? c : null;
  }

  /**
   * Every swap from the base's enums to the head's.
   *
   * @param base the base's catalog
   * @param head the head's catalog
   * @return the swaps by the type's item key ({@code enum color}, {@code composite type pair}), in
   *     the items' order
   */
  static Map<String, EnumChange> swaps(SchemaCatalog base, SchemaCatalog head) {
    Map<String, EnumChange> swaps = new LinkedHashMap<>();
    for (Item b : base.items().values()) {
      Item h = head.items().get(b.key());
      EnumChange c = h == null ? null : swap(b, h, base, head);
      if (c != null) {
        swaps.put(b.key(), c);
      }
    }
    return swaps;
  }

  /**
   * Whether {@code big} is {@code small} with values inserted ({@code ADD VALUE} makes it).
   *
   * @param small the base's labels
   * @param big the head's labels
   * @return true when every label of {@code small} is in {@code big}, in the same order
   */
  static boolean addsOnly(List<String> small, List<String> big) {
    int at = 0;
    for (String s : big) {
      if (at < small.size() && small.get(at).equals(s)) {
        at++;
      }
    }
    return at == small.size() && big.containsAll(small);
  }

  /** A column of the base that uses the type, or an array of it. */
  private record Use(Table table, Column column, int arrayDims) {
    String arraySuffix() {
      return "[]".repeat(arrayDims);
    }
  }

  /** The base's own columns (not those a parent's statement changes) that use the type. */
  private static List<Use> uses(SchemaCatalog base, String sqlName) {
    List<Use> uses = new ArrayList<>();
    for (Table t : base.tables().values()) {
      for (Column c : t.columns()) {
        if (c.inherited() || !c.type().startsWith(sqlName)) {
          continue;
        }
        String rest = c.type().substring(sqlName.length());
        if (rest.isEmpty() || rest.matches("(\\[\\])+")) {
          uses.add(new Use(t, c, rest.length() / 2));
        }
      }
    }
    return uses;
  }

  /**
   * {@code RENAME VALUE} statements when the lists differ only by labels at the same positions,
   * each one the other side does not hold; else empty.
   */
  private static List<String> renames(String sqlName, List<String> before, List<String> after) {
    if (before.size() != after.size()) {
      return List.of();
    }
    List<String> sql = new ArrayList<>();
    for (int i = 0; i < before.size(); i++) {
      String from = before.get(i);
      String to = after.get(i);
      if (from.equals(to)) {
        continue;
      }
      if (after.contains(from) || before.contains(to)) {
        return List.of();
      }
      sql.add(
          "ALTER TYPE "
              + sqlName
              + " RENAME VALUE "
              + Sql.literal(from)
              + " TO "
              + Sql.literal(to)
              + ";");
    }
    return sql;
  }

  /**
   * The type's name as SQL writes it, from its {@code CREATE TYPE name AS ENUM (...)}; a composite
   * type's is its first label.
   */
  static String sqlName(Item enumItem) {
    if (enumItem.kind() == Change.Kind.COMPOSITE_TYPE) {
      return enumItem.labels().get(0);
    }
    String create = enumItem.create().get(0).substring("CREATE TYPE ".length());
    return create.substring(0, create.indexOf(" AS ENUM"));
  }

  /**
   * The name with the temporary suffix, in the same schema: {@code "Color"} gives {@code
   * "Color_ledger_new"}.
   */
  static String temporaryName(String sqlName) {
    return sqlName.endsWith("\"")
        ? sqlName.substring(0, sqlName.length() - 1) + TEMPORARY_SUFFIX + "\""
        : sqlName + TEMPORARY_SUFFIX;
  }

  /**
   * The last part of a possibly schema-qualified SQL name: {@code audit."Color"} gives {@code
   * "Color"}.
   */
  static String bareName(String sqlName) {
    if (!sqlName.endsWith("\"")) {
      return sqlName.substring(sqlName.lastIndexOf('.') + 1);
    }
    int i = sqlName.length() - 2;
    while (i >= 0) {
      if (sqlName.charAt(i) == '"') {
        if (i > 0 && sqlName.charAt(i - 1) == '"') {
          i -= 2;
          continue;
        }
        return sqlName.substring(i);
      }
      i--;
    }
    return sqlName;
  }
}
