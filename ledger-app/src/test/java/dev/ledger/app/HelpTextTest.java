package dev.ledger.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Every command's help, as a newcomer reads it on an 80-column terminal: an example, a first
 * description line that is a whole sentence (the command list shows only that line), no line over
 * 80 characters, and no word of a description or example (a URL, a path, {@code e.g.}) broken
 * across two lines.
 */
class HelpTextTest {

  static List<CommandLine> allCommands() {
    List<CommandLine> all = new ArrayList<>();
    collect(Main.commandLine(), all);
    return all;
  }

  private static void collect(CommandLine c, List<CommandLine> all) {
    all.add(c);
    c.getSubcommands().values().stream()
        .filter(s -> !s.getCommandName().equals("help"))
        .distinct()
        .forEach(s -> collect(s, all));
  }

  @Test
  void every_command_with_no_subcommands_has_help_with_an_example() {
    SoftAssertions soft = new SoftAssertions();
    for (CommandLine c : allCommands()) {
      if (!c.getSubcommands().isEmpty()) {
        continue;
      }
      soft.assertThat(c.getUsageMessage())
          .as(c.getCommandSpec().qualifiedName())
          .containsPattern("Examples?:");
    }
    soft.assertAll();
  }

  /**
   * The promise, for every command a new one included: {@code --json} (one JSON document on
   * stdout, errors too) and an example in its help, parents ({@code ledger-app}, {@code task},
   * {@code fleet}) as well as leaves. Only picocli's own {@code help} is left out.
   */
  @Test
  void every_command_and_parent_has_a_json_option_and_an_example_in_its_help() {
    SoftAssertions soft = new SoftAssertions();
    List<String> names = new ArrayList<>();
    for (CommandLine c : allCommands()) {
      String name = c.getCommandSpec().qualifiedName();
      names.add(name);
      soft.assertThat(c.getCommandSpec().findOption("--json")).as(name + " --json").isNotNull();
      soft.assertThat(c.getUsageMessage()).as(name + " --help").containsPattern("Examples?:\\n  ");
    }
    soft.assertThat(names)
        .contains(
            "ledger-app",
            "ledger-app task",
            "ledger-app task dead-letters",
            "ledger-app task refile",
            "ledger-app fleet",
            "ledger-app fleet migrate",
            "ledger-app work",
            "ledger-app demo",
            "ledger-app schema-diff");
    soft.assertAll();
  }

  /**
   * picocli wraps a footer line longer than the terminal at a space, so an example would lose its
   * tail to a line of its own (a command line that no longer pastes): each example line as written
   * fits 80 columns. (Description paragraphs may be long: picocli wraps those as prose.)
   */
  @Test
  void no_example_line_is_wrapped_by_picocli() {
    SoftAssertions soft = new SoftAssertions();
    for (CommandLine c : allCommands()) {
      for (String line : c.getCommandSpec().usageMessage().footer()) {
        soft.assertThat(line.length())
            .as(c.getCommandSpec().qualifiedName() + ": " + line)
            .isLessThanOrEqualTo(80);
      }
    }
    soft.assertAll();
  }

  @Test
  void the_first_description_line_of_every_command_is_a_whole_sentence() {
    SoftAssertions soft = new SoftAssertions();
    for (CommandLine c : allCommands()) {
      String[] description = c.getCommandSpec().usageMessage().description();
      soft.assertThat(description).as(c.getCommandSpec().qualifiedName()).isNotEmpty();
      if (description.length > 0) {
        soft.assertThat(description[0].strip())
            .as(c.getCommandSpec().qualifiedName())
            .endsWith(".");
      }
    }
    soft.assertAll();
  }

  @Test
  void no_help_line_is_longer_than_80_and_no_word_is_broken_across_lines() {
    SoftAssertions soft = new SoftAssertions();
    for (CommandLine c : allCommands()) {
      CommandSpec spec = c.getCommandSpec();
      String name = spec.qualifiedName();
      String help = c.getUsageMessage();
      help.lines()
          .forEach(l -> soft.assertThat(l.length()).as(name + ": " + l).isLessThanOrEqualTo(80));
      List<String> texts = new ArrayList<>();
      for (OptionSpec o : spec.options()) {
        texts.addAll(List.of(o.description()));
      }
      texts.addAll(List.of(spec.usageMessage().description()));
      texts.addAll(List.of(spec.usageMessage().footer()));
      for (String text : texts) {
        for (String word : text.strip().split("\\s+")) {
          for (int k = 1; k < word.length(); k++) {
            // the word's two halves at the end of one line and the start of the next
            Pattern broken =
                Pattern.compile(
                    "(?<=\\s|^)"
                        + Pattern.quote(word.substring(0, k))
                        + "\\R\\s*"
                        + Pattern.quote(word.substring(k))
                        + "(?=\\s|$)",
                    Pattern.MULTILINE);
            soft.assertThat(broken.matcher(help).find())
                .as(name + ": the word " + word + " is broken after " + word.substring(0, k))
                .isFalse();
          }
        }
      }
    }
    soft.assertAll();
  }

  @Test
  void version_is_the_build_version() {
    Cli.Result r = Cli.run("--version");
    assertThat(r.exit()).isZero();
    assertThat(r.out().strip()).isEqualTo("ledger-app " + System.getProperty("project.version"));
    assertThat(r.out()).doesNotContain("dev");
  }

  @Test
  void version_with_json_is_the_standard_document_for_the_root_and_every_subcommand()
      throws Exception {
    String version = System.getProperty("project.version");
    for (List<String> args :
        List.of(
            List.of("--version", "--json"),
            List.of("--json", "--version"),
            List.of("task", "--version", "--json"),
            List.of("migrate", "--json", "--version"))) {
      Cli.Result r = Cli.run(args.toArray(String[]::new));
      assertThat(r.exit()).as("%s", args).isZero();
      assertThat(r.err()).as("%s", args).isEmpty();
      com.fasterxml.jackson.databind.JsonNode doc =
          new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.out());
      assertThat(doc.get("command").asText())
          .as("%s", args)
          .isEqualTo(args.get(0).startsWith("--") ? "ledger-app" : "ledger-app " + args.get(0));
      assertThat(doc.get("exitCode").asInt()).isZero();
      assertThat(doc.get("ok").asBoolean()).isTrue();
      assertThat(doc.get("report").get("version").asText()).isEqualTo(version);
    }
  }
}
