package dev.ledger.diff;

import dev.ledger.diff.Change.Kind;
import dev.ledger.diff.SchemaCatalog.Column;
import dev.ledger.diff.SchemaCatalog.Constraint;
import dev.ledger.diff.SchemaCatalog.Index;
import dev.ledger.diff.SchemaCatalog.Item;
import dev.ledger.diff.SchemaCatalog.Table;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What a type swap ({@link SwapDependents}) cannot move out of its way, each refused by name so
 * that the tool never prints a plan its check would pass over wrong SQL, or fail on:
 *
 * <ul>
 *   <li>a generated column computed from a converted column (PostgreSQL refuses to change the type
 *       of a column a generated column uses);
 *   <li>a function made after the tables (it uses a table) that depends on the type while an index,
 *       a check or a default calls it: it is dropped before and made again after the tables, so
 *       what calls it would be made again before it is back;
 *   <li>a dependent new in the head that needs a table, or an object made after the tables, that
 *       the head adds: the swap makes its dependents before any table changes.
 * </ul>
 *
 * <p>Stateless.
 */
final class SwapRefusals {

  private SwapRefusals() {}

  /**
   * The base's generated columns whose expression names the swapped type (or a dependent) or a
   * column the swap converts on their table.
   *
   * @param base the base's catalog
   * @param converted the base's converted columns, as {@code table:column}
   * @param mentions matches a constant of the types or a call of the functions the swap moves
   * @return one refusal per such column
   */
  static List<String> generatedColumns(
      SchemaCatalog base, Set<String> converted, Pattern mentions) {
    List<String> refusals = new ArrayList<>();
    for (Table t : base.tables().values()) {
      List<String> here =
          t.columns().stream()
              .filter(c -> converted.contains(t.name() + ":" + c.name()))
              .map(Column::sqlName)
              .toList();
      Pattern words = here.isEmpty() ? null : SwapDependents.words(here);
      for (Column c : t.columns()) {
        if (!c.inherited()
            && c.generatedExpression() != null
            && (mentions.matcher(c.generatedExpression()).find()
                || (words != null && words.matcher(c.generatedExpression()).find()))) {
          refusals.add(
              "generated column `"
                  + t.name()
                  + "."
                  + c.name()
                  + "` is computed from what the swap converts: PostgreSQL cannot change the"
                  + " type of a column a generated column uses; drop the generated column before"
                  + " and add it again after yourself (its values are computed again)");
        }
      }
    }
    return refusals;
  }

  /**
   * The base's functions made after the tables (they use a table) that depend on the type, when an
   * index, a check or a default calls one: the swap would drop what calls it before the function
   * goes, but make it again before the function is back.
   *
   * @param typeKey the type's item key
   * @param dropped the early items the swap drops and makes again
   * @param base the base's catalog
   * @return one refusal per such function, naming it and what calls it
   */
  static List<String> lateFunctions(String typeKey, List<Item> dropped, SchemaCatalog base) {
    Set<String> around = new LinkedHashSet<>();
    around.add(typeKey);
    dropped.forEach(i -> around.add(i.key()));
    List<String> refusals = new ArrayList<>();
    for (Item f : base.items().values()) {
      if (f.early()
          || (f.kind() != Kind.FUNCTION && f.kind() != Kind.PROCEDURE)
          || f.requires().stream().noneMatch(around::contains)) {
        continue;
      }
      Pattern calls = SwapDependents.mentions(List.of(), List.of(SwapDependents.functionName(f)));
      List<String> callers = new ArrayList<>();
      for (Table t : base.tables().values()) {
        for (Constraint c : t.constraints().values()) {
          if (!c.inherited() && calls.matcher(c.definition()).find()) {
            callers.add("constraint `" + c.name() + "` on `" + t.name() + "`");
          }
        }
        for (Index i : t.indexes().values()) {
          if (!i.inherited() && calls.matcher(i.definition()).find()) {
            callers.add("index `" + i.name() + "`");
          }
        }
        for (Column c : t.columns()) {
          if (!c.inherited()
              && c.defaultExpression() != null
              && calls.matcher(c.defaultExpression()).find()) {
            callers.add("the default of `" + t.name() + "." + c.name() + "`");
          }
        }
      }
      if (!callers.isEmpty()) {
        refusals.add(
            f.kind().label()
                + " `"
                + f.name()
                + "` uses a table and depends on the swapped type, and "
                + String.join(", ", callers)
                + (callers.size() == 1 ? " calls" : " call")
                + " it: it is made again after the tables, after what calls it; swap the type"
                + " yourself");
      }
    }
    return refusals;
  }

  /**
   * The head's new dependents of the type that need a table or an object the head makes after the
   * swap (the swap makes its dependents before any table changes).
   *
   * @param created the head's dependents the swap makes
   * @param base the base's catalog
   * @param head the head's catalog
   * @return one refusal per such dependent
   */
  static List<String> addedTooEarly(List<Item> created, SchemaCatalog base, SchemaCatalog head) {
    List<String> refusals = new ArrayList<>();
    for (Item i : created) {
      if (base.items().containsKey(i.key())) {
        continue;
      }
      List<String> later = new ArrayList<>();
      for (String use : i.uses()) {
        String table = use.contains(":") ? use.substring(0, use.indexOf(':')) : use;
        if (!base.tables().containsKey(table) && !later.contains("table `" + table + "`")) {
          later.add("table `" + table + "`");
        }
      }
      for (String r : i.requires()) {
        Item required = head.items().get(r);
        if (required != null && !required.early() && !base.items().containsKey(r)) {
          later.add("`" + r + "`");
        }
      }
      if (!later.isEmpty()) {
        refusals.add(
            i.kind().label()
                + " `"
                + i.name()
                + "`, new in the head, depends on the swapped type and needs "
                + String.join(", ", later)
                + ", which the head makes after the swap; add it in a later migration");
      }
    }
    return refusals;
  }
}
