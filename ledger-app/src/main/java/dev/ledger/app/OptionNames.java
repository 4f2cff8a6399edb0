package dev.ledger.app;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/**
 * The one table from the library's field names ({@link dev.ledger.InvalidInputException#field()})
 * to the options of the command line, and the rewriting of a library message into the user's words:
 * {@code maxClaimed: must be 1 to 1000000} becomes {@code --concurrency: must be 1 to 1000000};
 * {@code ratePeriod: must be PT0.1S to PT24H, was PT0.01S} becomes {@code --rate: must be 100ms to
 * 24h, was 10ms}. A field is mapped only to an option (or positional parameter) the command has; a
 * field no option of the command sets is left as the library named it.
 *
 * <p>Stateless and thread-safe.
 */
public final class OptionNames {

  /** Library field to the candidate names, first match on the command wins. */
  private static final Map<String, List<String>> FIELDS =
      Map.ofEntries(
          Map.entry("domain", List.of("--domain", "DOMAIN")),
          Map.entry("domains", List.of("--domain")),
          Map.entry("title", List.of("--title")),
          Map.entry("body", List.of("--body")),
          Map.entry("created_by", List.of("--created-by")),
          Map.entry("max_attempts", List.of("--max-attempts")),
          Map.entry("maxAttempts", List.of("--max-attempts")),
          Map.entry("upstream_event", List.of("--upstream-event")),
          Map.entry("origin", List.of("--origin")),
          Map.entry("depends_on", List.of("--depends-on")),
          Map.entry("not_before", List.of("--not-before")),
          Map.entry("superseded_by", List.of("--superseded-by")),
          Map.entry("why", List.of("--why")),
          Map.entry("entry", List.of("--entry")),
          Map.entry("tier", List.of("--tier")),
          Map.entry("digest", List.of("--digest")),
          Map.entry("new_digest", List.of("--new-digest")),
          Map.entry("id", List.of("ID")),
          Map.entry("name", List.of("NAME")),
          Map.entry("cron", List.of("--cron")),
          Map.entry("zone", List.of("--zone")),
          Map.entry("interval", List.of("--every")),
          Map.entry("catch_up", List.of("--catch-up")),
          Map.entry("retention", List.of("--keep")),
          Map.entry("batch", List.of("--batch")),
          Map.entry("batchSize", List.of("--batch")),
          Map.entry("lease", List.of("--lease")),
          Map.entry("extend", List.of("--extend")),
          Map.entry("requirements", List.of("--requires")),
          Map.entry("handoff", List.of("--handoff", "--text")),
          Map.entry("reason", List.of("--reason")),
          Map.entry("to", List.of("--to")),
          Map.entry("pollInterval", List.of("--poll")),
          Map.entry("poll_interval", List.of("--poll")),
          Map.entry("stopTimeout", List.of("--lease")),
          Map.entry("shutdown_timeout", List.of("--shutdown-timeout")),
          Map.entry("initial", List.of("--backoff")),
          Map.entry("concurrency", List.of("--concurrency")),
          Map.entry("maxClaimed", List.of("--concurrency")),
          Map.entry("rateClaims", List.of("--rate")),
          Map.entry("ratePeriod", List.of("--rate")),
          Map.entry("clear", List.of("--clear")),
          Map.entry("holder", List.of("--holder")),
          Map.entry("consumer", List.of("--consumer")),
          Map.entry("manifest", List.of("--can")),
          Map.entry("handling", List.of("--handling")));

  /** {@code PT0.1S}, {@code PT24H}, {@code PT1H30M}: how {@link Duration#toString()} writes. */
  private static final Pattern ISO =
      Pattern.compile("\\bPT(?=\\d)(?:(\\d+)H)?(?:(\\d+)M)?(?:(\\d+(?:\\.\\d+)?)S)?\\b");

  /** {@code 300 ms}, {@code 1 h}: a number and a unit, written as one word. */
  private static final Pattern SPACED = Pattern.compile("\\b(\\d+) (ms|s|h)\\b");

  private OptionNames() {}

  /**
   * The option a library field was set from on this command.
   *
   * @param spec the command
   * @param field the library's field name
   * @param own the command's own names ({@link BaseCommand#optionNames()}), tried first
   * @return the option's name or the positional parameter's label; null when none of the command's
   *     options sets the field
   */
  public static String option(CommandSpec spec, String field, Map<String, String> own) {
    String mine = own.get(field);
    if (mine != null && has(spec, mine)) {
      return mine;
    }
    for (String candidate : FIELDS.getOrDefault(field, List.of())) {
      if (has(spec, candidate)) {
        return candidate;
      }
    }
    return null;
  }

  /**
   * The usage error for a library error naming a field.
   *
   * @param spec the command
   * @param field the field
   * @param message the library's message, {@code field: rule}
   * @param own the command's own names
   * @param cause the library's error; rethrown as it is when no option of the command sets the
   *     field
   * @return the usage error, {@code --option: rule} in the user's words
   */
  static RuntimeException refusal(
      CommandSpec spec,
      String field,
      String message,
      Map<String, String> own,
      RuntimeException cause) {
    String option = option(spec, field, own);
    if (option == null) {
      return cause;
    }
    String prefix = field + ": ";
    String rule = message.startsWith(prefix) ? message.substring(prefix.length()) : message;
    ParameterException e =
        new ParameterException(spec.commandLine(), option + ": " + humanize(rule));
    e.initCause(cause);
    return e;
  }

  /**
   * A message with its durations as the user writes them: {@code PT0.1S} as {@code 100ms}, {@code
   * 300 ms} as {@code 300ms}.
   *
   * @param message the message
   * @return the message rewritten
   */
  public static String humanize(String message) {
    Matcher m = ISO.matcher(message);
    StringBuilder b = new StringBuilder();
    while (m.find()) {
      String text = m.group();
      String replacement = text;
      if (m.group(1) != null || m.group(2) != null || m.group(3) != null) {
        replacement = Durations.format(Duration.parse(text));
      }
      m.appendReplacement(b, Matcher.quoteReplacement(replacement));
    }
    m.appendTail(b);
    return SPACED.matcher(b).replaceAll("$1$2");
  }

  private static boolean has(CommandSpec spec, String name) {
    if (name.startsWith("-")) {
      return spec.findOption(name) != null;
    }
    return spec.positionalParameters().stream().anyMatch(p -> name.equals(p.paramLabel()));
  }
}
