package dev.ledger.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
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
}
