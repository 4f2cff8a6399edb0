package dev.ledger.migrate;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one reading of the database found, as {@link SchemaPlanner} decided it.
 *
 * @param directory the directory schema's decision
 * @param domains the routed domain schemas' decisions, by schema
 * @param census the shared tables' content, when the database has a ledger's shared tables
 * @param moveTargets the schemas the shared tables would move to that are not routed yet
 */
record Observation(
    Work directory, List<Work> domains, SharedTables.Census census, List<Work> moveTargets) {

  /**
   * The domain schemas' works at the end of a run, by schema: those observed, each replaced by the
   * work that ran it, and the schemas the run made that were not observed.
   *
   * @param ran the works the run ran, by schema
   * @return the works, by schema
   */
  Map<String, Work> settledDomains(Map<String, Work> ran) {
    Map<String, Work> settled = new TreeMap<>();
    for (Work w : domains) {
      settled.put(w.schema, ran.getOrDefault(w.schema, w));
    }
    // plan, or a move that failed: the schemas the move makes or would make
    for (Work w : moveTargets) {
      settled.putIfAbsent(w.schema, ran.getOrDefault(w.schema, w));
    }
    for (Work w : ran.values()) {
      if (w.kind == SchemaKind.DOMAIN) {
        settled.putIfAbsent(w.schema, w);
      }
    }
    return settled;
  }
}
