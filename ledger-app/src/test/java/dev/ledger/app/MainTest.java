package dev.ledger.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class MainTest {

  @Test
  void help_lists_the_command_and_exits_zero() {
    CommandLine cli = Main.commandLine();
    StringWriter out = new StringWriter();
    cli.setOut(new PrintWriter(out));
    assertThat(cli.execute("--help")).isZero();
    assertThat(out.toString()).contains("ledger-app").contains("Usage:");
  }

  @Test
  void an_unknown_option_is_a_usage_error() {
    CommandLine cli = Main.commandLine();
    StringWriter err = new StringWriter();
    cli.setErr(new PrintWriter(err));
    assertThat(cli.execute("--no-such-option")).isEqualTo(ExitCodes.USAGE);
    assertThat(err.toString()).contains("--no-such-option");
  }

  @Test
  void the_command_line_built_for_one_subcommand_answers_as_the_whole_tree_does() {
    // main() builds only the subcommand the arguments name; help, usage errors, suggestions and
    // JSON error documents must not tell the difference
    List<String[]> cases =
        List.of(
            new String[] {"task", "--help"},
            new String[] {"task", "file", "--help"},
            new String[] {"task", "file", "--domian", "d", "--title", "t"},
            new String[] {"task", "fiel"},
            new String[] {"task", "lsit", "--json"},
            new String[] {"task", "show"},
            new String[] {"task", "claim", "--domain", "d", "--holder", "h", "--lease", "-5m"},
            new String[] {"migrate", "--bogus"},
            new String[] {"fleet", "lsit"},
            new String[] {"fleet", "migrate", "--help"},
            new String[] {"schema-diff", "--help"},
            new String[] {"schema-diff", "--json"},
            new String[] {"domains", "--help"},
            new String[] {"schedule", "--help"},
            new String[] {"schedule", "lsit", "--json"},
            new String[] {"schedule", "add", "--help"},
            new String[] {"domain", "limit", "--help"},
            new String[] {"domain", "pase", "d"},
            new String[] {"work", "--json"},
            new String[] {"retention", "run", "--batch", "0"},
            new String[] {"feed", "--json"},
            new String[] {"demo", "--help"});
    for (String[] args : cases) {
      Cli.Result whole = Cli.run(Main.commandLine(), args);
      Cli.Result one = Cli.run(Main.commandLine(args), args);
      assertThat(one).as(String.join(" ", args)).isEqualTo(whole);
      assertThat(Main.commandLine(args).getSubcommands()).containsOnlyKeys(args[0]);
    }
  }

  @Test
  void the_root_help_an_unknown_subcommand_and_options_before_one_get_the_whole_tree() {
    for (String[] args :
        List.of(
            new String[] {},
            new String[] {"--help"},
            new String[] {"help", "task"},
            new String[] {"tsak", "list"},
            new String[] {"--json", "task", "show"})) {
      assertThat(Main.commandLine(args).getSubcommands())
          .as(String.join(" ", args))
          .containsOnlyKeys(Main.commandLine().getSubcommands().keySet());
    }
    Cli.Result typo = Cli.run(Main.commandLine(new String[] {"tsak"}), "tsak");
    assertThat(typo.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(typo.err()).contains("did you mean task?");
  }
}
