package dev.ledger.app.task;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.app.ExitCodes;
import dev.ledger.app.Main;
import dev.ledger.testing.PostgresExtension;
import java.io.ByteArrayInputStream;
import java.io.File;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * What a task command takes in and prints back, against real PostgreSQL: stored control characters
 * and terminal escapes are escaped in text output, invalid UTF-8 in an argument is refused (in a
 * real process, raw bytes), a new domain is announced on stderr, and a body comes from a file or
 * stdin.
 */
class TaskInputTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final ObjectMapper JSON = new ObjectMapper();

  record Run(int exit, String out, String err) {}

  private static Run run(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.add("--url");
    all.add(PG.jdbcUrl());
    CommandLine cli = Main.commandLine();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cli.setOut(new PrintWriter(out));
    cli.setErr(new PrintWriter(err));
    int exit = cli.execute(all.toArray(String[]::new));
    return new Run(exit, out.toString(), err.toString());
  }

  @Test
  void control_characters_and_terminal_escapes_in_a_title_are_escaped_in_text_not_in_json()
      throws Exception {
    String title = "ok\u001b[31mred\u0007 \u009b2J \u202eevil\u007f";
    Run filed = run("task", "file", "--domain", "esc", "--title", title, "--body", "b\u001b]0;x");
    assertThat(filed.exit()).as(filed.err()).isZero();
    String id = filed.out().strip();
    String escaped = "ok\\x1b[31mred\\x07 \\x9b2J \\u202eevil\\x7f";

    Run list = run("task", "list", "--domain", "esc");
    // the list cuts the title to its column, escapes counted and never split
    assertThat(list.out())
        .contains(" ok\\x1b[31mred\\x07 …\n")
        .doesNotContain("\u001b")
        .doesNotContain("\u0007");
    Run show = run("task", "show", id);
    assertThat(show.out())
        .contains("title     " + escaped + "\n")
        .contains("body      b\\x1b]0;x\n")
        .doesNotContain("\u001b")
        .doesNotContain("\u202e")
        .doesNotContain("\u009b");

    // JSON escapes by itself, and the value read back is the stored one
    Run json = run("task", "show", id, "--json");
    assertThat(json.out()).doesNotContain("\u001b").contains("\\u001B[31m");
    JsonNode doc = JSON.readTree(json.out());
    assertThat(doc.findValue("title").asText()).isEqualTo(title);
  }

  @Test
  void filing_into_a_new_domain_says_so_on_stderr_and_in_json_only_as_a_field() throws Exception {
    Run first = run("task", "file", "--domain", "brand-new", "--title", "t1");
    assertThat(first.exit()).as(first.err()).isZero();
    assertThat(first.out()).matches("t[0-9a-f]+-[0-9a-f]+\n");
    assertThat(first.err())
        .isEqualTo(
            "new domain brand-new: created its schema (a misspelt --domain makes one too; see"
                + " 'ledger-app domains')\n");
    Run second = run("task", "file", "--domain", "brand-new", "--title", "t2");
    assertThat(second.err()).isEmpty();

    Run json = run("task", "file", "--domain", "brand-new-json", "--title", "t1", "--json");
    assertThat(json.exit()).isZero();
    assertThat(JSON.readTree(json.out()).get("new_domain").asBoolean()).isTrue();
    assertThat(json.out()).hasLineCount(1).doesNotContain("created its schema");
    assertThat(json.err()).startsWith("new domain brand-new-json: created its schema");
    Run again = run("task", "file", "--domain", "brand-new-json", "--title", "t2", "--json");
    assertThat(JSON.readTree(again.out()).get("new_domain").asBoolean()).isFalse();
    assertThat(again.err()).isEmpty();
  }

  @Test
  void a_body_longer_than_an_argument_may_be_comes_from_a_file_or_stdin(@TempDir Path dir)
      throws Exception {
    // 100,000 two-byte characters: 200,000 bytes, more than one argument may hold (128 KiB)
    String body = "é".repeat(100_000);
    Path file = dir.resolve("body.txt");
    Files.writeString(file, body, StandardCharsets.UTF_8);
    Run filed =
        run("task", "file", "--domain", "bodies", "--title", "t", "--body-file", file.toString());
    assertThat(filed.exit()).as(filed.err()).isZero();
    Run shown = run("task", "show", filed.out().strip(), "--json");
    assertThat(JSON.readTree(shown.out()).findValue("body").asText()).isEqualTo(body);

    InputStream stdin = System.in;
    try {
      System.setIn(new ByteArrayInputStream("from stdin\nline 2".getBytes(StandardCharsets.UTF_8)));
      Run piped = run("task", "file", "--domain", "bodies", "--title", "t", "--body-file", "-");
      assertThat(piped.exit()).as(piped.err()).isZero();
      Run pipedShown = run("task", "show", piped.out().strip(), "--json");
      assertThat(JSON.readTree(pipedShown.out()).findValue("body").asText())
          .isEqualTo("from stdin\nline 2");
    } finally {
      System.setIn(stdin);
    }
  }

  @Test
  void body_file_refuses_body_too_an_unreadable_file_and_invalid_utf8_naming_the_option(
      @TempDir Path dir) throws Exception {
    Path latin1 = dir.resolve("latin1.txt");
    Files.write(latin1, new byte[] {'c', 'a', 'f', (byte) 0xe9});
    Path missing = dir.resolve("missing.txt");
    Run both =
        run(
            "task",
            "file",
            "--domain",
            "bodies2",
            "--title",
            "t",
            "--body",
            "x",
            "--body-file",
            latin1.toString());
    Run unreadable =
        run(
            "task",
            "file",
            "--domain",
            "bodies2",
            "--title",
            "t",
            "--body-file",
            missing.toString());
    Run invalid =
        run(
            "task",
            "file",
            "--domain",
            "bodies2",
            "--title",
            "t",
            "--body-file",
            latin1.toString());
    Run json =
        run(
            "task",
            "file",
            "--domain",
            "bodies2",
            "--title",
            "t",
            "--body-file",
            latin1.toString(),
            "--json");
    assertThat(List.of(both.exit(), unreadable.exit(), invalid.exit(), json.exit()))
        .containsOnly(ExitCodes.USAGE);
    String help = " (see 'ledger-app task file --help')\n";
    assertThat(both.err())
        .isEqualTo("error: --body and --body-file exclude each other: give one of them" + help);
    assertThat(unreadable.err())
        .isEqualTo("error: --body-file: cannot read " + missing + ": no such file" + help);
    assertThat(invalid.err())
        .isEqualTo(
            "error: --body-file: "
                + latin1
                + " is not valid UTF-8 text; convert it first (e.g. iconv)"
                + help);
    assertThat(JSON.readTree(json.out()).get("error").asText())
        .startsWith("--body-file: " + latin1 + " is not valid UTF-8 text");
    // nothing was filed, and the domain was not made
    assertThat(run("domains").out()).doesNotContain("bodies2");
  }

  @Test
  void invalid_utf8_bytes_in_an_argument_are_refused_naming_the_option(@TempDir Path dir)
      throws Exception {
    String classpath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    // bash's printf puts the raw byte 0xff (never valid UTF-8) into the argument
    for (String option : List.of("--title", "--body")) {
      String script =
          "exec \"$JAVA\" -cp \"$CP\" -Dlogback.configurationFile=logback.xml dev.ledger.app.Main"
              + " task file --domain utf8 --url \"$URL\" "
              + (option.equals("--body") ? "--title t " : "")
              + option
              + " \"caf$(printf '\\xff')\"";
      ProcessBuilder pb = new ProcessBuilder("bash", "-c", script);
      pb.environment().put("JAVA", java);
      pb.environment().put("CP", classpath);
      pb.environment().put("URL", PG.jdbcUrl());
      pb.environment().put("LC_ALL", "C.UTF-8");
      pb.environment().remove("LEDGER_URL");
      pb.directory(new File(System.getProperty("user.dir")));
      pb.redirectOutput(dir.resolve("out").toFile()).redirectError(dir.resolve("err").toFile());
      Process p = pb.start();
      assertThat(p.waitFor(2, TimeUnit.MINUTES)).isTrue();
      String err = Files.readString(dir.resolve("err"), StandardCharsets.UTF_8);
      assertThat(p.exitValue()).as(err).isEqualTo(ExitCodes.USAGE);
      assertThat(Files.readString(dir.resolve("out"))).isEmpty();
      assertThat(err)
          .isEqualTo(
              "error: "
                  + option
                  + ": not valid UTF-8 text: the shell passed bytes that are no character in the"
                  + " locale's encoding; give the value as UTF-8 text (see 'ledger-app task file"
                  + " --help')\n");
    }
    assertThat(run("domains").out()).doesNotContain("utf8");
  }
}
