package dev.ledger.testing;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * The external programs some tests run (PgBouncer, {@code psql}, {@code jq}, ...), found in one
 * place with one rule: on a machine without the program the test is <em>skipped</em> with one line
 * saying what to install (the README's commands pass with nothing but a JDK), unless the system
 * property {@value #REQUIRE_PROPERTY} names it, as CI's {@code .ci/run} does for every program it
 * installs; then a missing program <em>fails</em> the test, so CI never passes by skipping.
 *
 * <pre>{@code
 * Path bouncer = Tools.require(Tools.PGBOUNCER);   // skipped: pgbouncer is not installed (sudo apt-get install pgbouncer)
 * }</pre>
 *
 * <p>Stateless and thread-safe; it reads {@code PATH} and the property at each call.
 */
public final class Tools {

  /**
   * The system property naming, comma-separated, the programs whose absence fails a test instead of
   * skipping it, e.g. {@code -Dledger.test.require=pgbouncer,psql,createdb,dropdb,jq} ({@code all}
   * for every program). The build passes it to the test JVMs.
   */
  public static final String REQUIRE_PROPERTY = "ledger.test.require";

  /** Directories searched after {@code PATH}: PgBouncer installs into {@code /usr/sbin}. */
  private static final List<String> EXTRA_DIRECTORIES = List.of("/usr/sbin", "/usr/bin", "/sbin");

  /**
   * A program a test runs and the command that installs it.
   *
   * @param name the executable's file name, e.g. {@code pgbouncer}
   * @param install the command that installs it on Debian or Ubuntu, e.g. {@code sudo apt-get
   *     install pgbouncer}
   */
  public record Tool(String name, String install) {}

  /** PgBouncer, put in front of the test server by the pooler tests. */
  public static final Tool PGBOUNCER = new Tool("pgbouncer", "sudo apt-get install pgbouncer");

  /** {@code psql}, run by the docs' walk-throughs. */
  public static final Tool PSQL = new Tool("psql", "sudo apt-get install postgresql-client");

  /** {@code createdb}, run by the docs' walk-throughs. */
  public static final Tool CREATEDB =
      new Tool("createdb", "sudo apt-get install postgresql-client");

  /** {@code dropdb}, run by the docs' walk-throughs. */
  public static final Tool DROPDB = new Tool("dropdb", "sudo apt-get install postgresql-client");

  /** {@code jq}, run by the docs' walk-throughs. */
  public static final Tool JQ = new Tool("jq", "sudo apt-get install jq");

  /** Chromium, the headless browser the console's browser test drives. */
  public static final Tool CHROMIUM =
      new Tool("chromium", "sudo apt-get install chromium chromium-driver");

  /** chromedriver, through which Selenium WebDriver drives Chromium (never downloaded). */
  public static final Tool CHROMEDRIVER =
      new Tool("chromedriver", "sudo apt-get install chromium chromium-driver");

  /**
   * Citus, the PostgreSQL extension {@link CitusCluster} preloads into the machine's PostgreSQL 15;
   * found by its library, {@value #CITUS_LIBRARY}, not on {@code PATH} ({@link #requireFile}).
   */
  public static final Tool CITUS =
      new Tool(
          "citus",
          "run ../shared/tools/citus/install.sh as root; it installs Citus 13.2.2 into"
              + " /usr/lib/postgresql/15");

  /** The file whose presence says Citus is installed into the machine's PostgreSQL 15. */
  public static final String CITUS_LIBRARY = "/usr/lib/postgresql/15/lib/citus.so";

  private Tools() {}

  /**
   * A program found by a file of its own rather than on {@code PATH} (a PostgreSQL extension's
   * library), or the end of the test as {@link #require(Tool)}: skipped with {@code skipped: <name>
   * is not installed (<install>)}, or failed when {@value #REQUIRE_PROPERTY} names it.
   *
   * @param tool the program
   * @param file the file that exists when it is installed
   * @return {@code file}
   */
  public static Path requireFile(Tool tool, Path file) {
    return requireFile(tool, file, System.getProperty(REQUIRE_PROPERTY));
  }

  /**
   * {@link #requireFile(Tool, Path)} with a given property value, for tests of this class.
   *
   * @param tool the program
   * @param file the file that exists when it is installed
   * @param required the property's value, may be null
   * @return {@code file}
   */
  static Path requireFile(Tool tool, Path file, String required) {
    if (!Files.isRegularFile(file)) {
      end(tool.name() + " is not installed (" + tool.install() + ")", isRequired(tool, required));
    }
    return file;
  }

  /**
   * The program's path, or the end of the test: skipped ({@link
   * org.opentest4j.TestAbortedException}) with {@code skipped: <name> is not installed
   * (<install>)}, or failed ({@link org.opentest4j.AssertionFailedError}) when {@value
   * #REQUIRE_PROPERTY} names it.
   *
   * @param tool the program
   * @return its executable
   */
  public static Path require(Tool tool) {
    return require(tool, System.getenv("PATH"), System.getProperty(REQUIRE_PROPERTY));
  }

  /**
   * Every program's path, or the end of the test as {@link #require(Tool)} for the first missing
   * one (its line names all the missing ones).
   *
   * @param tools the programs
   */
  public static void requireAll(Tool... tools) {
    String path = System.getenv("PATH");
    String required = System.getProperty(REQUIRE_PROPERTY);
    List<Tool> missing = Arrays.stream(tools).filter(t -> find(t.name(), path) == null).toList();
    if (missing.isEmpty()) {
      return;
    }
    String names = missing.stream().map(Tool::name).collect(Collectors.joining(", "));
    String install =
        missing.stream().map(Tool::install).distinct().collect(Collectors.joining("; "));
    boolean any = missing.stream().anyMatch(t -> isRequired(t, required));
    end(names + (missing.size() == 1 ? " is" : " are") + " not installed (" + install + ")", any);
  }

  /**
   * {@link #require(Tool)} with a given {@code PATH} and property value, for tests of this class.
   *
   * @param tool the program
   * @param path the {@code PATH} to search, may be null
   * @param required the property's value, may be null
   * @return the executable
   */
  static Path require(Tool tool, String path, String required) {
    Path found = find(tool.name(), path);
    if (found == null) {
      end(tool.name() + " is not installed (" + tool.install() + ")", isRequired(tool, required));
    }
    return found;
  }

  /**
   * Whether {@value #REQUIRE_PROPERTY} names a program.
   *
   * @param tool the program
   * @param required the property's value, may be null or blank
   * @return true when it is named, or the value is {@code all}
   */
  static boolean isRequired(Tool tool, String required) {
    if (required == null || required.isBlank()) {
      return false;
    }
    Set<String> names = new LinkedHashSet<>();
    for (String n : required.split(",")) {
      names.add(n.strip().toLowerCase(Locale.ROOT));
    }
    return names.contains("all") || names.contains(tool.name().toLowerCase(Locale.ROOT));
  }

  private static void end(String what, boolean required) {
    if (required) {
      Assertions.fail(what + ", and -D" + REQUIRE_PROPERTY + " requires it");
    }
    Assumptions.abort("skipped: " + what);
  }

  /** The executable of that name in {@code PATH} or a system directory, or null. */
  private static Path find(String name, String path) {
    LinkedHashSet<String> directories = new LinkedHashSet<>();
    if (path != null) {
      directories.addAll(Arrays.asList(path.split(":")));
    }
    directories.addAll(EXTRA_DIRECTORIES);
    for (String dir : directories) {
      if (dir.isEmpty()) {
        continue;
      }
      Path p = Path.of(dir, name);
      if (Files.isRegularFile(p) && Files.isExecutable(p)) {
        return p;
      }
    }
    return null;
  }
}
