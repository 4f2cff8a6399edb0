package dev.ledger.app.migrate;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.ToStringSerializer;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The {@code --json} output of the migration and fleet commands, and every command's error
 * document: one object on one line, {@code {"command", "exitCode", "ok", "report"}}, the report
 * being the engine's report record as Jackson writes records (component names as keys). Enum values
 * are lowercase ({@code "created"}), instants and durations ISO-8601 ({@code
 * "2026-11-29T23:35:59.123456Z"}, {@code "PT1.204S"}).
 */
public final class Json {

  private static final ObjectMapper MAPPER = mapper();

  private Json() {}

  /**
   * The JSON document of a command's result.
   *
   * @param command e.g. {@code migrate}, {@code fleet migrate}
   * @param exitCode the exit code the command returns
   * @param ok whether it succeeded
   * @param report the report record (or list), written as is
   * @return JSON on one line, as every {@code --json} document is
   */
  public static String document(String command, int exitCode, boolean ok, Object report) {
    return document(command, exitCode, ok, report, Map.of());
  }

  /**
   * A command's JSON document with fields of its own after the report, e.g. {@code migrate
   * --provision}'s {@code provisioned}.
   *
   * @param command e.g. {@code migrate}
   * @param exitCode the exit code the command returns
   * @param ok whether the run succeeded
   * @param report the report object
   * @param extra the further fields, in order; empty for none
   * @return the JSON text
   */
  public static String document(
      String command, int exitCode, boolean ok, Object report, Map<String, Object> extra) {
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("command", command);
    doc.put("exitCode", exitCode);
    doc.put("ok", ok);
    doc.put("report", report);
    doc.putAll(extra);
    return write(doc);
  }

  /**
   * The JSON document of a command that broke before it had a report: {@code {"command",
   * "exitCode", "ok": false, "report": null, "error"}}.
   *
   * @param command e.g. {@code migrate}
   * @param exitCode the exit code the command returns (2, 4, 6, ...)
   * @param error the one-line error, already redacted
   * @return JSON on one line, as every {@code --json} document is
   */
  public static String error(String command, int exitCode, String error) {
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("command", command);
    doc.put("exitCode", exitCode);
    doc.put("ok", false);
    doc.put("report", null);
    doc.put("error", error);
    return write(doc);
  }

  private static String write(Map<String, Object> doc) {
    try {
      return MAPPER.writeValueAsString(doc);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a report could not be written as JSON", e);
    }
  }

  private static ObjectMapper mapper() {
    SimpleModule module = new SimpleModule("ledger-reports");
    module.addSerializer(Duration.class, ToStringSerializer.instance);
    module.addSerializer(Instant.class, ToStringSerializer.instance);
    @SuppressWarnings({"rawtypes", "unchecked"})
    Class<Enum<?>> enums = (Class) Enum.class;
    module.addSerializer(
        enums,
        new JsonSerializer<Enum<?>>() {
          @Override
          public void serialize(Enum<?> value, JsonGenerator gen, SerializerProvider serializers)
              throws IOException {
            gen.writeString(value.name().toLowerCase(Locale.ROOT));
          }
        });
    return new ObjectMapper()
        .registerModule(module)
        .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS);
  }
}
