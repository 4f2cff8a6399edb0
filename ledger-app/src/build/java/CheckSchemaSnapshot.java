/*
 * Build-time program of the ledger-app module, launched as a single source file by
 * exec-maven-plugin in process-classes (see ledger-app/pom.xml), so it is never part of the jar. It
 * applies the ledger's two migration sets to an embedded PostgreSQL with schema-diff's own classes
 * (ScratchPostgres, the catalog reader), renders their canonical DDL (SchemaSnapshot) and compares
 * it with the committed migrations/schema.sql: a pull request that changes a migration therefore
 * shows the resulting schema inline, and a build whose snapshot is stale fails.
 *
 * Arguments: the migrations module directory; true to rewrite the snapshot instead of failing
 * (-Dledger.schema.update=true); where to write the fresh snapshot when it differs.
 */

import dev.ledger.diff.MigrationSource;
import dev.ledger.diff.SchemaDiffException;
import dev.ledger.diff.SchemaSnapshot;
import dev.ledger.diff.ScratchPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

public class CheckSchemaSnapshot {

  static final String REFRESH = "./mvnw -B -ntp verify -Dledger.schema.update=true";

  static final List<String> HEADER =
      List.of(
          "The schema the ledger's migrations make at their current version: canonical DDL read",
          "back from PostgreSQL after applying them (ledger-app schema-diff's catalog reader).",
          "Objects are sorted by name; names are unqualified, each set applies to its own schema.",
          "",
          "Written by the build; do not edit. The build fails when it is stale; refresh it with",
          "  " + REFRESH,
          "and commit it together with the migration.");

  public static void main(String[] args) throws Exception {
    Path module = Path.of(args[0]).toAbsolutePath().normalize();
    boolean update = Boolean.parseBoolean(args[1]);
    Path freshCopy = Path.of(args[2]).toAbsolutePath().normalize();
    Path snapshot = module.resolve("schema.sql");
    Path sets = module.resolve("src/main/resources/db/ledger");

    String fresh;
    try {
      fresh = render(sets);
    } catch (SchemaDiffException e) {
      System.err.println("schema snapshot: " + e.getMessage());
      System.exit(1);
      return;
    }

    String committed = Files.exists(snapshot) ? Files.readString(snapshot) : null;
    if (fresh.equals(committed)) {
      // current: nothing to say (a quiet build)
      return;
    }
    if (update) {
      Files.writeString(snapshot, fresh);
      System.out.println("schema snapshot: wrote migrations/schema.sql");
      return;
    }
    Files.createDirectories(freshCopy.getParent());
    Files.writeString(freshCopy, fresh);
    System.err.println(
        "schema snapshot: migrations/schema.sql "
            + (committed == null
                ? "is missing"
                : "is stale (" + firstDifference(committed, fresh) + ")")
            + ". Refresh it with `"
            + REFRESH
            + "` and commit it with the migration; the fresh snapshot is "
            + freshCopy);
    System.exit(1);
  }

  /** The canonical DDL of both sets, from an embedded PostgreSQL. */
  static String render(Path sets) {
    try (ScratchPostgres pg = ScratchPostgres.embedded();
        MigrationSource directory =
            MigrationSource.open("directory", sets.resolve("directory").toString());
        MigrationSource domain =
            MigrationSource.open("domain", sets.resolve("domain").toString())) {
      return SchemaSnapshot.render(
          HEADER,
          List.of(
              new SchemaSnapshot.Section(
                  "Directory set (db/ledger/directory), in the directory schema",
                  pg.apply(directory, "directory", Map.of())),
              new SchemaSnapshot.Section(
                  "Domain set (db/ledger/domain), in each domain schema",
                  pg.apply(domain, "domain", Map.of()))));
    }
  }

  static String firstDifference(String committed, String fresh) {
    List<String> a = committed.lines().toList();
    List<String> b = fresh.lines().toList();
    for (int i = 0; i < Math.max(a.size(), b.size()); i++) {
      String was = i < a.size() ? a.get(i) : "<end of file>";
      String now = i < b.size() ? b.get(i) : "<end of file>";
      if (!was.equals(now)) {
        return "line " + (i + 1) + " is `" + was + "`, the migrations make `" + now + "`";
      }
    }
    return "line endings differ";
  }
}
