package dev.ledger.app.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import dev.ledger.app.Cli;
import dev.ledger.app.ExitCodes;
import dev.ledger.app.Main;
import dev.ledger.testing.PostgresExtension;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code ledger-app console}: its refusal without a password, and a console it serves on a server
 * given by {@code --url}, on the embedded default (no {@code --url}), and with a control database.
 */
class ConsoleCommandTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  @Test
  void refuses_to_start_without_a_password_even_read_only() {
    ConsoleCommand cmd = new ConsoleCommand();
    cmd.environment = Map.<String, String>of()::get;
    CommandLine cli = Main.commandLine();
    Cli.Result r =
        Cli.run(
            withCommand(cli, cmd), "console", "--url", PG.jdbcUrl(), "--read-only", "--port", "0");
    assertThat(r.exit()).isEqualTo(ExitCodes.USAGE);
    assertThat(r.err()).contains("LEDGER_CONSOLE_PASSWORD: not set");
  }

  @Test
  void an_unreachable_control_database_exits_4_without_its_password() throws Exception {
    ConsoleCommand cmd = new ConsoleCommand();
    cmd.environment = Map.of(ConsoleCommand.PASSWORD_VARIABLE, "a long secret")::get;
    int port;
    try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
      port = free.getLocalPort(); // closed again: nothing listens there
    }
    Cli.Result r =
        Cli.run(
            withCommand(Main.commandLine(), cmd),
            "console",
            "--url",
            PG.jdbcUrl(),
            "--port",
            "0",
            "--json",
            "--control",
            "jdbc:postgresql://127.0.0.1:" + port + "/ctl?user=u&password=Hush-Secret-9");
    assertThat(r.exit()).isEqualTo(ExitCodes.DATABASE);
    assertThat(r.out() + r.err()).contains("control database").doesNotContain("Hush-Secret-9");
  }

  @Test
  void serves_the_console_on_loopback_and_prints_its_address_as_json() throws Exception {
    Ledger ledger = Ledger.open(PG.dataSource());
    String id = ledger.fileAndAdmit(TaskSpec.builder("payments", "Seen from the CLI").build());
    ConsoleCommand cmd = new ConsoleCommand();
    cmd.environment = Map.of(ConsoleCommand.PASSWORD_VARIABLE, "a long secret")::get;
    CommandLine cli = withCommand(Main.commandLine(), cmd);
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    int[] exit = {-1};
    Thread running =
        new Thread(
            () -> exit[0] = cli.execute("console", "--url", PG.jdbcUrl(), "--port", "0", "--json"));
    running.start();
    try {
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (!out.toString().contains("\n") && System.nanoTime() < deadline && running.isAlive()) {
        Thread.sleep(50);
      }
      JsonNode started = new ObjectMapper().readTree(out.toString());
      assertThat(started.get("bind").asText()).isEqualTo("127.0.0.1");
      assertThat(started.get("handling").asText()).isEqualTo("internal");
      assertThat(started.get("readOnly").asBoolean()).isFalse();
      String url = started.get("url").asText();
      assertThat(url).isEqualTo("http://127.0.0.1:" + started.get("port").asInt() + "/");
      HttpClient http = HttpClient.newHttpClient();
      String basic =
          "Basic "
              + Base64.getEncoder()
                  .encodeToString("admin:a long secret".getBytes(StandardCharsets.UTF_8));
      HttpResponse<String> task =
          http.send(
              HttpRequest.newBuilder(URI.create(url + "api/tasks/" + id))
                  .header("Authorization", basic)
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(task.statusCode()).isEqualTo(200);
      assertThat(new ObjectMapper().readTree(task.body()).get("title").asText())
          .isEqualTo("Seen from the CLI");
      assertThat(out.toString() + err).doesNotContain("jdbc:").doesNotContain(PG.databaseName());
    } finally {
      running.interrupt();
      running.join(10_000);
    }
    assertThat(running.isAlive()).isFalse();
  }

  @Test
  void without_a_url_it_serves_the_embedded_default_database(@TempDir Path home) throws Exception {
    ConsoleCommand cmd = new ConsoleCommand();
    cmd.environment = Map.of(ConsoleCommand.PASSWORD_VARIABLE, "a long secret")::get;
    CommandLine cli = withCommand(Main.commandLine(), cmd);
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    Thread running =
        new Thread(
            () ->
                cli.execute("console", "--ledger-home", home.toString(), "--port", "0", "--json"));
    running.start();
    try {
      long deadline = System.nanoTime() + 120_000_000_000L; // the embedded server's first start
      while (!out.toString().contains("\n") && System.nanoTime() < deadline && running.isAlive()) {
        Thread.sleep(50);
      }
      assertThat(out.toString()).as(err.toString()).contains("\n");
      JsonNode started = new ObjectMapper().readTree(out.toString());
      String url = started.get("url").asText();
      String basic =
          "Basic "
              + Base64.getEncoder()
                  .encodeToString("admin:a long secret".getBytes(StandardCharsets.UTF_8));
      HttpClient http = HttpClient.newHttpClient();
      HttpResponse<String> overview =
          http.send(
              HttpRequest.newBuilder(URI.create(url)).header("Authorization", basic).build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(overview.statusCode()).isEqualTo(200);
      assertThat(overview.body()).contains("<h1>Overview</h1>").contains("No domain yet");
      HttpResponse<String> domains =
          http.send(
              HttpRequest.newBuilder(URI.create(url + "api/domains"))
                  .header("Authorization", basic)
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(domains.statusCode()).isEqualTo(200);
      assertThat(domains.body()).isEqualTo("[]");
      // the embedded server's data directory is in the ledger home given
      assertThat(home.resolve("postgres")).isDirectory();
      assertThat(out.toString() + err).doesNotContain("jdbc:");
    } finally {
      running.interrupt();
      running.join(60_000);
    }
    assertThat(running.isAlive()).isFalse();
  }

  @Test
  void with_control_it_lists_the_fleet_tenants() throws Exception {
    String controlDb = PostgresExtension.newDatabase();
    try {
      String controlUrl = dev.ledger.testing.TestServer.get().urlFor(controlDb);
      try (var pool = PostgresExtension.pool(controlUrl, 2)) {
        dev.ledger.migrate.Fleet.builder().control(pool).build().register("acme", PG.jdbcUrl());
      }
      ConsoleCommand cmd = new ConsoleCommand();
      cmd.environment = Map.of(ConsoleCommand.PASSWORD_VARIABLE, "a long secret")::get;
      CommandLine cli = withCommand(Main.commandLine(), cmd);
      StringWriter out = new StringWriter();
      StringWriter err = new StringWriter();
      cli.setOut(new PrintWriter(out, true));
      cli.setErr(new PrintWriter(err, true));
      Thread running =
          new Thread(
              () ->
                  cli.execute(
                      "console",
                      "--url",
                      PG.jdbcUrl(),
                      "--control",
                      controlUrl,
                      "--port",
                      "0",
                      "--json"));
      running.start();
      try {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!out.toString().contains("\n")
            && System.nanoTime() < deadline
            && running.isAlive()) {
          Thread.sleep(50);
        }
        JsonNode started = new ObjectMapper().readTree(out.toString());
        assertThat(started.get("control").asBoolean()).isTrue();
        String basic =
            "Basic "
                + Base64.getEncoder()
                    .encodeToString("admin:a long secret".getBytes(StandardCharsets.UTF_8));
        HttpResponse<String> tenants =
            HttpClient.newHttpClient()
                .send(
                    HttpRequest.newBuilder(URI.create(started.get("url").asText() + "api/tenants"))
                        .header("Authorization", basic)
                        .build(),
                    HttpResponse.BodyHandlers.ofString());
        assertThat(tenants.statusCode()).isEqualTo(200);
        JsonNode list = new ObjectMapper().readTree(tenants.body()).get("tenants");
        assertThat(list).hasSize(1);
        assertThat(list.get(0).get("tenant").asText()).isEqualTo("acme");
        assertThat(list.get(0).get("status").asText()).isEqualTo("provisioning");
        assertThat(tenants.body() + out + err).doesNotContain("jdbc:").doesNotContain(controlDb);
      } finally {
        running.interrupt();
        running.join(10_000);
      }
      assertThat(running.isAlive()).isFalse();
    } finally {
      PostgresExtension.dropDatabase(controlDb);
    }
  }

  private static CommandLine withCommand(CommandLine root, ConsoleCommand cmd) {
    CommandLine sub = new CommandLine(cmd);
    root.getCommandSpec().removeSubcommand("console");
    root.addSubcommand("console", sub);
    return root;
  }
}
