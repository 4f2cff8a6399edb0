package dev.ledger.diff;

import java.util.List;

/**
 * The canonical DDL of migration sets, for a snapshot file committed next to the migrations: each
 * set's catalog written as the script that makes it from nothing ({@link CatalogDiff}), objects
 * sorted by name, no OIDs, no server version. The same migrations give the same text on every run.
 */
public final class SchemaSnapshot {

  private SchemaSnapshot() {}

  /**
   * One migration set of the snapshot.
   *
   * @param title what the set is, e.g. {@code directory set (db/ledger/directory)}
   * @param applied the set as applied
   */
  public record Section(String title, ScratchPostgres.AppliedSet applied) {}

  /**
   * Renders the snapshot.
   *
   * @param header comment lines for the top of the file, without {@code --}
   * @param sections the sets, in the order they are written
   * @return the text, ending with one line break
   */
  public static String render(List<String> header, List<Section> sections) {
    StringBuilder text = new StringBuilder();
    header.forEach(line -> text.append(line.isEmpty() ? "--" : "-- " + line).append('\n'));
    for (Section section : sections) {
      String version = section.applied().version();
      text.append("\n-- ")
          .append(section.title())
          .append(", at version ")
          .append(version == null ? "none" : version)
          .append("\n");
      for (String statement :
          CatalogDiff.between(SchemaCatalog.empty(), section.applied().catalog()).script()) {
        text.append('\n').append(statement).append('\n');
      }
    }
    return text.toString();
  }
}
