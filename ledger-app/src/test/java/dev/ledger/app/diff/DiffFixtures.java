package dev.ledger.app.diff;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Migration sets written for {@code ledger-app schema-diff} runs, and its JSON read back. */
final class DiffFixtures {

  private DiffFixtures() {}

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

  /**
   * A JSON document, parsed.
   *
   * @param out what the command printed
   * @return the document
   */
  static JsonNode json(String out) {
    try {
      return new ObjectMapper().readTree(out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The changes of a JSON report as {@code table kind name action class} lines ({@code -} for no
   * table).
   *
   * @param out what the command printed
   * @return one line per change, in the report's order
   */
  static List<String> changeLines(String out) {
    List<String> lines = new ArrayList<>();
    for (JsonNode c : json(out).get("changes")) {
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
}
