package dev.ledger.diff.review;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * The renames a pull request makes, net: each object of the base (by OID) still there at the end
 * under another name, with the statement that renames it from the base's name and the one that
 * renames it back. The diff uses them so that a rename shows as a rename: the catalog diff is taken
 * against the head with the renames undone, and the renames run last.
 *
 * <p>Left out (shown by the catalog diff as it sees them): objects moved to another schema,
 * inherited columns and constraints (their parent's rename carries them), a constraint's index
 * renamed with it (the constraint's rename carries it), views' columns, composite types' relations
 * and constraints of domains.
 */
public final class RenamePlan {

  /**
   * One net rename.
   *
   * @param kind the kind of object, as {@link ReviewedStatement.Rename#kind()} names it
   * @param table the table it belongs to, by its final name (the table itself for a table), or null
   * @param from its name in the base, e.g. {@code customer} for a column
   * @param to its name in the head
   * @param forward the statement that renames it on the base, e.g. {@code ALTER TABLE orders RENAME
   *     COLUMN customer TO customer_id;}
   * @param backward the statement that renames it back on the head
   * @param tableLevel whether it is a relation, function or type rather than a part of a table
   */
  public record Planned(
      String kind,
      String table,
      String from,
      String to,
      String forward,
      String backward,
      boolean tableLevel) {}

  private RenamePlan() {}

  /**
   * The net renames between the base's objects and the head's.
   *
   * @param base the snapshot after the base's migrations
   * @param head the snapshot after the new statements
   * @param naming how to name them
   * @return the renames: parts of tables first, then relations, functions and types
   */
  static List<Planned> between(CatalogSnapshot base, CatalogSnapshot head, Naming naming) {
    List<Planned> out = new ArrayList<>();
    for (CatalogSnapshot.Entry was : base.entries().values()) {
      CatalogSnapshot.Entry now = head.get(was.key());
      if (now == null
          || !now.schema().equals(was.schema())
          || now.name().equals(was.name())
          || was.inherited() > 0) {
        continue;
      }
      Planned p = plan(was, now, base, head, naming);
      if (p != null) {
        out.add(p);
      }
    }
    out.sort(Comparator.comparing(Planned::tableLevel));
    return List.copyOf(out);
  }

  private static Planned plan(
      CatalogSnapshot.Entry was,
      CatalogSnapshot.Entry now,
      CatalogSnapshot base,
      CatalogSnapshot head,
      Naming naming) {
    String to = now.quotedName();
    String back = was.quotedName();
    switch (was.category()) {
      case 'r' -> {
        String kind = relationKind(was.kind());
        if (kind == null || renamedWithConstraint(was, now, base, head)) {
          return null;
        }
        String keyword =
            kind.equals("partitioned table") ? "TABLE" : kind.toUpperCase(java.util.Locale.ROOT);
        return new Planned(
            kind.equals("partitioned table") ? "table" : kind,
            kind.endsWith("table") ? naming.display(now) : null,
            naming.display(was),
            naming.display(now),
            "ALTER " + keyword + " " + naming.sql(was) + " RENAME TO " + to + ";",
            "ALTER " + keyword + " " + naming.sql(now) + " RENAME TO " + back + ";",
            true);
      }
      case 'a' -> {
        if (!was.kind().equals("r") && !was.kind().equals("p")) {
          return null;
        }
        CatalogSnapshot.Entry t0 = base.relation(was.owner());
        CatalogSnapshot.Entry t1 = head.relation(now.owner());
        return part("column", "COLUMN", t0, t1, was, now, naming);
      }
      case 'c' -> {
        CatalogSnapshot.Entry t0 = base.relation(was.owner());
        CatalogSnapshot.Entry t1 = head.relation(now.owner());
        return part("constraint", "CONSTRAINT", t0, t1, was, now, naming);
      }
      case 'g' -> {
        CatalogSnapshot.Entry t0 = base.relation(was.owner());
        CatalogSnapshot.Entry t1 = head.relation(now.owner());
        if (t0 == null || t1 == null) {
          return null;
        }
        return new Planned(
            "trigger",
            naming.display(t1),
            was.name(),
            now.name(),
            "ALTER TRIGGER " + back + " ON " + naming.sql(t0) + " RENAME TO " + to + ";",
            "ALTER TRIGGER " + to + " ON " + naming.sql(t1) + " RENAME TO " + back + ";",
            false);
      }
      case 'f' -> {
        String kind = was.kind().equals("p") ? "procedure" : "function";
        String args = "(" + naming.clean(was.args()) + ")";
        return new Planned(
            kind,
            null,
            naming.display(was) + args,
            naming.display(now) + args,
            "ALTER ROUTINE " + naming.sql(was) + args + " RENAME TO " + to + ";",
            "ALTER ROUTINE " + naming.sql(now) + args + " RENAME TO " + back + ";",
            true);
      }
      case 'y' -> {
        String kind = was.kind().equals("e") ? "enum" : was.kind().equals("d") ? "domain" : "type";
        String keyword = kind.equals("domain") ? "DOMAIN" : "TYPE";
        return new Planned(
            kind,
            null,
            naming.display(was),
            naming.display(now),
            "ALTER " + keyword + " " + naming.sql(was) + " RENAME TO " + to + ";",
            "ALTER " + keyword + " " + naming.sql(now) + " RENAME TO " + back + ";",
            true);
      }
      default -> {
        return null;
      }
    }
  }

  private static Planned part(
      String kind,
      String keyword,
      CatalogSnapshot.Entry t0,
      CatalogSnapshot.Entry t1,
      CatalogSnapshot.Entry was,
      CatalogSnapshot.Entry now,
      Naming naming) {
    if (t0 == null || t1 == null) {
      return null;
    }
    return new Planned(
        kind,
        naming.display(t1),
        was.name(),
        now.name(),
        "ALTER TABLE "
            + naming.sql(t0)
            + " RENAME "
            + keyword
            + " "
            + was.quotedName()
            + " TO "
            + now.quotedName()
            + ";",
        "ALTER TABLE "
            + naming.sql(t1)
            + " RENAME "
            + keyword
            + " "
            + now.quotedName()
            + " TO "
            + was.quotedName()
            + ";",
        false);
  }

  /** An index renamed together with the constraint it backs: the constraint's rename carries it. */
  private static boolean renamedWithConstraint(
      CatalogSnapshot.Entry was,
      CatalogSnapshot.Entry now,
      CatalogSnapshot base,
      CatalogSnapshot head) {
    if (!was.kind().equals("i") && !was.kind().equals("I")) {
      return false;
    }
    for (CatalogSnapshot.Entry k : base.entries().values()) {
      if (k.category() == 'c' && k.filenode() == was.oid()) {
        CatalogSnapshot.Entry k1 = head.get(k.key());
        return k1 != null && Objects.equals(k.name(), was.name()) && k1.name().equals(now.name());
      }
    }
    return false;
  }

  /**
   * What a relation kind is called.
   *
   * @param relkind {@code pg_class.relkind}
   * @return e.g. {@code table}, or null for a composite type's relation or a toast table
   */
  static String relationKind(String relkind) {
    return switch (relkind) {
      case "r" -> "table";
      case "p" -> "partitioned table";
      case "v" -> "view";
      case "m" -> "materialized view";
      case "S" -> "sequence";
      case "i", "I" -> "index";
      case "f" -> "foreign table";
      default -> null;
    };
  }
}
