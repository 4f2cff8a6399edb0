package dev.ledger.app.console;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Label;
import dev.ledger.app.DatabaseOptions;
import dev.ledger.app.ExitCodes;
import dev.ledger.app.Output;
import dev.ledger.console.Console;
import dev.ledger.console.ConsoleServer;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code ledger-app console}: serves the operator console ({@link Console}) with the JDK's HTTP
 * server until SIGTERM or Ctrl-C. Binds {@code 127.0.0.1} unless {@code --bind} says otherwise; the
 * password of user {@code admin} comes from {@code LEDGER_CONSOLE_PASSWORD}, and without one the
 * command refuses to start (read-only or not: a read-only console still shows the tasks). {@code
 * --json} prints the listening address as one JSON object.
 */
@Command(
    name = "console",
    mixinStandardHelpOptions = true,
    description = {
      "Serve the operator console in a browser, and its JSON API.",
      "Domains, queues, tasks with their whole event history, dead letters, and",
      "confirmed actions (admit, release, invalidate, re-file, rescore). Log in as",
      "admin with the password in $LEDGER_CONSOLE_PASSWORD (required); HTTP Basic",
      "works too, for the JSON API under /api/. Stops on SIGTERM or Ctrl-C."
    },
    footer = {
      "",
      "Example:",
      "  export LEDGER_CONSOLE_PASSWORD='a long secret'",
      "  ledger-app console --url 'jdbc:postgresql://db/app?user=ops' --port 8080 \\",
      "      --read-only --handling internal",
      "  ledger-app console --control \"$CONTROL\"   # also the fleet's tenants"
    })
public final class ConsoleCommand implements Callable<Integer> {

  /** The environment variable holding the password of user {@code admin}. */
  public static final String PASSWORD_VARIABLE = "LEDGER_CONSOLE_PASSWORD";

  @Mixin DatabaseOptions database;

  /** The fleet's control database, optional: the tenants and schema-versions pages read it. */
  @Mixin dev.ledger.app.fleet.ControlOptions control;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--port",
      defaultValue = "8080",
      description = "Port to listen on; 0 picks a free one (default: ${DEFAULT-VALUE}).")
  int port;

  @Option(
      names = "--bind",
      defaultValue = "127.0.0.1",
      paramLabel = "ADDR",
      description = "Address to listen on (default: ${DEFAULT-VALUE}, this machine only).")
  String bind;

  @Option(names = "--read-only", description = "Refuse every action; pages and the API still read.")
  boolean readOnly;

  @Option(
      names = "--handling",
      defaultValue = "internal",
      converter = dev.ledger.app.Converters.Labels.class,
      description =
          "Highest label whose titles and bodies are shown; others are hidden"
              + " (default: ${DEFAULT-VALUE}).")
  Label handling;

  @Option(names = "--json", description = "Print the listening address as one JSON object.")
  boolean json;

  @Option(names = "--verbose", description = "Show the stack trace of an error.")
  boolean verbose;

  /** Where the password is read from: the process's environment (tests give their own). */
  java.util.function.Function<String, String> environment = System::getenv;

  @Override
  public Integer call() throws InterruptedException {
    String password = environment.apply(PASSWORD_VARIABLE);
    if (password == null || password.isBlank()) {
      throw new ParameterException(
          spec.commandLine(),
          PASSWORD_VARIABLE
              + ": not set; the console needs a password for user admin (at least 8"
              + " characters), also with --read-only");
    }
    if (password.length() < 8) {
      throw new ParameterException(
          spec.commandLine(), PASSWORD_VARIABLE + ": must be at least 8 characters");
    }
    if (port < 0 || port > 65535) {
      throw new ParameterException(spec.commandLine(), "--port: must be 0 to 65535");
    }
    PrintWriter out = spec.commandLine().getOut();
    try (DatabaseOptions.OpenDatabase db = database.open();
        HikariDataSource fleet = control.given() ? control.open(dsn -> {}) : null) {
      Console console =
          Console.builder(db.ledger(), db.dataSource())
              .directorySchema(db.directorySchema())
              .password(password.toCharArray())
              .readOnly(readOnly)
              .handling(handling)
              .control(fleet, control.schema())
              .build();
      ConsoleServer server;
      try {
        server = ConsoleServer.start(console, new InetSocketAddress(bind, port));
      } catch (UncheckedIOException e) {
        throw new ParameterException(
            spec.commandLine(), "--bind/--port: " + e.getMessage().replaceFirst("^cannot ", ""));
      }
      CountDownLatch stopped = new CountDownLatch(1);
      Thread hook =
          new Thread(
              () -> {
                server.close();
                stopped.countDown();
              },
              "ledger-console-shutdown");
      Runtime.getRuntime().addShutdownHook(hook);
      InetSocketAddress at = server.address();
      String host = at.getAddress().getHostAddress();
      String url =
          "http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + at.getPort() + "/";
      if (json) {
        Output.json(
            out,
            Output.object()
                .put("url", url)
                .put("bind", host)
                .put("port", at.getPort())
                .put("readOnly", readOnly)
                .put("handling", handling.wire())
                .put("control", fleet != null)
                .put("user", Console.USER));
      } else {
        out.println(
            "console on "
                + url
                + " (user "
                + Console.USER
                + ", handling "
                + handling.wire()
                + (readOnly ? ", read-only" : "")
                + "; database: "
                + (db.embedded() ? "embedded" : "given")
                + (fleet != null ? "; fleet: " + control.where() : "")
                + "); Ctrl-C stops it");
        out.flush();
      }
      try {
        stopped.await();
      } finally {
        server.close();
        try {
          Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
          // shutting down: the hook runs
        }
      }
      return ExitCodes.OK;
    }
  }
}
