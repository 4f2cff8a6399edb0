package dev.ledger.app.diff;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.app.Main;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;

/** Runs {@code ledger-app} in process and writes migration directories, for the diff tests. */
final class Cli {

  private Cli() {}

  /**
   * What a run printed and returned.
   *
   * @param exit the exit code
   * @param out standard output
   * @param err standard error
   */
  record Result(int exit, String out, String err) {

    JsonNode json() {
      try {
        return new ObjectMapper().readTree(out);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    /** The changes of a JSON report as {@code table kind name action class} lines. */
    List<String> changeLines() {
      List<String> lines = new ArrayList<>();
      for (JsonNode c : json().get("changes")) {
        lines.add(
            c.get("table").asText("-")
                + " "
                + c.get("kind").asText()
                + " "
                + c.get("name").asText()
                + " "
                + c.get("action").asText()
                + " "
                + c.get("class").asText());
      }
      return lines;
    }

    /** The one change of a JSON report; fails unless there is exactly one. */
    JsonNode onlyChange() {
      JsonNode changes = json().get("changes");
      if (changes.size() != 1) {
        throw new AssertionError("expected one change, got " + changes);
      }
      return changes.get(0);
    }
  }

  static Result run(String... args) {
    CommandLine cli = Main.commandLine();
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    cli.setOut(new PrintWriter(out));
    cli.setErr(new PrintWriter(err));
    int exit = cli.execute(args);
    return new Result(exit, out.toString(), err.toString());
  }

  /**
   * Writes SQL scripts into a new directory.
   *
   * @param dir the directory to create
   * @param namesAndScripts file name, script, file name, script, ...
   * @return the directory
   */
  static Path migrations(Path dir, String... namesAndScripts) {
    try {
      Files.createDirectories(dir);
      for (int i = 0; i < namesAndScripts.length; i += 2) {
        Files.writeString(dir.resolve(namesAndScripts[i]), namesAndScripts[i + 1]);
      }
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
