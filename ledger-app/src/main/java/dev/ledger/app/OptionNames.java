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

  /**
   * Library field to the names that may set it, the first the command has wins: a field, then its
   * options and positional labels, one field a line.
   */
  private static final Map<String, List<String>> FIELDS =
      table(
          """
          domain            --domain DOMAIN
          domains           --domain
          title             --title
          body              --body
          created_by        --created-by
          max_attempts      --max-attempts
          maxAttempts       --max-attempts
          upstream_event    --upstream-event
          origin            --origin
          depends_on        --depends-on
          not_before        --not-before
          superseded_by     --superseded-by
          why               --why
          entry             --entry
          tier              --tier
          digest            --digest
          new_digest        --new-digest
          id                ID
          name              NAME
          cron              --cron
          zone              --zone
          interval          --every
          catch_up          --catch-up
          retention         --keep
          batch             --batch
          batchSize         --batch
          lease             --lease
          extend            --extend
          requirements      --requires
          handoff           --handoff --text
          reason            --reason
          to                --to
          pollInterval      --poll
          poll_interval     --poll
          stopTimeout       --lease
          shutdown_timeout  --shutdown-timeout
          initial           --backoff
          concurrency       --concurrency
          maxClaimed        --concurrency
          rateClaims        --rate
          ratePeriod        --rate
          clear             --clear
          holder            --holder
          consumer          --consumer
          manifest          --can
          handling          --handling
          """);

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

  private static Map<String, List<String>> table(String text) {
    Map<String, List<String>> m = new java.util.HashMap<>();
    text.lines()
        .map(String::strip)
        .filter(l -> !l.isEmpty())
        .forEach(
            l -> {
              List<String> words = List.of(l.split("\\s+"));
              m.put(words.get(0), words.subList(1, words.size()));
            });
    return Map.copyOf(m);
  }

  private static boolean has(CommandSpec spec, String name) {
    if (name.startsWith("-")) {
      return spec.findOption(name) != null;
    }
    return spec.positionalParameters().stream().anyMatch(p -> name.equals(p.paramLabel()));
  }
}
