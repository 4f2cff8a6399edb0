package dev.ledger.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.Tools;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The docs' command-line walk-throughs, run in bash line by line as written: the tour of {@code
 * docs/cli.md}, the fleet of {@code docs/fleet-and-tenants.md}, the adoption of a reference-stack
 * database in {@code docs/reference-compatibility.md} and the example of {@code
 * docs/schema-diff.md}. Each logical line must exit as its comment says ({@code # ... exit N}, else
 * 0), and what the page says a command prints is checked.
 *
 * <p>What is rewritten, and only that: {@code ledger-app} runs from the test's class path (the jar
 * is built after the tests; {@code LauncherIT} runs the jar and its launcher), lines that build
 * ({@code ./mvnw ...}) are skipped (this build is that), the server {@code 127.0.0.1:5432} is the
 * test server, each database a page makes with {@code createdb} gets a unique suffix (other builds
 * may share the server), and {@code /tmp/} is a temporary directory of the test. The prerequisites
 * the pages state ({@code psql}, {@code createdb}, {@code dropdb}, {@code jq}) must be installed
 * (without them the class is skipped with the line that installs them, or fails where {@code
 * -Dledger.test.require} names them, as CI does: {@link Tools}); on a test server that needs a
 * password (Testcontainers) the walk-throughs are skipped, as the pages assume trust
 * authentication.
 */
// slow (a JVM per command): run on purpose, -Dledger.test.groups=slow
@Tag("slow")
class DocsWalkThroughTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final Path ROOT = DocsTest.ROOT;
  private static final Pattern HOST_PORT = Pattern.compile("jdbc:postgresql://([^:/]+):(\\d+)/");
  private static final Pattern EXPECTED_EXIT = Pattern.compile("#.*?\\bexit (\\d+)");
  private static final Pattern CREATEDB = Pattern.compile("\\bcreatedb (\\w+)");
  private static final Pattern PROGRESS =
      Pattern.compile("(?m)^ledger-app [a-z -]+: [^\\n]*\\(\\d+ s\\)\\n");

  @TempDir Path temp;

  private static String host;
  private static String port;

  @BeforeAll
  static void server() {
    // the pages' own commands: skipped without them, failed where CI requires them
    Tools.requireAll(Tools.PSQL, Tools.CREATEDB, Tools.DROPDB, Tools.JQ);
    String url = PG.jdbcUrl();
    assumeThat(url).as("the walk-throughs assume trust authentication").doesNotContain("password=");
    Matcher m = HOST_PORT.matcher(url);
    assertThat(m.find()).as(url).isTrue();
    host = m.group(1);
    port = m.group(2);
  }

  /** One logical line of a walk-through: what ran, how it should exit and how it did. */
  record Step(String line, int expected, int exit, String output) {}

  @Test
  void the_cli_tour_runs_as_written() throws Exception {
    List<Step> steps = walk(block("docs/cli.md", "ledger() {"));
    assertThat(output(steps, "--handoff 'reconciled")).startsWith(idOf(steps) + " ");
    assertThat(output(steps, "task complete --lease \"$lease\"      #"))
        .startsWith("error: cannot complete task '" + idOf(steps) + "': ");
    assertThat(output(steps, "ledger task show \"$id\""))
        .containsPattern("(?m)^status +completed$")
        .contains("completed")
        .contains("claimed");
    assertThat(output(steps, "ledger task list --domain payments --status completed"))
        .contains(idOf(steps));
    assertThat(output(steps, "ledger domains")).contains("payments").endsWith("1 domain(s)\n");
    assertThat(output(steps, "ledger promote --domain docs")).isEqualTo("recorded\n");
    assertThat(output(steps, "ledger promotions --domain docs"))
        .contains("reviewed by dan  d17512da")
        .contains("  why checked against the incident log")
        .endsWith("1 promotion(s)\n");
    assertThat(output(steps, "ledger scrub --domain docs"))
        .isEqualTo("scrubbed 1 promotion(s) and 0 task(s)\n");
    assertThat(output(steps, "ledger replay")).containsPattern("^replayed \\d+ event\\(s\\) in ");
  }

  @Test
  void the_fleet_walk_through_runs_as_written() throws Exception {
    List<Step> steps = walk(block("docs/fleet-and-tenants.md", "ledger() {"));
    assertThat(output(steps, "ledger fleet register --tenant a"))
        .contains("registered tenant a (provisioning)")
        .contains("made a new tenant registry");
    assertThat(output(steps, "ledger fleet plan")).contains("2 tenants: 0 active");
    assertThat(output(steps, "ledger fleet migrate"))
        .contains("\"exitCode\":0")
        .contains("\"active\":2");
    String list = output(steps, "ledger fleet list");
    assertThat(list.lines().filter(l -> l.matches("[ab] +active .*"))).hasSize(2);
    assertThat(list).endsWith("2 tenants\n");
  }

  @Test
  void the_reference_adoption_walk_through_runs_and_prints_what_the_page_shows() throws Exception {
    String page = Files.readString(ROOT.resolve("docs/reference-compatibility.md"));
    List<String> blocks = DocsTest.blocks(ROOT.resolve("docs/reference-compatibility.md"), "bash");
    String first = blocks.stream().filter(b -> b.contains("createdb demo")).findFirst().get();
    String then = blocks.stream().filter(b -> b.contains("dropdb demo")).findFirst().get();
    List<Step> steps = walk(first + then);
    String shown = shownAfter(page, "`migrate` makes them, moves the data and prints:");
    List<String> expected = shown.lines().toList();
    List<String> printed =
        output(steps, "java -jar ledger-app/target/ledger-app.jar migrate").lines().toList();
    // every line but the last (its times and catalog query counts vary) exactly as shown
    assertThat(printed.subList(1, expected.size() - 1))
        .isEqualTo(expected.subList(1, expected.size() - 1));
    assertThat(printed.get(0)).startsWith("migrate ").endsWith("(directory schema public)");
    String summary = expected.get(expected.size() - 1);
    assertThat(printed.get(printed.size() - 1))
        .startsWith(summary.substring(0, summary.indexOf(" migrations applied")));
    assertThat(output(steps, "psql -d demo -c")).contains("360");
  }

  @Test
  void the_schema_diff_example_prints_what_the_page_shows() throws Exception {
    String page = Files.readString(ROOT.resolve("docs/schema-diff.md"));
    List<Step> steps =
        walk(block("docs/schema-diff.md", "./mvnw -B -ntp -q package -pl ledger-app"));
    String shown = shownAfter(page, "prints (exit code 0: nothing destructive):");
    assertThat(output(steps, "schema-diff --base /tmp/ledger-v2").strip())
        .isEqualTo(shown.strip().replace("/tmp/", temp + "/"));
  }

  /** The task the tour filed (its id went into a shell variable), as {@code task show} names it. */
  private static String idOf(List<Step> steps) {
    Matcher id = Pattern.compile("(?m)^id +(t\\S+)$").matcher(output(steps, "task show \"$id\""));
    assertThat(id.find()).isTrue();
    return id.group(1);
  }

  /** The text of the fenced block that follows a sentence of a page. */
  private static String shownAfter(String page, String sentence) {
    int at = page.indexOf(sentence);
    assertThat(at).as("the page still says: " + sentence).isNotNegative();
    Matcher m = Pattern.compile("(?ms)^(`{3,4})\\w*\\n(.*?)^\\1\\n").matcher(page);
    assertThat(m.find(at)).isTrue();
    return m.group(2);
  }

  private static String block(String page, String start) throws Exception {
    return DocsTest.blocks(ROOT.resolve(page), "bash").stream()
        .filter(b -> b.startsWith(start))
        .findFirst()
        .orElseThrow(() -> new AssertionError(page + ": no bash block starting " + start));
  }

  /**
   * The output of the first step whose line contains a text, without the migration commands'
   * progress lines (stderr, after 2 s: how many depends on the machine's load).
   */
  private static String output(List<Step> steps, String text) {
    Step found =
        steps.stream()
            .filter(s -> s.line().contains(text))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no step contains " + text));
    return found.output().replaceAll(PROGRESS.pattern(), "");
  }

  /**
   * Runs a walk-through in one bash, each logical line (continuations joined) followed by its exit
   * status, and checks every status against the line's comment.
   */
  private List<Step> walk(String block) throws Exception {
    String suffix = "_" + UUID.randomUUID().toString().substring(0, 8);
    Map<String, String> databases = new LinkedHashMap<>();
    Matcher created = CREATEDB.matcher(block);
    while (created.find()) {
      databases.put(created.group(1), created.group(1) + suffix);
    }
    List<String> lines = new ArrayList<>();
    StringBuilder pending = new StringBuilder();
    for (String raw : block.lines().toList()) {
      if (raw.endsWith("\\")) {
        pending.append(raw, 0, raw.length() - 1).append(' ');
        continue;
      }
      String line = pending.append(raw).toString();
      pending.setLength(0);
      if (!line.isBlank()) {
        lines.add(line);
      }
    }
    // the launcher's flags for short commands: much less CPU than a default JVM start
    String app =
        "java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC "
            + DocsTest.logConfig()
            + " -cp \"$LEDGER_TEST_CP\" dev.ledger.app.Main";
    StringBuilder script = new StringBuilder("exec 2>&1\n");
    List<String> ran = new ArrayList<>();
    for (String line : lines) {
      if (line.startsWith("./mvnw ")) {
        continue; // the build that runs this test
      }
      // the page's words first, the app's command line last: its paths (the checkout's, which
      // may lie under /tmp) must not be rewritten as the page's /tmp/ files or database names
      String run =
          line.replace("127.0.0.1:5432", host + ":" + port)
              .replace("PGHOST=127.0.0.1", "PGHOST=" + host + " PGPORT=" + port)
              .replace("/tmp/", temp + "/");
      for (Map.Entry<String, String> d : databases.entrySet()) {
        run = run.replaceAll("(?<![\\w-])" + d.getKey() + "(?![\\w-])", d.getValue());
      }
      if (run.startsWith("ledger() {")) {
        run = "ledger() { " + app + " \"$@\"; }";
      }
      run = run.replace("java -jar ledger-app/target/ledger-app.jar", app);
      int step = ran.size();
      ran.add(line);
      script.append("echo '@@step ").append(step).append("'\n");
      script.append(run).append('\n');
      script.append("echo \"@@exit ").append(step).append(" $?\"\n");
    }
    Path file = temp.resolve("walk.sh");
    Files.writeString(file, script.toString());
    ProcessBuilder pb =
        new ProcessBuilder("bash", file.toString())
            .directory(ROOT.toFile())
            .redirectErrorStream(true);
    pb.environment().put("LEDGER_TEST_CP", DocsTest.classpath());
    pb.environment().remove("LEDGER_URL");
    pb.environment().remove("LEDGER_CONTROL_URL");
    pb.environment().put("LEDGER_HOME", temp.resolve("home").toString());
    pb.environment()
        .put("PATH", Path.of(System.getProperty("java.home"), "bin") + ":" + System.getenv("PATH"));
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(10, TimeUnit.MINUTES)).isTrue();
    try {
      List<Step> steps = new ArrayList<>();
      for (int i = 0; i < ran.size(); i++) {
        int from = out.indexOf("@@step " + i + "\n");
        Matcher exit = Pattern.compile("@@exit " + i + " (\\d+)\n").matcher(out);
        assertThat(from).as("step %d ran:%n%s", i, out).isNotNegative();
        assertThat(exit.find(from)).as("step %d finished:%n%s", i, out).isTrue();
        String line = ran.get(i);
        Matcher comment = EXPECTED_EXIT.matcher(line);
        int expected = comment.find() ? Integer.parseInt(comment.group(1)) : 0;
        Step s =
            new Step(
                line,
                expected,
                Integer.parseInt(exit.group(1)),
                out.substring(from + ("@@step " + i + "\n").length(), exit.start()));
        assertThat(s.exit()).as("%s%n%s", line, s.output()).isEqualTo(expected);
        steps.add(s);
      }
      return steps;
    } finally {
      for (String db : databases.values()) {
        PostgresExtension.dropDatabase(db); // left behind when a step failed before dropdb
      }
    }
  }
}
