package dev.ledger.app;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.testing.PostgresExtension;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ledger-app/bin/ledger-app}, the launcher with class-data sharing, over the runnable jar
 * the build just packaged (failsafe, after {@code package}): its first run writes the archive, the
 * next ones map it ({@code -Xshare:on} makes a run that cannot fail), and the output and exit codes
 * are those of {@code java -jar}, with nothing of the JVM's on stdout.
 */
// slow (a JVM per command): run on purpose, -Dledger.test.groups=slow
@Tag("slow")
class LauncherIT {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final Path MODULE = Path.of("").toAbsolutePath();
  private static final Path LAUNCHER = MODULE.resolve("bin/ledger-app");
  private static final Path JAR = MODULE.resolve("target/ledger-app.jar");
  private static final Path SHORT = MODULE.resolve("target/ledger-app-short.jsa");
  private static final Path LONG = MODULE.resolve("target/ledger-app-long.jsa");
  private static final String JAVA =
      Path.of(System.getProperty("java.home"), "bin", "java").toString();

  record Run(int exit, String out, String err) {}

  private static Run run(List<String> command, Map<String, String> env, Path dir)
      throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile());
    pb.environment().remove("LEDGER_URL");
    pb.environment().remove("LEDGER_APP_JAVA_OPTS");
    pb.environment().put("JAVA", JAVA);
    pb.environment().putAll(env);
    Path out = Files.createTempFile("launcher", ".out");
    Path err = Files.createTempFile("launcher", ".err");
    try {
      pb.redirectOutput(out.toFile()).redirectError(err.toFile());
      Process p = pb.start();
      assertThat(p.waitFor(3, TimeUnit.MINUTES)).as("%s finished", command).isTrue();
      return new Run(
          p.exitValue(),
          Files.readString(out, StandardCharsets.UTF_8),
          Files.readString(err, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }

  private static Run launcher(Map<String, String> env, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(LAUNCHER.toString()));
    command.addAll(List.of(args));
    return run(command, env, MODULE);
  }

  private static Run jar(String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(JAVA, "-jar", JAR.toString()));
    command.addAll(List.of(args));
    return run(command, Map.of(), MODULE);
  }

  @Test
  void each_kind_of_command_writes_its_own_archive_on_its_first_run_and_later_runs_map_it()
      throws Exception {
    assertThat(JAR).as("packaged before the integration tests").exists();
    Files.deleteIfExists(SHORT);
    Files.deleteIfExists(LONG);
    String version = "ledger-app " + System.getProperty("project.version") + "\n";

    // --version first must not leave an archive of its few classes for the task commands to map
    Run first = launcher(Map.of(), "--version");
    assertThat(first.exit()).as(first.err()).isZero();
    assertThat(first.out()).isEqualTo(version);
    assertThat(first.err()).isEmpty();
    assertThat(SHORT).as("--version writes no archive").doesNotExist();
    assertThat(LONG).doesNotExist();

    // nor does a subcommand's help, a usage error or a failed command: only a run that did a
    // command's work, or every later run would map the few classes these load
    String url = PG.jdbcUrl();
    assertThat(launcher(Map.of(), "task", "file", "--help").exit()).isZero();
    assertThat(launcher(Map.of(), "task", "fiel").exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(launcher(Map.of(), "status", "--help").exit()).isZero();
    assertThat(launcher(Map.of(), "task", "admit", "t-none", "--url", url).exit())
        .isEqualTo(ExitCodes.FAILED);
    assertThat(SHORT).doesNotExist();
    assertThat(LONG).doesNotExist();
    assertThat(MODULE.resolve("target").toFile().list((d, n) -> n.contains(".jsa."))).isEmpty();

    Run filed =
        launcher(Map.of(), "task", "file", "--domain", "launcher", "--title", "T1", "--url", url);
    assertThat(filed.exit()).as(filed.err()).isZero();
    // the one line a first filing into a new domain prints, nothing else (no JVM warning)
    assertThat(filed.err()).startsWith("new domain launcher: created its schema").hasLineCount(1);
    assertThat(filed.out()).matches("t[0-9a-f]+-[0-9a-f]+\n");
    String id = filed.out().strip();
    assertThat(SHORT).as("written by the first task command").exists();
    assertThat(Files.getLastModifiedTime(SHORT)).isGreaterThan(Files.getLastModifiedTime(JAR));
    assertThat(LONG).doesNotExist();

    Map<String, String> mapped = Map.of("LEDGER_APP_JAVA_OPTS", "-Xshare:on");
    Run shown = launcher(mapped, "task", "show", id, "--url", url);
    assertThat(shown.exit())
        .as("-Xshare:on: the archive maps, or the JVM does not start: %s", shown.err())
        .isZero();
    assertThat(shown.out()).isEqualTo(jar("task", "show", id, "--url", url).out());
    assertThat(shown.out()).containsPattern("(?m)^status +proposed$");

    Run again = launcher(mapped, "--version");
    assertThat(again.exit()).as(again.err()).isZero();
    assertThat(again.out()).isEqualTo(version);

    Run refused = launcher(mapped, "task", "admit", "t-none", "--url", url);
    Run refusedByJar = jar("task", "admit", "t-none", "--url", url);
    assertThat(refused.exit()).isEqualTo(ExitCodes.FAILED).isEqualTo(refusedByJar.exit());
    assertThat(refused.out()).isEmpty();
    assertThat(refused.err()).isEqualTo(refusedByJar.err()).startsWith("error: ");

    FileTime shortWritten = Files.getLastModifiedTime(SHORT);
    Run status = launcher(Map.of(), "status", "--url", url);
    assertThat(status.exit()).as(status.err()).isZero();
    assertThat(LONG).as("written by the first long command").exists();
    assertThat(Files.getLastModifiedTime(SHORT)).isEqualTo(shortWritten);
    Run statusMapped = launcher(mapped, "status", "--url", url);
    assertThat(statusMapped.exit()).as(statusMapped.err()).isZero();
    // the same report but for its last field, the run's duration
    assertThat(statusMapped.out().replaceAll("\\| [0-9.]+ s\n$", ""))
        .isEqualTo(status.out().replaceAll("\\| [0-9.]+ s\n$", ""))
        .contains("2 schemas: 2 current");
  }

  @Test
  void a_bad_or_empty_ledger_url_is_named_as_the_variable_and_never_runs_on_the_embedded_default(
      @TempDir Path home) throws Exception {
    Run bad =
        launcher(Map.of("LEDGER_URL", "mysql://x", "LEDGER_HOME", home.toString()), "domains");
    assertThat(bad.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(bad.out()).isEmpty();
    assertThat(bad.err()).startsWith("error: LEDGER_URL: ").doesNotContain("--url");
    Run empty = launcher(Map.of("LEDGER_URL", "", "LEDGER_HOME", home.toString()), "domains");
    assertThat(empty.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(empty.err())
        .isEqualTo(
            "error: LEDGER_URL: is set but empty; give a PostgreSQL JDBC URL, or unset it for the"
                + " embedded default\n");
    assertThat(home).isEmptyDirectory();
  }

  @Test
  void without_the_jar_it_says_how_to_build_it_and_exits_2(@TempDir Path dir) throws Exception {
    Path bin = Files.createDirectories(dir.resolve("bin"));
    Path copy = Files.copy(LAUNCHER, bin.resolve("ledger-app"));
    Run r = run(List.of(copy.toString(), "--version"), Map.of(), dir);
    assertThat(r.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(r.out()).isEmpty();
    assertThat(r.err())
        .startsWith("ledger-app: ")
        .endsWith(
            "target/ledger-app.jar not found; build it first: ./mvnw -B -ntp -q package"
                + " -DskipTests\n");
  }
}
