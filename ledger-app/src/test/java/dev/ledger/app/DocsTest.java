package dev.ledger.app;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.testing.PostgresExtension;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README as a newcomer follows it: its Java program compiles against the library and, run as
 * its own process with {@code LEDGER_URL} set, files, claims and completes a task; its command-line
 * taste runs in bash, line by line as written, and ends with the task completed. Every complete
 * Java compilation unit in {@code docs/} compiles too. The docs' walk-throughs run in {@link
 * DocsWalkThroughTest}.
 */
class DocsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  static final Path ROOT = Path.of("").toAbsolutePath().getParent();
  static final Pattern FENCE = Pattern.compile("(?ms)^```(\\w+)\\n(.*?)^```\\n");

  @TempDir Path temp;

  static List<String> blocks(Path markdown, String language) throws IOException {
    List<String> out = new ArrayList<>();
    Matcher m = FENCE.matcher(Files.readString(markdown));
    while (m.find()) {
      if (m.group(1).equals(language)) {
        out.add(m.group(2));
      }
    }
    return out;
  }

  static String classpath() {
    return System.getProperty("java.class.path");
  }

  /** The app's own log configuration, not the tests' (which logs at INFO on stdout). */
  static String logConfig() {
    return "-Dlogback.configurationFile="
        + ROOT.resolve("ledger-app/src/main/resources/logback.xml");
  }

  static Path compile(Path dir, String name, String source) throws IOException {
    Path src = dir.resolve("src").resolve(name + ".java");
    Files.createDirectories(src.getParent());
    Files.writeString(src, source);
    Path classes = dir.resolve("classes");
    Files.createDirectories(classes);
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    java.io.StringWriter diagnostics = new java.io.StringWriter();
    boolean ok =
        javac
            .getTask(
                diagnostics,
                null,
                null,
                List.of("-classpath", classpath(), "-d", classes.toString(), "-Xlint:none"),
                null,
                javac
                    .getStandardFileManager(null, null, StandardCharsets.UTF_8)
                    .getJavaFileObjects(src.toFile()))
            .call();
    assertThat(ok).as(name + " compiles:\n" + diagnostics).isTrue();
    return classes;
  }

  record Run(int exit, String out) {}

  static Run run(List<String> command, Path dir) throws Exception {
    ProcessBuilder pb =
        new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
    pb.environment().put("LEDGER_URL", PG.jdbcUrl());
    pb.environment().remove("LEDGER_HOME");
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(5, TimeUnit.MINUTES)).isTrue();
    return new Run(p.exitValue(), out);
  }

  @Test
  void the_readme_program_files_claims_and_completes_a_task() throws Exception {
    List<String> java = blocks(ROOT.resolve("README.md"), "java");
    assertThat(java).hasSize(2);
    String program = java.get(0);
    assertThat(program).contains("public class FirstTask");
    Path classes = compile(temp, "FirstTask", program);
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Run r =
        run(List.of(javaBin, "-cp", classes + File.pathSeparator + classpath(), "FirstTask"), temp);
    assertThat(r.exit()).as(r.out()).isZero();
    List<String> printed = r.out().strip().lines().toList();
    assertThat(printed.get(printed.size() - 1)).matches("t[0-9a-f]+-[0-9a-f]+ is completed");
  }

  /**
   * The README's worker-pool fragment, put into a program that files an admitted task for it: the
   * pool as written (its shutdown hook included) completes the task with the handler's handoff.
   */
  @Test
  void the_readme_worker_pool_completes_a_task() throws Exception {
    String fragment = blocks(ROOT.resolve("README.md"), "java").get(1);
    assertThat(fragment).startsWith("WorkerPool pool =");
    String program =
        """
        import com.zaxxer.hikari.HikariDataSource;
        import dev.ledger.Label;
        import dev.ledger.Ledger;
        import dev.ledger.LedgerConfig;
        import dev.ledger.Status;
        import dev.ledger.TaskSpec;
        import dev.ledger.worker.Outcome;
        import dev.ledger.worker.WorkerPool;
        import java.util.List;

        public class ReadmeWorker {
          public static void main(String[] args) throws Exception {
            HikariDataSource dataSource = new HikariDataSource();
            dataSource.setJdbcUrl(System.getenv("LEDGER_URL"));
            dataSource.setMaximumPoolSize(11);
            Ledger ledger = Ledger.open(dataSource, LedgerConfig.builder().runtimeDdl(true).build());
            String id =
                ledger.fileAndAdmit(
                    TaskSpec.builder("payments", "batch 7")
                        .requirements(List.of("sql"))
                        .classification(Label.INTERNAL) // as the README's own task
                        .build());
        %s
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (ledger.get(id).status() != Status.COMPLETED && System.nanoTime() < deadline) {
              Thread.sleep(20);
            }
            System.out.println(ledger.get(id).status().wire() + ": " + ledger.get(id).handoff());
            pool.close(); // the hook closes it again at exit: a no-op
            dataSource.close();
          }
        }
        """
            .formatted(fragment.indent(4));
    Path classes = compile(temp, "ReadmeWorker", program);
    String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Run r =
        run(
            List.of(javaBin, "-cp", classes + File.pathSeparator + classpath(), "ReadmeWorker"),
            temp);
    assertThat(r.exit()).as(r.out()).isZero();
    assertThat(r.out().lines()).contains("completed: reconciled batch 7");
  }

  // slow (a JVM per command): run on purpose, -Dledger.test.groups=slow
  @Tag("slow")
  @Test
  void the_readme_command_line_taste_runs_as_written() throws Exception {
    String taste =
        blocks(ROOT.resolve("README.md"), "bash").stream()
            .filter(b -> b.startsWith("ledger() {"))
            .findFirst()
            .orElseThrow();
    List<String> lines = new ArrayList<>(taste.lines().toList());
    // the README's ledger() runs the built jar; the test phase has the classes instead
    lines.set(
        0,
        "ledger() { java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC " // the launcher's quick flags
            + logConfig()
            + " -cp \"$LEDGER_TEST_CP\" dev.ledger.app.Main \"$@\"; }");
    String script = "set -eu\n" + String.join("\n", lines) + "\n";
    Path file = temp.resolve("taste.sh");
    Files.writeString(file, script);
    ProcessBuilder pb =
        new ProcessBuilder("bash", file.toString())
            .directory(ROOT.toFile())
            .redirectErrorStream(true);
    pb.environment().put("LEDGER_URL", PG.jdbcUrl());
    pb.environment().put("LEDGER_TEST_CP", classpath());
    pb.environment()
        .put("PATH", Path.of(System.getProperty("java.home"), "bin") + ":" + System.getenv("PATH"));
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(10, TimeUnit.MINUTES)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    assertThat(out)
        .contains(" completed\n")
        .containsPattern("(?m)^status +completed$")
        .contains("projection identical to the live one");
  }

  @Test
  void every_complete_java_file_in_the_docs_compiles() throws Exception {
    List<Path> pages;
    try (Stream<Path> s = Files.list(ROOT.resolve("docs"))) {
      pages = s.filter(p -> p.toString().endsWith(".md")).sorted().toList();
    }
    int n = 0;
    for (Path page : pages) {
      for (String block : blocks(page, "java")) {
        Matcher name = Pattern.compile("(?m)^public (?:final )?class (\\w+)").matcher(block);
        boolean unit = block.contains("\nimport ") || block.startsWith("import ");
        if (!unit
            || !name.find()
            || !block.contains("dev.ledger")
            || block.contains("springframework")) {
          continue; // a fragment, or a Spring file (compiled by the starter's own tests)
        }
        compile(temp.resolve("doc" + n++), name.group(1), block);
      }
    }
    assertThat(pages).isNotEmpty();
  }
}
