package dev.ledger.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Usage errors as a newcomer meets them: one line on stderr (what is wrong, the closest names,
 * where the help is), exit 2, a JSON error document on stdout with {@code --json}, and bad values
 * caught before any database is opened. No test here reaches a database: the URLs name a host that
 * cannot exist ({@code .invalid}, RFC 2606), so a command that tried to connect would fail with
 * exit 4.
 */
class UsageErrorsTest {

  static final String NOWHERE = "jdbc:postgresql://nosuch.invalid:5432/x?user=u&password=pw-9c1d";

  @Test
  void a_misspelt_flag_is_reported_as_unknown_with_the_closest_name_not_as_a_missing_option() {
    Cli.Result r = Cli.run("task", "file", "--domian", "x", "--title", "t");
    assertThat(r.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(r.out()).isEmpty();
    assertThat(r.err())
        .isEqualTo(
            "error: Unknown option: '--domian'; did you mean --domain?"
                + " (see 'ledger-app task file --help')\n");
  }

  @Test
  void an_empty_url_is_refused_rather_than_taken_for_the_embedded_default(@TempDir Path home) {
    // a pipeline's --url "$DB_URL" with the variable unset must not run on a scratch database
    for (String empty : List.of("", "  ")) {
      Cli.Result r = Cli.run("task", "show", "x", "--url", empty, "--ledger-home", home.toString());
      assertThat(r.exit()).isEqualTo(ExitCodes.USAGE);
      assertThat(r.out()).isEmpty();
      assertThat(r.err())
          .isEqualTo(
              "error: --url: is empty; give a PostgreSQL JDBC URL, or leave --url out for"
                  + " $LEDGER_URL or the embedded default\n");
    }
    Cli.Result demo = Cli.run("demo", "--url", "", "--json");
    assertThat(demo.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(demo.out()).contains("\"error\":\"--url: is empty;");
    assertThat(home).isEmptyDirectory();
  }

  @Test
  void a_number_option_given_a_word_says_it_wants_a_whole_number() {
    Cli.Result r = Cli.run("task", "file", "--domain", "d", "--title", "t", "--priority", "high");
    assertThat(r.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(r.out()).isEmpty();
    assertThat(r.err())
        .startsWith(
            "error: Invalid value for option '--priority': 'high' is not a whole number"
                + " (-9223372036854775808 to 9223372036854775807)")
        .doesNotContain("is not a long");
    Cli.Result max = Cli.run("work", "--domain", "d", "--concurrency", "1e3", "--", "true");
    assertThat(max.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(max.err()).contains("'1e3' is not a whole number (-2147483648 to 2147483647)");
  }

  @Test
  void an_option_after_the_end_of_options_is_not_suggested_as_itself() {
    Cli.Result r = Cli.run("task", "file", "--domain", "d", "--title", "t", "--", "--json");
    assertThat(r.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(r.err())
        .isEqualTo(
            "error: Unknown option: '--json'; after '--' every word is an argument: put options"
                + " before it (see 'ledger-app task file --help')\n");
  }

  @Test
  void a_misspelt_flag_with_its_value_after_an_equals_sign_is_found_too() {
    Cli.Result r = Cli.run("migrate", "--paralelism=3", "--url", NOWHERE);
    assertThat(r.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(r.err())
        .isEqualTo(
            "error: Unknown option: '--paralelism=3'; did you mean --parallelism?"
                + " (see 'ledger-app migrate --help')\n");
  }

  @Test
  void a_misspelt_subcommand_gets_the_closest_subcommand() {
    Cli.Result r = Cli.run("task", "lsit");
    assertThat(r.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(r.err())
        .isEqualTo(
            "error: Unmatched argument at index 1: 'lsit'; did you mean list?"
                + " (see 'ledger-app task --help')\n");
  }

  @Test
  void a_missing_option_is_one_line_without_the_whole_help() {
    Cli.Result r = Cli.run("task", "claim", "--domain", "x");
    assertThat(r.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(r.err())
        .isEqualTo(
            "error: Missing required option: '--holder=<holder>'"
                + " (see 'ledger-app task claim --help')\n");
  }

  @Test
  void with_json_a_usage_error_is_also_one_document_on_stdout() throws Exception {
    Cli.Result r = Cli.run("task", "file", "--domian", "x", "--title", "t", "--json");
    assertThat(r.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(r.err()).hasLineCount(1);
    assertThat(r.out()).hasLineCount(1).startsWith("{\"command\":\"ledger-app task file\",");
    JsonNode doc = new ObjectMapper().readTree(r.out());
    assertThat(doc.get("command").asText()).isEqualTo("ledger-app task file");
    assertThat(doc.get("exitCode").asInt()).isEqualTo(ExitCodes.USAGE);
    assertThat(doc.get("ok").asBoolean()).isFalse();
    assertThat(doc.get("error").asText())
        .isEqualTo(
            "Unknown option: '--domian'; did you mean --domain?"
                + " (see 'ledger-app task file --help')");
  }

  @Test
  void with_json_anywhere_an_unknown_subcommand_is_one_error_document_on_one_line() {
    String doc =
        "{\"command\":\"ledger-app task\",\"exitCode\":2,\"ok\":false,\"report\":null,"
            + "\"error\":\"Unmatched argument at index 1: 'lsit'; did you mean list?"
            + " (see 'ledger-app task --help')\"}\n";
    Cli.Result after = Cli.run("task", "lsit", "--json");
    assertThat(after.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(after.out()).isEqualTo(doc);
    assertThat(after.err())
        .isEqualTo(
            "error: Unmatched argument at index 1: 'lsit'; did you mean list?"
                + " (see 'ledger-app task --help')\n");
    Cli.Result before = Cli.run("--json", "task", "lsit");
    assertThat(before.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(before.out()).isEqualTo(doc.replace("index 1", "index 2"));
    Cli.Result fleet = Cli.run("fleet", "--json", "lsit");
    assertThat(fleet.out())
        .startsWith("{\"command\":\"ledger-app fleet\",\"exitCode\":2,")
        .hasLineCount(1);
    Cli.Result root = Cli.run("--json");
    assertThat(root.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(root.out())
        .isEqualTo(
            "{\"command\":\"ledger-app\",\"exitCode\":2,\"ok\":false,\"report\":null,"
                + "\"error\":\"Missing required subcommand (see 'ledger-app --help')\"}\n");
    Cli.Result afterDashes = Cli.run("task", "lsit", "--", "--json");
    assertThat(afterDashes.out()).isEmpty();
  }

  @Test
  void work_takes_json_and_its_errors_are_json_documents() {
    Cli.Result unreachable =
        Cli.run("work", "--domain", "x", "--command", "true", "--url", NOWHERE, "--json");
    assertThat(unreachable.exit()).isEqualTo(ExitCodes.DATABASE);
    assertThat(unreachable.out())
        .isEqualTo(
            "{\"command\":\"ledger-app work\",\"exitCode\":4,\"ok\":false,\"report\":null,"
                + "\"error\":\"cannot connect to nosuch.invalid:5432/x: unknown host"
                + " nosuch.invalid\"}\n");
    Cli.Result backoff =
        Cli.run("work", "--domain", "x", "--command", "true", "--backoff", "0s", "--url", NOWHERE);
    assertThat(backoff.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(backoff.err())
        .isEqualTo("error: --backoff: must be more than zero (see 'ledger-app work --help')\n");
    Cli.Result handling =
        Cli.run(
            "work", "--domain", "x", "--command", "true", "--handling", "top", "--url", NOWHERE);
    assertThat(handling.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(handling.err())
        .startsWith("error: Invalid value for option '--handling': unknown label 'top'");
  }

  @Test
  void a_purge_batch_out_of_range_is_refused_before_the_database_is_opened() {
    for (String batch : List.of("0", "10001", "many")) {
      Cli.Result r = Cli.run("retention", "run", "--batch", batch, "--url", NOWHERE, "--json");
      assertThat(r.exit()).as(batch).isEqualTo(ExitCodes.USAGE);
      assertThat(r.out()).contains("Invalid value for option '--batch'").doesNotContain("pw-9c1d");
    }
  }

  @Test
  void a_negative_duration_is_refused_as_negative_for_every_duration_option() {
    for (String[] cmd :
        List.of(
            new String[] {"task", "claim", "--domain", "x", "--holder", "w", "--lease"},
            new String[] {
              "task",
              "heartbeat",
              "--lease",
              new dev.ledger.Lease("t-1", "w", 1, null).token(),
              "--extend"
            },
            new String[] {"work", "--domain", "x", "--command", "true", "--lease"},
            new String[] {"work", "--domain", "x", "--command", "true", "--poll"},
            new String[] {"work", "--domain", "x", "--command", "true", "--backoff"},
            new String[] {"work", "--domain", "x", "--command", "true", "--shutdown-timeout"},
            new String[] {"retention", "set", "--domain", "x", "--keep"},
            new String[] {"feed", "--domain", "x", "--consumer", "c", "--lease"},
            new String[] {"feed", "--domain", "x", "--consumer", "c", "--poll"})) {
      for (String value : List.of("-5m", "PT-5M")) {
        List<String> args = new ArrayList<>(List.of(cmd));
        args.add(value);
        args.add("--url");
        args.add(NOWHERE);
        Cli.Result r = Cli.run(args.toArray(String[]::new));
        String option = cmd[cmd.length - 1];
        String command =
            cmd[0].equals("task") || cmd[0].equals("retention") ? cmd[0] + " " + cmd[1] : cmd[0];
        assertThat(r.exit()).as(args.toString()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err())
            .isEqualTo(
                "error: Invalid value for option '"
                    + option
                    + "': '"
                    + value
                    + "' is negative: a duration must be positive, e.g. 500ms, 30s, 5m or PT5M"
                    + " (see 'ledger-app "
                    + command
                    + " --help')\n");
      }
    }
    Cli.Result bad =
        Cli.run(
            "task",
            "claim",
            "--domain",
            "x",
            "--holder",
            "w",
            "--lease",
            "-soon",
            "--url",
            NOWHERE);
    assertThat(bad.err())
        .startsWith(
            "error: Invalid value for option '--lease': '-soon' is not a duration; use e.g.");
  }

  @Test
  void a_url_that_is_not_postgresql_names_the_option_not_the_library_field() {
    Cli.Result r = Cli.run("domains", "--url", "jdbc:foo");
    assertThat(r.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(r.err())
        .isEqualTo(
            "error: --url: not a PostgreSQL JDBC URL; expected"
                + " jdbc:postgresql://host[:port]/database[?user=...&password=...]"
                + " (or a libpq URI: postgresql://user:password@host[:port]/database)\n");
    Cli.Result control = Cli.run("task", "admit", "t-1", "--control", "jdbc:foo", "--tenant", "a");
    assertThat(control.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(control.err()).startsWith("error: --control: not a PostgreSQL JDBC URL; expected");
  }

  @Test
  void a_libpq_uri_is_accepted_and_its_password_never_echoed() {
    Cli.Result r =
        Cli.run(
            "task", "admit", "t-1", "--url", "postgresql://me:pw-uri-3f0a@nosuch.invalid:5432/x");
    assertThat(r.exit()).isEqualTo(ExitCodes.DATABASE);
    assertThat(r.err())
        .isEqualTo("error: cannot connect to nosuch.invalid:5432/x: unknown host nosuch.invalid\n");
    Cli.Result noHost = Cli.run("domains", "--url", "postgresql://me:pw-uri-3f0a@/x", "--json");
    assertThat(noHost.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(noHost.err())
        .isEqualTo(
            "error: --url: not a libpq connection URI with a host; expected"
                + " postgresql://[user[:password]@]host[:port]/database[?parameters]\n");
    assertThat(r.all() + noHost.all()).doesNotContain("pw-uri-3f0a").doesNotContain("me:");
  }

  @Test
  void a_bad_label_handling_or_status_is_a_usage_error_before_any_database_is_opened() {
    Cli.Result label =
        Cli.run(
            "task", "file", "--domain", "x", "--title", "t", "--label", "secret", "--url", NOWHERE);
    assertThat(label.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(label.err())
        .isEqualTo(
            "error: Invalid value for option '--label': unknown label 'secret'; allowed: public,"
                + " internal, confidential, restricted (see 'ledger-app task file --help')\n");
    Cli.Result handling =
        Cli.run(
            "task",
            "claim",
            "--domain",
            "x",
            "--holder",
            "w",
            "--handling",
            "top",
            "--url",
            NOWHERE);
    assertThat(handling.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(handling.err())
        .startsWith("error: Invalid value for option '--handling': unknown label 'top'");
    Cli.Result status =
        Cli.run("task", "list", "--domain", "x", "--status", "done", "--url", NOWHERE);
    assertThat(status.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(status.err())
        .startsWith("error: Invalid value for option '--status': unknown status 'done'; allowed:");
    Cli.Result promote =
        Cli.run(
            "promote",
            "--domain",
            "d",
            "--entry",
            "e",
            "--tier",
            "t",
            "--by",
            "b",
            "--author",
            "a",
            "--why",
            "w",
            "--digest",
            "x",
            "--label",
            "nope",
            "--url",
            NOWHERE);
    assertThat(promote.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(promote.err())
        .startsWith("error: Invalid value for option '--label': unknown label 'nope'");
  }

  @Test
  void an_unknown_host_fails_when_the_database_is_opened_naming_the_host_not_the_password()
      throws Exception {
    Cli.Result r = Cli.run("task", "admit", "t-1", "--url", NOWHERE);
    assertThat(r.exit()).isEqualTo(ExitCodes.DATABASE);
    assertThat(r.err())
        .isEqualTo("error: cannot connect to nosuch.invalid:5432/x: unknown host nosuch.invalid\n");
    Cli.Result json = Cli.run("task", "admit", "t-1", "--url", NOWHERE, "--json");
    JsonNode doc = new ObjectMapper().readTree(json.out());
    assertThat(doc.get("exitCode").asInt()).isEqualTo(ExitCodes.DATABASE);
    assertThat(doc.get("error").asText())
        .isEqualTo("cannot connect to nosuch.invalid:5432/x: unknown host nosuch.invalid");
    Cli.Result migrate = Cli.run("status", "--url", NOWHERE);
    assertThat(migrate.exit()).isEqualTo(ExitCodes.DATABASE);
    assertThat(migrate.err())
        .startsWith("ledger-app status: cannot connect to nosuch.invalid:5432/x");
    assertThat(r.all() + json.all() + migrate.all()).doesNotContain("pw-9c1d");
  }

  /** Passwords the usage-error cases carry; none may be printed. */
  private static final List<String> PASSWORDS = List.of("s3cret-jdbc", "s3cret-uri", "s3cret-dsn");

  private static final List<String> SECRET_URLS =
      List.of(
          "jdbc:postgresql://nosuch.invalid:5432/x?user=u&password=s3cret-jdbc",
          "postgresql://me:s3cret-uri@nosuch.invalid:5432/x");

  @Test
  void a_misspelt_subcommand_quotes_the_url_with_its_password_masked_in_text_and_json()
      throws Exception {
    Cli.Result r = Cli.run("task", "lsit", "--url", SECRET_URLS.get(0));
    assertThat(r.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(r.err())
        .isEqualTo(
            "error: Unmatched arguments from index 1: 'lsit', '--url',"
                + " 'jdbc:postgresql://nosuch.invalid:5432/x?user=u&password=***'; did you mean"
                + " list? (see 'ledger-app task --help')\n");
    Cli.Result json = Cli.run("migrat", "--url=" + SECRET_URLS.get(1), "--json");
    assertThat(json.exit()).isEqualTo(ExitCodes.USAGE);
    JsonNode doc = new ObjectMapper().readTree(json.out());
    assertThat(doc.get("error").asText())
        .isEqualTo(
            "Unmatched arguments from index 0: 'migrat',"
                + " '--url=postgresql://me:***@nosuch.invalid:5432/x'; did you mean migrate?"
                + " (see 'ledger-app --help')");
    assertThat(json.err()).isEqualTo("error: " + doc.get("error").asText() + "\n");
  }

  @Test
  void no_usage_error_prints_a_password_from_a_url_a_dsn_or_a_control_option() throws Exception {
    List<List<String>> cases = new ArrayList<>();
    for (String url : SECRET_URLS) {
      for (List<String> given : List.of(List.of("--url", url), List.of("--url=" + url))) {
        List<List<String>> commands =
            List.of(
                List.of("task", "lsit"), // unknown subcommand
                List.of("migrat"), // misspelt top-level command
                List.of("task", "list", "--domian", "x"), // unknown option
                List.of("task", "file", "--domain", "d", "--title", "t", "--priority", "high"),
                List.of("task", "show", "t-1", "extra"), // extra positional
                List.of("task", "claim", "--domain", "x"), // missing required option
                List.of("migrate", "--parallelism", "many"), // bad value, job command
                List.of("fleet", "migrte"),
                List.of("schedule", "add", "n", "--domain", "d", "--title", "t", "--every", "x"),
                List.of("domain", "limit", "d", "--concurency", "3"), // misspelt control option
                List.of("schema-diff", "--bogus"));
        for (List<String> command : commands) {
          List<String> before = new ArrayList<>(command);
          before.addAll(given);
          cases.add(before);
          List<String> after = new ArrayList<>(given);
          after.addAll(0, command.subList(0, 1));
          after.addAll(command.subList(1, command.size()));
          cases.add(after);
        }
        // a missing value: the option that wants one is last, the URL before it
        List<String> missing = new ArrayList<>(List.of("task", "list"));
        missing.addAll(given);
        missing.add("--domain");
        cases.add(missing);
        // the URL where a word was expected, and as the value of a misspelt option
        cases.add(List.of("task", "lsit", url));
        cases.add(List.of("task", "list", "--ulr", url));
        cases.add(List.of("task", "list", "--ulr=" + url));
        cases.add(List.of("domains", "--", url));
      }
      cases.add(List.of("task", "admit", "t-1", "--tenant", "a", "--control", url, "--bogus"));
      cases.add(List.of("task", "admit", "t-1", "--tenant", "a", "--control=" + url, "extra"));
      cases.add(List.of("fleet", "register", "--tenant", "a", "--dsn", url, "--bogus"));
      cases.add(List.of("fleet", "register", "--tenant", "a", "--dsn=" + url, "--control"));
      cases.add(List.of("fleet", "list", "--control", url, "--bogus"));
    }
    cases.add(
        List.of(
            "fleet",
            "register",
            "--tenant",
            "a",
            "--dsn",
            "jdbc:postgresql://nosuch.invalid/t?password=s3cret-dsn&user=u",
            "--status",
            "nope"));
    ObjectMapper mapper = new ObjectMapper();
    for (List<String> args : cases) {
      for (boolean json : List.of(false, true)) {
        List<String> line = new ArrayList<>(args);
        if (json) {
          line.add(line.contains("--") ? line.indexOf("--") : line.size(), "--json");
        }
        Cli.Result r = Cli.run(line.toArray(String[]::new));
        assertThat(r.exit()).as("%s: %s", line, r.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).as("%s", line).startsWith("error: ").hasLineCount(1);
        for (String password : PASSWORDS) {
          assertThat(r.all()).as("%s", line).doesNotContain(password);
        }
        if (json) {
          JsonNode doc = mapper.readTree(r.out());
          assertThat(doc.get("exitCode").asInt()).as("%s", line).isEqualTo(ExitCodes.USAGE);
          assertThat(r.err()).isEqualTo("error: " + doc.get("error").asText() + "\n");
        } else {
          assertThat(r.out()).as("%s", line).isEmpty();
        }
      }
    }
  }

  @Test
  void secrets_masks_ledger_url_password_options_and_percent_encoded_passwords() {
    assertThat(
            Secrets.redactWith(
                "bad: postgresql://me:p%40ss-99@h/db and p@ss-99 and LEDGER_URL=jdbc:postgresql:"
                    + "//h/db?user=u&password=env-pw and tok3n-x",
                "jdbc:postgresql://h/db?user=u&password=env-pw",
                "--url",
                "postgresql://me:p%40ss-99@h/db",
                "--api-token",
                "tok3n-x"))
        .isEqualTo(
            "bad: postgresql://me:***@h/db and *** and LEDGER_URL=jdbc:postgresql:"
                + "//h/db?user=u&password=*** and ***");
    assertThat(Secrets.redact("host=h password=pw dbname=x"))
        .isEqualTo("host=h password=*** dbname=x");
    assertThat(Secrets.redact("no secret at jdbc:postgresql://h:5432/db?user=u", (String) null))
        .isEqualTo("no secret at jdbc:postgresql://h:5432/db?user=u");
  }

  @Test
  void the_embedded_default_lives_under_dollar_home_unless_ledger_home_is_set() {
    assertThat(DatabaseOptions.home(null, "/home/newcomer"))
        .isEqualTo(Path.of("/home/newcomer", ".ledger"));
    assertThat(DatabaseOptions.home("  ", "/home/newcomer"))
        .isEqualTo(Path.of("/home/newcomer", ".ledger"));
    assertThat(DatabaseOptions.home("/srv/ledger", "/home/newcomer"))
        .isEqualTo(Path.of("/srv/ledger"));
    assertThat(DatabaseOptions.home(null, null))
        .isEqualTo(Path.of(System.getProperty("user.home"), ".ledger"));
  }

  @Test
  void edit_distance_counts_a_transposition_as_one_edit() {
    assertThat(Main.editDistance("--domian", "--domain")).isEqualTo(1);
    assertThat(Main.editDistance("lsit", "list")).isEqualTo(1);
    assertThat(Main.editDistance("claim", "admit")).isEqualTo(4);
  }
}
