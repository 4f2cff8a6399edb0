package dev.ledger.diff;

import dev.ledger.diff.Change.Action;
import dev.ledger.diff.Change.Kind;
import dev.ledger.diff.Plan.Pending;
import dev.ledger.diff.Plan.Phase;
import dev.ledger.diff.SchemaCatalog.Item;
import dev.ledger.diff.SchemaCatalog.Table;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Compares the {@link Item}s of two catalogs (types, functions, views, triggers, policies,
 * comments, grants, ...) into a {@link Plan}, in dependency order from {@code pg_depend}: what
 * tables use (types, functions that use no table) is made before the tables and removed after them;
 * what uses tables is removed before any table changes and made after. An item the head keeps
 * unchanged is still dropped and re-created when a column it uses is dropped or changes type, or
 * when an item it depends on is re-created; its change says so.
 */
final class ItemDiffer {

  private static final int DROP_BEFORE_CREATE = -1_000_000;

  private final SchemaCatalog base;
  private final SchemaCatalog head;
  private final Plan plan;
  private final Set<String> changedColumns;
  private final Set<String> rebuilt;

  /**
   * A differ over two catalogs.
   *
   * @param base the base catalog
   * @param head the head catalog
   * @param plan where the changes go
   * @param changedColumns the base's {@code table:column}s that the head drops or retypes, and the
   *     tables it drops
   * @param rebuilt the tables made again with their rows ({@link PartitionRebuild}): what belongs
   *     to them (a trigger, a comment, a grant) is made again on the new table
   */
  ItemDiffer(
      SchemaCatalog base,
      SchemaCatalog head,
      Plan plan,
      Set<String> changedColumns,
      Set<String> rebuilt) {
    this.base = base;
    this.head = head;
    this.plan = plan;
    this.changedColumns = changedColumns;
    this.rebuilt = rebuilt;
  }

  void diff() {
    Map<String, Integer> createRank = topological(head.items());
    Map<String, Integer> dropRank = topological(base.items());
    Map<String, String> recreated = recreated();
    Map<String, String> swapped = new HashMap<>();
    EnumChange.swaps(base, head)
        .forEach(
            (key, c) ->
                c.dependents()
                    .itemKeys()
                    .forEach(
                        k ->
                            swapped.putIfAbsent(
                                k,
                                base.items().get(key).kind().label()
                                    + " `"
                                    + base.items().get(key).name()
                                    + "`")));
    Set<String> keys = new TreeSet<>(base.items().keySet());
    keys.addAll(head.items().keySet());
    for (String key : keys) {
      Item b = base.items().get(key);
      Item h = head.items().get(key);
      if (swapped.containsKey(key)) {
        aroundSwap(b, h, swapped.get(key));
      } else if (b == null) {
        added(h, createRank.get(key));
      } else if (h == null) {
        dropped(b, dropRank.size() - dropRank.get(key));
      } else if (!b.sameAs(h)) {
        changed(b, h, createRank.get(key), dropRank.size() - dropRank.get(key));
      } else if (recreated.containsKey(key)) {
        Pending p = change(h, Action.CHANGED, h.definition(), h.definition());
        p.because(Risk.SAFE, "dropped and re-created around the change: " + recreated.get(key));
        // an early item (a domain, a type, a function that uses no table) is made again before the
        // tables: it must go before that, not at the end of the script (its drop phase when the
        // head drops it), and before what it depends on is dropped and made again
        int dropAt = dropRank.size() - dropRank.get(key);
        drop(p, b, b.early() ? DROP_BEFORE_CREATE + dropAt : dropAt);
        create(p, h, createRank.get(key));
      }
    }
  }

  /**
   * An item that depends on an enum swapped for a new type: the swap's own statements drop the
   * base's and make the head's ({@link SwapDependents}); its change is recorded here.
   */
  private void aroundSwap(Item b, Item h, String type) {
    String around = " around the swap of " + type;
    if (b == null) {
      change(h, Action.ADDED, null, h.definition())
          .because(Risk.SAFE, "new " + h.kind().label() + ": made after the swap of " + type);
    } else if (h == null) {
      change(b, Action.DROPPED, b.definition(), null)
          .because(Risk.SAFE, droppedReason(b) + "; dropped before the swap of " + type);
    } else if (b.sameAs(h)) {
      change(h, Action.CHANGED, h.definition(), h.definition())
          .because(Risk.SAFE, "dropped and re-created" + around + ": catalog only");
    } else {
      change(h, Action.CHANGED, b.definition(), h.definition())
          .because(
              h.kind() == Kind.DOMAIN ? Risk.DESTRUCTIVE : Risk.SAFE,
              "dropped, and made again from the head's definition"
                  + around
                  + (h.kind() == Kind.DOMAIN
                      ? ": its columns are converted back to it, which fails on a value it refuses"
                      : ": catalog only"));
    }
  }

  private Pending change(Item i, Action action, String before, String after) {
    return plan.change(i.table(), i.kind(), i.name(), action, before, after);
  }

  private void added(Item h, int rank) {
    Pending p = change(h, Action.ADDED, null, h.definition());
    if (h.refusal() != null) {
      p.because(Risk.DESTRUCTIVE, "added " + h.kind().label()).refuse(h.refusal());
      return;
    }
    if (h.kind() == Kind.TABLE_STORAGE) {
      storage(p, List.of(), h.labels(), !base.tables().containsKey(h.table()));
      return;
    }
    p.because(Risk.SAFE, addedReason(h));
    create(p, h, rank);
    Item replaced = replacedFunction(h);
    if (replaced != null) {
      // the defaults that called the function it replaces, set again once it is made
      SwapDependents.callers(base, replaced)
          .forEach(
              (key, t) -> {
                String set =
                    SwapDependents.headDefault(
                        head, t, t.column(key.substring(t.name().length() + 1)).orElseThrow());
                if (set != null) {
                  p.sql(createPhase(h), rank, set);
                }
              });
    }
  }

  /**
   * The base's function of the same signature that an added function replaces (its parameters
   * renamed, its OUT parameters changed), or null.
   */
  private Item replacedFunction(Item h) {
    if (h.kind() != Kind.FUNCTION || h.labels().size() < 3) {
      return null;
    }
    for (Item b : base.items().values()) {
      if (b.kind() == Kind.FUNCTION
          && b.labels().size() >= 3
          && b.labels().get(2).equals(h.labels().get(2))
          && !head.items().containsKey(b.key())) {
        return b;
      }
    }
    return null;
  }

  private void dropped(Item b, int rank) {
    Pending p = change(b, Action.DROPPED, b.definition(), null);
    if (b.refusal() != null) {
      p.because(Risk.DESTRUCTIVE, "dropped " + b.kind().label()).refuse(b.refusal());
      return;
    }
    if (b.kind() == Kind.EXTENSION) {
      p.because(
          Risk.DESTRUCTIVE, "dropped extension: its objects, and data kept in them, are lost");
    } else if (b.table() != null
        && base.tables().containsKey(b.table())
        && !head.tables().containsKey(b.table())) {
      p.because(Risk.SAFE, "dropped with its table");
      return;
    } else if (b.kind() == Kind.TABLE_STORAGE) {
      storage(p, b.labels(), List.of(), false);
      return;
    } else {
      p.because(Risk.SAFE, droppedReason(b));
    }
    int dropAt = b.early() && replacedBySameSignature(b) ? DROP_BEFORE_CREATE + rank : rank;
    // the head's function of the same signature (its parameters renamed, its OUT parameters
    // changed) can only be created once this one is gone; a column default calling it goes first
    if (b.kind() == Kind.FUNCTION) {
      dropCallerDefaults(p, b, dropAt);
    }
    drop(p, b, dropAt);
  }

  /**
   * Drops, before the function {@code b} is dropped, the base's column defaults that call it.
   *
   * @return the callers: {@code table.column} to its table
   */
  private Map<String, Table> dropCallerDefaults(Pending p, Item b, int dropAt) {
    Map<String, Table> callers = SwapDependents.callers(base, b);
    callers.forEach(
        (key, t) ->
            p.sql(
                dropPhase(b, dropAt),
                dropAt,
                SwapDependents.dropDefault(t, key.substring(t.name().length() + 1))));
    return callers;
  }

  private void changed(Item b, Item h, int createRank, int dropRank) {
    Pending p = change(h, Action.CHANGED, b.definition(), h.definition());
    if (b.refusal() != null || h.refusal() != null) {
      p.because(Risk.DESTRUCTIVE, "changed " + h.kind().label())
          .refuse(h.refusal() != null ? h.refusal() : b.refusal());
      return;
    }
    if (h.kind() == Kind.TABLE_STORAGE) {
      storage(p, b.labels(), h.labels(), false);
      return;
    }
    DomainChange domain =
        h.kind() == Kind.DOMAIN ? DomainChange.between(b.labels(), h.labels()) : null;
    if (domain != null) {
      if (domain.validates()) {
        p.because(
            Risk.DESTRUCTIVE,
            "domain altered in place: a new check is added NOT VALID, then VALIDATE CONSTRAINT (or"
                + " SET NOT NULL) checks every value the domain's columns hold, and fails on one"
                + " that breaks it");
      } else {
        p.because(Risk.SAFE, "domain altered in place: catalog only");
      }
      domain.statements().forEach(sql -> p.sql(Phase.ALTER_EARLY, createRank * 1000, sql));
      return;
    }
    if (h.kind() == Kind.COMPOSITE_TYPE) {
      EnumChange swap = CompositeChange.swap(b, h, base, head);
      if (swap != null) {
        swapped(p, swap, createRank);
        return;
      }
      CompositeChange composite = CompositeChange.between(b.labels(), h.labels(), base);
      if (composite != null) {
        p.because(composite.risk(), composite.reason());
        if (composite.refusal() != null) {
          p.refuse(composite.refusal());
          return;
        }
        composite.statements().forEach(sql -> p.sql(Phase.ALTER_EARLY, createRank * 1000, sql));
        return;
      }
    }
    if (h.kind() == Kind.ENUM && !EnumChange.addsOnly(b.labels(), h.labels())) {
      EnumChange change = EnumChange.between(b, h, base, head);
      if (change != null) {
        swapped(p, change, createRank);
        return;
      }
    }
    if (h.kind() == Kind.ENUM && EnumChange.addsOnly(b.labels(), h.labels())) {
      p.because(Risk.SAFE, "enum values added: catalog only");
      List<String> labels = h.labels();
      for (int i = 0; i < labels.size(); i++) {
        if (!b.labels().contains(labels.get(i))) {
          String sqlName = h.create().get(0).substring("CREATE TYPE ".length());
          sqlName = sqlName.substring(0, sqlName.indexOf(" AS ENUM"));
          String position =
              i + 1 < labels.size()
                  ? " BEFORE " + Sql.literal(labels.get(i + 1))
                  : i > 0 ? " AFTER " + Sql.literal(labels.get(i - 1)) : "";
          p.sql(
              Phase.ALTER_EARLY,
              createRank * 1000 + i,
              "ALTER TYPE "
                  + sqlName
                  + " ADD VALUE "
                  + Sql.literal(labels.get(i))
                  + position
                  + ";");
        }
      }
      return;
    }
    if (interfaceChanged(b, h)) {
      p.because(
          Risk.SAFE,
          h.kind().label()
              + " dropped and re-created: CREATE OR REPLACE cannot change its result type or its"
              + " parameters' names or defaults; what depends on it is re-created too");
      int dropAt = h.early() ? DROP_BEFORE_CREATE + dropRank : dropRank;
      // a column default calling it must go first, and is set again once it is made
      Map<String, Table> callers = dropCallerDefaults(p, b, dropAt);
      drop(p, b, dropAt);
      create(p, h, createRank);
      callers.forEach(
          (key, t) -> {
            String set =
                SwapDependents.headDefault(
                    head, t, t.column(key.substring(t.name().length() + 1)).orElseThrow());
            if (set != null) {
              p.sql(createPhase(h), createRank, set);
            }
          });
      if (!callers.isEmpty()) {
        p.because(
            Risk.SAFE,
            "the defaults of "
                + String.join(
                    ", ",
                    callers.keySet().stream().map(k -> "`" + k.replace(':', '.') + "`").toList())
                + " call it: dropped first and set again after (catalog only)");
      }
      return;
    }
    if (h.kind() == Kind.ENUM) {
      p.because(
          Risk.DESTRUCTIVE,
          "enum values removed or reordered: the type is dropped and made again, which fails while"
              + " a column uses it");
    } else if (h.kind() == Kind.MATERIALIZED_VIEW) {
      p.because(Risk.LOCKING, "materialized view re-created: its query runs again to fill it");
    } else if (h.replaceable()) {
      p.because(Risk.SAFE, h.kind().label() + " replaced: catalog only");
    } else {
      p.because(Risk.SAFE, h.kind().label() + " dropped and re-created: catalog only");
    }
    if (!h.replaceable()) {
      drop(p, b, h.early() ? DROP_BEFORE_CREATE + dropRank : dropRank);
    }
    create(p, h, createRank);
  }

  /**
   * A type changed by an {@link EnumChange} (an enum's values renamed in place, or an enum or a
   * composite type swapped for a new one): its statements, or its refusal by name.
   */
  private static void swapped(Pending p, EnumChange change, int createRank) {
    p.because(change.risk(), change.reason());
    if (change.refusal() != null) {
      p.refuse(change.refusal());
      return;
    }
    change.statements().forEach(sql -> p.sql(Phase.ALTER_EARLY, createRank * 1000, sql));
  }

  /**
   * A table's storage from {@code from} to {@code to} ({@link TableStorage} labels): {@code SET
   * [UN]LOGGED} rewrites the table, storage parameters are catalog only.
   */
  private static void storage(Pending p, List<String> from, List<String> to, boolean newTable) {
    if (newTable) {
      p.because(Risk.SAFE, "part of a new table");
    } else if (TableStorage.rewrites(from, to)) {
      p.because(
          Risk.LOCKING,
          "SET LOGGED/UNLOGGED rewrites the table under an ACCESS EXCLUSIVE lock (and SET LOGGED"
              + " writes all of it to the WAL)");
    } else {
      p.because(
          Risk.SAFE,
          "storage parameters: catalog only, they apply to rows written from now on (a brief"
              + " lock)");
    }
    TableStorage.between(from, to).forEach(sql -> p.sql(Phase.CREATE_DEPENDENT, 0, sql));
  }

  /**
   * Whether the head adds a function or procedure under another key (other parameter names or OUT
   * parameters) with the same signature ({@code name(input types)}) as this dropped one.
   */
  private boolean replacedBySameSignature(Item b) {
    if ((b.kind() != Kind.FUNCTION && b.kind() != Kind.PROCEDURE) || b.labels().size() < 3) {
      return false;
    }
    String signature = b.labels().get(2);
    for (Item h : head.items().values()) {
      if (h.kind() == b.kind()
          && h.labels().size() >= 3
          && h.labels().get(2).equals(signature)
          && !base.items().containsKey(h.key())) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether a function's or procedure's result type or parameters (names, defaults) differ: {@code
   * CREATE OR REPLACE} fails on those, so it is dropped and made again.
   */
  private static boolean interfaceChanged(Item b, Item h) {
    return (h.kind() == Kind.FUNCTION || h.kind() == Kind.PROCEDURE)
        && b.kind() == h.kind()
        && b.refusal() == null
        && !b.labels().isEmpty()
        && !b.labels().equals(h.labels());
  }

  private void create(Pending p, Item h, int rank) {
    Phase phase = createPhase(h);
    h.create().forEach(sql -> p.sql(phase, rank, sql));
  }

  private static Phase createPhase(Item h) {
    return h.early()
        ? Phase.CREATE_EARLY
        : h.kind() == Kind.COMMENT || h.kind() == Kind.GRANT
            ? Phase.DECORATE
            : Phase.CREATE_DEPENDENT;
  }

  private void drop(Pending p, Item b, int rank) {
    Phase phase = dropPhase(b, rank);
    b.drop().forEach(sql -> p.sql(phase, rank, sql));
  }

  private static Phase dropPhase(Item b, int rank) {
    return rank < 0 ? Phase.CREATE_EARLY : b.early() ? Phase.DROP_EARLY : Phase.DROP_DEPENDENT;
  }

  /**
   * The items both catalogs hold unchanged that must still be dropped and made again, each with the
   * reason: they use a column that is dropped or retyped, or depend on an item that is re-made.
   */
  private Map<String, String> recreated() {
    Map<String, String> why = new LinkedHashMap<>();
    Map<String, String> remade = new HashMap<>();
    for (Item b : base.items().values()) {
      Item h = head.items().get(b.key());
      if ((h != null
              && !b.sameAs(h)
              && !h.replaceable()
              && b.refusal() == null
              && !alteredInPlace(b, h))
          || (h != null && interfaceChanged(b, h))) {
        remade.put(b.key(), b.kind().label() + " `" + b.name() + "` changes");
      }
      if (h != null && b.sameAs(h) && b.table() != null && rebuilt.contains(b.table())) {
        why.put(b.key(), "on `" + b.table() + "`, which is made again with its rows");
        continue;
      }
      if (h != null && b.sameAs(h)) {
        for (String use : b.uses()) {
          if (changedColumns.contains(use)) {
            why.put(b.key(), "uses `" + use.replace(':', '.') + "`, which changes");
            break;
          }
        }
      }
    }
    remade.putAll(why);
    boolean grew = true;
    while (grew) {
      grew = false;
      for (Item b : base.items().values()) {
        Item h = head.items().get(b.key());
        if (h == null || !b.sameAs(h) || remade.containsKey(b.key())) {
          continue;
        }
        for (String required : b.requires()) {
          if (remade.containsKey(required)) {
            String reason = "depends on " + required + ", which is re-created";
            remade.put(b.key(), reason);
            why.put(b.key(), reason);
            grew = true;
            break;
          }
        }
      }
    }
    return why;
  }

  /** Kahn's order over {@code requires}, ties by key; items in a cycle come last, by key. */
  private static Map<String, Integer> topological(Map<String, Item> items) {
    Map<String, Integer> waiting = new HashMap<>();
    Map<String, List<String>> dependents = new HashMap<>();
    for (Item i : items.values()) {
      int n = 0;
      for (String r : i.requires()) {
        if (items.containsKey(r)) {
          n++;
          dependents.computeIfAbsent(r, k -> new ArrayList<>()).add(i.key());
        }
      }
      waiting.put(i.key(), n);
    }
    TreeSet<String> ready = new TreeSet<>();
    waiting.forEach(
        (k, n) -> {
          if (n == 0) {
            ready.add(k);
          }
        });
    Map<String, Integer> rank = new LinkedHashMap<>();
    Deque<String> unused = new ArrayDeque<>();
    while (!ready.isEmpty()) {
      String next = ready.pollFirst();
      rank.put(next, rank.size());
      for (String d : dependents.getOrDefault(next, List.of())) {
        if (waiting.merge(d, -1, Integer::sum) == 0) {
          ready.add(d);
        }
      }
    }
    for (String key : new TreeSet<>(items.keySet())) {
      if (!rank.containsKey(key)) {
        unused.add(key);
      }
    }
    unused.forEach(k -> rank.put(k, rank.size()));
    return rank;
  }

  /**
   * Whether a changed item keeps its identity (its OID): a domain or composite type altered in
   * place, an enum whose values are renamed in place. What depends on it stays.
   */
  private boolean alteredInPlace(Item b, Item h) {
    return switch (h.kind()) {
      case DOMAIN -> DomainChange.between(b.labels(), h.labels()) != null;
      case COMPOSITE_TYPE -> {
        CompositeChange c = CompositeChange.between(b.labels(), h.labels(), base);
        yield c != null && c.refusal() == null;
      }
      case ENUM -> {
        EnumChange c =
            EnumChange.addsOnly(b.labels(), h.labels())
                ? null
                : EnumChange.between(b, h, base, head);
        yield c != null && !c.swapsType();
      }
      default -> false;
    };
  }

  private static String addedReason(Item h) {
    return switch (h.kind()) {
      case MATERIALIZED_VIEW -> "new materialized view: runs its query once to fill it";
      case TRIGGER -> "new trigger: catalog only (takes a brief SHARE ROW EXCLUSIVE lock)";
      case RULE ->
          "new rule: catalog only (a brief ACCESS EXCLUSIVE lock); it rewrites the statements it"
              + " matches from now on";
      case ROW_SECURITY ->
          "row-level security set: roles other than the owner see only what policies allow";
      case GRANT -> "privileges changed: catalog only";
      case COMMENT -> "comment set: catalog only";
      default -> "new " + h.kind().label() + ": catalog only";
    };
  }

  private static String droppedReason(Item b) {
    return switch (b.kind()) {
      case MATERIALIZED_VIEW ->
          "dropped materialized view: derived rows, its query can rebuild them";
      case ROW_SECURITY -> "row-level security disabled: every role with privileges sees every row";
      case GRANT -> "privileges back to the default: catalog only";
      case COMMENT -> "comment removed: catalog only";
      default -> "dropped " + b.kind().label() + ": catalog only";
    };
  }
}
