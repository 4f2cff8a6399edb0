package dev.ledger.diff;

import dev.ledger.diff.Change.Kind;
import dev.ledger.diff.SchemaCatalog.Column;
import dev.ledger.diff.SchemaCatalog.Constraint;
import dev.ledger.diff.SchemaCatalog.ConstraintKind;
import dev.ledger.diff.SchemaCatalog.Index;
import dev.ledger.diff.SchemaCatalog.Item;
import dev.ledger.diff.SchemaCatalog.Table;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * What stands in the way while a type is swapped for a new one of the same name ({@link
 * EnumChange}): PostgreSQL refuses {@code DROP TYPE} while anything depends on the type, and {@code
 * ALTER COLUMN ... TYPE} re-parses every index and {@code CHECK} constraint over the column, which
 * fails where they compare it with a constant of the old type ({@code c = 'red'::color}).
 *
 * <ul>
 *   <li><b>items</b>: the domains, composite types and functions made before the tables that depend
 *       on the type (through {@code pg_depend}, also by way of one another): dropped before the
 *       swap, the head's made after it;
 *   <li><b>columns through text</b>: the base's columns whose type is such a domain or composite
 *       type (or an array of one): converted to {@code text} before the items are dropped and back
 *       to their type after they are made again;
 *   <li><b>defaults</b>: the defaults of the converted columns, and of the base's columns whose
 *       default names the type or one of those functions: dropped before, the head's set after;
 *   <li><b>indexes and checks</b>: the base's indexes, {@code CHECK} and exclusion constraints
 *       whose definition names the type, one of those domains, composite types or functions, or a
 *       column converted through text: dropped before, made again after when the head keeps them
 *       unchanged (else {@link KeyDiffer} adds the head's and leaves out its own drop); an index of
 *       a partitioned table is made again {@code ON ONLY} the parent, each partition's index under
 *       the head's name, attached;
 *   <li><b>foreign keys</b>: the base's foreign keys from or to a table one of whose columns is
 *       converted (the two sides of a key cannot differ in type, not even for a moment): dropped
 *       before anything else, added again last (validated: a scan of the referencing table).
 * </ul>
 *
 * <p>What the swap cannot move is refused by name ({@link #refusal()}, {@link SwapRefusals}): a
 * generated column computed from a converted column (PostgreSQL cannot change a column a generated
 * column uses), a function made after the tables (it uses a table) that depends on the type while
 * an index, a check or a default calls it (it would be dropped before, and made again after, what
 * calls it), and a dependent new in the head that needs a table or an object the head makes after
 * the swap.
 *
 * <p>Names are matched in the definitions as {@code pg_get_expr} and {@code pg_get_indexdef} print
 * them: a constant of a type as {@code ::TYPE}, a call as {@code NAME(}. Immutable; built once per
 * swap.
 */
final class SwapDependents {

  /**
   * A base column converted to {@code text} and back.
   *
   * @param table the column's table
   * @param column the column; its type is the one it is converted back to
   * @param text {@code text}, or {@code text[]} for an array
   */
  record ThroughText(Table table, Column column, String text) {}

  /**
   * A base index or check constraint moved out of the way.
   *
   * @param table its table
   * @param constraint the constraint, or null for an index
   * @param index the index, or null for a constraint
   */
  record Moved(Table table, Constraint constraint, Index index) {

    /** Its key in {@link #movedKeys()}: {@code index TABLE NAME} or {@code constraint ...}. */
    String key() {
      return constraint != null
          ? movedKey("constraint", table.name(), constraint.name())
          : movedKey("index", table.name(), index.name());
    }
  }

  private final List<Item> dropped;
  private final List<Item> created;
  private final List<ThroughText> throughText;
  private final Map<String, Column> defaults;
  private final Map<String, Table> defaultTables;
  private final List<Moved> moved;
  private final Set<String> direct;
  private final List<String> refusals;

  private SwapDependents(
      List<Item> dropped,
      List<Item> created,
      List<ThroughText> throughText,
      Map<String, Column> defaults,
      Map<String, Table> defaultTables,
      List<Moved> moved,
      Set<String> direct,
      List<String> refusals) {
    this.direct = Set.copyOf(direct);
    this.refusals = List.copyOf(refusals);
    this.dropped = dropped;
    this.created = created;
    this.throughText = throughText;
    this.defaults = defaults;
    this.defaultTables = defaultTables;
    this.moved = moved;
  }

  /**
   * The dependents of a type about to be swapped.
   *
   * @param typeKey the type's item key, e.g. {@code enum color}
   * @param typeSqlName the type's name as SQL writes it
   * @param direct the base's {@code table:column}s converted straight to the new type
   * @param base the base's catalog
   * @param head the head's catalog
   * @return the dependents, possibly none
   */
  static SwapDependents of(
      String typeKey,
      String typeSqlName,
      Set<String> direct,
      SchemaCatalog base,
      SchemaCatalog head) {
    List<Item> dropped = dependentItems(typeKey, base);
    List<Item> created = dependentItems(typeKey, head);
    List<String> typeNames = new ArrayList<>();
    typeNames.add(typeSqlName);
    List<String> functionNames = new ArrayList<>();
    for (Item i : dropped) {
      if (i.kind() == Kind.DOMAIN || i.kind() == Kind.COMPOSITE_TYPE) {
        typeNames.add(i.labels().get(0));
      } else {
        functionNames.add(functionName(i));
      }
    }
    List<ThroughText> throughText = new ArrayList<>();
    for (Table t : base.tables().values()) {
      for (Column c : t.columns()) {
        if (c.inherited()) {
          continue;
        }
        for (String name : typeNames.subList(1, typeNames.size())) {
          int dims = arrayDims(c.type(), name);
          if (dims >= 0) {
            throughText.add(new ThroughText(t, c, "text" + "[]".repeat(dims)));
          }
        }
      }
    }
    Pattern mentions = mentions(typeNames, functionNames);
    Map<String, Column> defaults = new LinkedHashMap<>();
    Map<String, Table> defaultTables = new TreeMap<>();
    for (Table t : base.tables().values()) {
      for (Column c : t.columns()) {
        String key = t.name() + ":" + c.name();
        boolean converted =
            direct.contains(key)
                || throughText.stream()
                    .anyMatch(u -> u.table() == t && u.column().name().equals(c.name()));
        if (c.inherited() || c.defaultExpression() == null) {
          continue;
        }
        if (converted || mentions.matcher(c.defaultExpression()).find()) {
          defaults.put(key, c);
          defaultTables.put(key, t);
        }
      }
    }
    List<Moved> moved = new ArrayList<>();
    Set<String> converted = new java.util.TreeSet<>(direct);
    throughText.forEach(u -> converted.add(u.table().name() + ":" + u.column().name()));
    for (Table t : base.tables().values()) {
      for (Constraint c : t.constraints().values()) {
        if (c.kind() == ConstraintKind.FOREIGN_KEY
            && !c.inherited()
            && joinsConverted(t, c, converted, base)) {
          moved.add(new Moved(t, c, null));
        }
      }
    }
    for (Table t : base.tables().values()) {
      List<String> textColumns =
          throughText.stream().filter(u -> u.table() == t).map(u -> u.column().sqlName()).toList();
      Pattern textHere = textColumns.isEmpty() ? null : words(textColumns);
      for (Constraint c : t.constraints().values()) {
        if ((c.kind() == ConstraintKind.CHECK || c.kind() == ConstraintKind.EXCLUSION)
            && !c.inherited()
            && (mentions.matcher(c.definition()).find()
                || (textHere != null && textHere.matcher(c.definition()).find()))) {
          moved.add(new Moved(t, c, null));
        }
      }
      for (Index i : t.indexes().values()) {
        if (!i.inherited()
            && (mentions.matcher(i.definition()).find()
                || (textHere != null && textHere.matcher(i.shape()).find()))) {
          moved.add(new Moved(t, null, i));
        }
      }
    }
    List<String> refusals = new ArrayList<>();
    refusals.addAll(SwapRefusals.generatedColumns(base, converted, mentions));
    refusals.addAll(SwapRefusals.lateFunctions(typeKey, dropped, base));
    refusals.addAll(SwapRefusals.addedTooEarly(created, base, head));
    return new SwapDependents(
        dropped, created, throughText, defaults, defaultTables, moved, direct, refusals);
  }

  private static final Pattern REFERENCED = Pattern.compile(" REFERENCES .*?\\(([^()]*)\\)");

  /**
   * Whether a foreign key's own columns, or the columns it references ({@code REFERENCES t(a, b)}
   * as {@code pg_get_constraintdef} prints it), include a converted column.
   */
  private static boolean joinsConverted(
      Table t, Constraint fk, Set<String> converted, SchemaCatalog base) {
    for (String column : fk.columns()) {
      if (converted.contains(t.name() + ":" + column)) {
        return true;
      }
    }
    Table referenced = base.tables().get(fk.referencedTable());
    java.util.regex.Matcher m = REFERENCED.matcher(fk.definition());
    if (referenced == null || !m.find()) {
      return false;
    }
    Set<String> columns = Set.of(m.group(1).split(", "));
    for (Column c : referenced.columns()) {
      if (columns.contains(c.sqlName()) && converted.contains(referenced.name() + ":" + c.name())) {
        return true;
      }
    }
    return false;
  }

  /**
   * What the swap cannot move out of its way, each naming the object.
   *
   * @return the refusal, or null when the swap can be made
   */
  String refusal() {
    return refusals.isEmpty() ? null : String.join("; ", refusals);
  }

  /**
   * Whether nothing but the type's own columns stands in the way.
   *
   * @return true when there are no items, columns through text, defaults, indexes or checks
   */
  boolean isEmpty() {
    return dropped.isEmpty()
        && created.isEmpty()
        && throughText.isEmpty()
        && defaults.isEmpty()
        && moved.isEmpty();
  }

  /**
   * What the swap moves out of its way, as a clause of its reason.
   *
   * @return e.g. {@code ; dropped before and made again after: domain `warm`, index `t_reds`}, or
   *     empty
   */
  String describe() {
    List<String> what = new ArrayList<>();
    Set<String> items = new LinkedHashSet<>();
    dropped.forEach(i -> items.add(i.kind().label() + " `" + i.name() + "`"));
    created.forEach(i -> items.add(i.kind().label() + " `" + i.name() + "`"));
    what.addAll(items);
    for (Moved m : moved) {
      what.add(
          m.constraint() != null
              ? (m.constraint().kind() == ConstraintKind.FOREIGN_KEY
                      ? "foreign key `"
                      : m.constraint().kind() == ConstraintKind.EXCLUSION
                          ? "exclusion constraint `"
                          : "check `")
                  + m.constraint().name()
                  + "` on `"
                  + m.table().name()
                  + "`"
              : "index `" + m.index().name() + "`");
    }
    defaults.keySet().stream()
        .filter(k -> !direct.contains(k) && !convertedColumns().contains(k))
        .forEach(k -> what.add("the default of `" + k.replace(':', '.') + "`"));
    String through =
        throughText.isEmpty()
            ? ""
            : "; "
                + String.join(
                    ", ",
                    throughText.stream()
                        .map(u -> "`" + u.table().name() + "." + u.column().name() + "`")
                        .toList())
                + " converted to text and back";
    return (what.isEmpty()
            ? ""
            : "; dropped before and made again after (the head's): " + String.join(", ", what))
        + through;
  }

  /**
   * The key of a moved index or constraint, as {@link KeyDiffer} looks it up.
   *
   * @param what {@code index} or {@code constraint}
   * @param table the table's normalised name
   * @param name the index's or constraint's name
   * @return the key
   */
  static String movedKey(String what, String table, String name) {
    return what + " " + table + " " + name;
  }

  /**
   * The keys of the items the swap drops and makes again: {@link ItemDiffer} records their changes
   * and leaves their statements to the swap.
   *
   * @return the keys of the base's and the head's dependent items
   */
  Set<String> itemKeys() {
    Set<String> keys = new LinkedHashSet<>();
    dropped.forEach(i -> keys.add(i.key()));
    created.forEach(i -> keys.add(i.key()));
    return keys;
  }

  /**
   * The keys of the indexes and constraints the swap drops ({@link Moved#key()}).
   *
   * @return the keys
   */
  Set<String> movedKeys() {
    Set<String> keys = new LinkedHashSet<>();
    moved.forEach(m -> keys.add(m.key()));
    return keys;
  }

  /**
   * The base's columns converted through text, as {@code table:column}.
   *
   * @return the keys
   */
  Set<String> convertedColumns() {
    Set<String> keys = new LinkedHashSet<>();
    throughText.forEach(u -> keys.add(u.table().name() + ":" + u.column().name()));
    return keys;
  }

  /**
   * The tables whose rows the swap rewrites besides those of the direct columns.
   *
   * @return the tables' names
   */
  List<String> rewrittenTables() {
    return throughText.stream().map(u -> u.table().name()).distinct().toList();
  }

  /**
   * The statements before the type is dropped: defaults dropped, indexes and checks dropped,
   * columns converted to text, items dropped (dependents first).
   *
   * @return the statements, in order
   */
  List<String> before() {
    List<String> sql = new ArrayList<>();
    defaults.forEach((key, c) -> sql.add(alter(defaultTables.get(key), c) + " DROP DEFAULT;"));
    for (Moved m : moved) {
      sql.add(
          m.constraint() != null
              ? KeyDiffer.dropConstraint(m.table(), m.constraint())
              : "DROP INDEX " + m.index().sqlName() + ";");
    }
    for (ThroughText u : throughText) {
      sql.add(
          alter(u.table(), u.column())
              + " TYPE "
              + u.text()
              + " USING "
              + u.column().sqlName()
              + "::"
              + u.text()
              + ";");
    }
    for (int i = dropped.size() - 1; i >= 0; i--) {
      sql.addAll(dropped.get(i).drop());
    }
    return sql;
  }

  /**
   * The statements after the new type has its name: the head's items made, columns converted back,
   * the head's defaults set, the indexes and checks the head keeps made again.
   *
   * @param head the head's catalog
   * @return the statements, in order
   */
  List<String> after(SchemaCatalog head) {
    List<String> sql = new ArrayList<>();
    created.forEach(i -> sql.addAll(i.create()));
    for (ThroughText u : throughText) {
      sql.add(
          alter(u.table(), u.column())
              + " TYPE "
              + u.column().type()
              + " USING "
              + u.column().sqlName()
              + "::"
              + u.column().type()
              + ";");
    }
    defaults.forEach(
        (key, c) -> {
          String set = headDefault(head, defaultTables.get(key), c);
          if (set != null) {
            sql.add(set);
          }
        });
    // foreign keys last: the unique keys and indexes they need are back
    for (boolean foreignKeys : new boolean[] {false, true}) {
      for (Moved m : moved) {
        Table h = head.tables().get(m.table().name());
        boolean foreignKey =
            m.constraint() != null && m.constraint().kind() == ConstraintKind.FOREIGN_KEY;
        if (h == null || foreignKey != foreignKeys) {
          continue;
        }
        if (m.constraint() != null) {
          Constraint after = h.constraints().get(m.constraint().name());
          if (after != null && after.equals(m.constraint())) {
            sql.add(KeyDiffer.addConstraint(h, after));
          }
        } else {
          Index after = h.indexes().get(m.index().name());
          if (after != null && after.sameAs(m.index())) {
            index(head, h, after, sql);
          }
        }
      }
    }
    return sql;
  }

  /**
   * Makes the head's index again: on a plain table as it is; on a partitioned table {@code ON ONLY}
   * the parent, then each partition's index under the head's name (a partitioned partition's the
   * same way, in turn), each attached, so that a partition's index keeps a name of its own.
   */
  private static void index(SchemaCatalog head, Table t, Index i, List<String> sql) {
    if (t.partitionKey() == null) {
      sql.add(i.definition().replaceFirst(" ON ONLY ", " ON ") + ";");
      return;
    }
    sql.add(i.definition() + ";");
    for (Table p : head.tables().values()) {
      if (p.partitionBound() == null || !p.parents().contains(t.name())) {
        continue;
      }
      for (Index child : p.indexes().values()) {
        if (child.inherited() && i.name().equals(child.parent())) {
          index(head, p, child, sql);
          sql.add("ALTER INDEX " + i.sqlName() + " ATTACH PARTITION " + child.sqlName() + ";");
        }
      }
    }
  }

  /**
   * {@code SET DEFAULT} of the head's column when the head keeps the column with the base's type
   * and default; else null ({@link ColumnDiffer} sets a default that changes).
   *
   * @param head the head's catalog
   * @param b the base's table
   * @param c the base's column
   * @return the statement, or null
   */
  static String headDefault(SchemaCatalog head, Table b, Column c) {
    Table t = head.tables().get(b.name());
    Column h = t == null ? null : t.column(c.name()).orElse(null);
    if (h == null
        || !h.type().equals(c.type())
        || h.defaultExpression() == null
        || !h.defaultExpression().equals(c.defaultExpression())) {
      return null;
    }
    return alter(t, h) + " SET DEFAULT " + h.defaultExpression() + ";";
  }

  /**
   * The base's columns whose default calls a function, as {@code table:column} to the column: a
   * function dropped and made again must have them dropped first and set again after.
   *
   * @param base the base's catalog
   * @param function the function's or procedure's item
   * @return the tables by {@code table:column}, in the catalog's order
   */
  static Map<String, Table> callers(SchemaCatalog base, Item function) {
    Pattern calls = mentions(List.of(), List.of(functionName(function)));
    Map<String, Table> callers = new LinkedHashMap<>();
    for (Table t : base.tables().values()) {
      for (Column c : t.columns()) {
        if (!c.inherited()
            && c.defaultExpression() != null
            && calls.matcher(c.defaultExpression()).find()) {
          callers.put(t.name() + ":" + c.name(), t);
        }
      }
    }
    return callers;
  }

  /**
   * {@code ALTER TABLE ... ALTER COLUMN ... DROP DEFAULT;} of a base column.
   *
   * @param t the table
   * @param column the column's name
   * @return the statement
   */
  static String dropDefault(Table t, String column) {
    return alter(t, t.column(column).orElseThrow()) + " DROP DEFAULT;";
  }

  /** A function's name as its calls print it, from its {@code DROP FUNCTION name(args);}. */
  static String functionName(Item function) {
    String drop = function.drop().get(0);
    String signature = drop.substring(drop.indexOf(' ', "DROP ".length()) + 1);
    return signature.substring(0, signature.indexOf('('));
  }

  private static String alter(Table t, Column c) {
    return "ALTER TABLE " + t.sqlName() + " ALTER COLUMN " + c.sqlName();
  }

  /**
   * How many array dimensions {@code type} adds to {@code name}: 0 for the type itself, -1 when it
   * is another type.
   */
  static int arrayDims(String type, String name) {
    if (!type.startsWith(name)) {
      return -1;
    }
    String rest = type.substring(name.length());
    return rest.isEmpty() || rest.matches("(\\[\\])+") ? rest.length() / 2 : -1;
  }

  /**
   * The early items of a catalog that depend on the item {@code key}, directly or through one
   * another, ordered so that each comes after what it requires.
   */
  private static List<Item> dependentItems(String key, SchemaCatalog catalog) {
    Set<String> found = new LinkedHashSet<>();
    boolean grew = true;
    while (grew) {
      grew = false;
      for (Item i : catalog.items().values()) {
        if (!i.early()
            || found.contains(i.key())
            || (i.kind() != Kind.DOMAIN
                && i.kind() != Kind.COMPOSITE_TYPE
                && i.kind() != Kind.FUNCTION
                && i.kind() != Kind.PROCEDURE)) {
          continue;
        }
        if (i.requires().contains(key) || i.requires().stream().anyMatch(found::contains)) {
          found.add(i.key());
          grew = true;
        }
      }
    }
    List<Item> ordered = new ArrayList<>();
    Set<String> placed = new LinkedHashSet<>();
    while (placed.size() < found.size()) {
      int before = placed.size();
      for (String k : found) {
        Item i = catalog.items().get(k);
        if (!placed.contains(k)
            && i.requires().stream().noneMatch(r -> found.contains(r) && !placed.contains(r))) {
          placed.add(k);
          ordered.add(i);
        }
      }
      if (placed.size() == before) {
        found.stream()
            .filter(k -> !placed.contains(k))
            .forEach(
                k -> {
                  placed.add(k);
                  ordered.add(catalog.items().get(k));
                });
      }
    }
    return ordered;
  }

  /** Matches a constant of one of the types ({@code ::TYPE}) or a call of one of the functions. */
  static Pattern mentions(List<String> typeNames, List<String> functionNames) {
    List<String> alternatives = new ArrayList<>();
    for (String t : typeNames) {
      alternatives.add("::" + Pattern.quote(t) + (t.endsWith("\"") ? "" : "(?![A-Za-z0-9_$])"));
    }
    for (String f : functionNames) {
      alternatives.add("(?<![A-Za-z0-9_$.\"])" + Pattern.quote(f) + "\\(");
    }
    return Pattern.compile(String.join("|", alternatives));
  }

  /** Matches one of the column names as a whole word. */
  static Pattern words(List<String> sqlNames) {
    List<String> alternatives = new ArrayList<>();
    for (String n : sqlNames) {
      alternatives.add("(?<![A-Za-z0-9_$\"])" + Pattern.quote(n) + "(?![A-Za-z0-9_$\"])");
    }
    return Pattern.compile(String.join("|", alternatives));
  }
}
