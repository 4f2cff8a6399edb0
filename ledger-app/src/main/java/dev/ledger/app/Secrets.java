package dev.ledger.app;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Removes passwords from any text the command line prints, whatever path printed it: a usage error
 * quoting the arguments it could not match (picocli echoes them whole), an execution error, a
 * {@code --json} error document. Complements {@link dev.ledger.migrate.Dsn#redact(String)}, which
 * knows the one URL a command opened; this knows every argument and {@code $LEDGER_URL}, opened or
 * not.
 *
 * <p>What counts as a secret:
 *
 * <ul>
 *   <li>the value of a connection option ({@code --url}, {@code --dsn}, {@code --control}) or of an
 *       option whose name says password, secret or token, in both forms ({@code --url X}, {@code
 *       --url=X});
 *   <li>any argument that looks like a URL with credentials ({@code scheme://user:pw@host}) or
 *       holds a {@code password=} parameter, wherever it stands (after a misspelt option, as an
 *       extra positional);
 *   <li>{@code $LEDGER_URL}.
 * </ul>
 *
 * A secret URL is printed with its password replaced by {@code ***} (host and user stay, they say
 * where); the value of a password option becomes {@code ***}. Every text also loses, by pattern,
 * any {@code password=...} parameter and any URL user-information password, so a credential never
 * passed as an argument (one read from a file or the registry) is masked too. Stateless and
 * thread-safe.
 */
public final class Secrets {

  /** What a password becomes. */
  public static final String MASK = "***";

  /** {@code password=...} as a URL query parameter or a libpq keyword. */
  private static final Pattern PASSWORD_PARAMETER =
      Pattern.compile("(?i)(\\bpassword=)([^&\\s'\"]*)");

  /** {@code scheme://user:password@}: the password of a URL's user information. */
  private static final Pattern USER_INFO_PASSWORD =
      Pattern.compile("(?i)(\\b[a-z][a-z0-9+.-]*://[^/\\s'\"@:?#]*:)([^@\\s'\"]*)@");

  /**
   * What stands for a password in a usage text rather than being one: {@code password=...}, {@code
   * user:password@}, {@code [user[:password]@]}, {@code <password>}.
   */
  private static final Pattern PLACEHOLDER =
      Pattern.compile("(?i)\\.\\.\\.\\]?|\\[?password\\]?|<[^>]*>|\\*\\*\\*");

  /** Option names whose value is a connection string. */
  private static final Set<String> CONNECTION_OPTIONS = Set.of("--url", "--dsn", "--control");

  /** Words that make an option's value a secret. */
  private static final List<String> SECRET_WORDS = List.of("password", "passwd", "secret", "token");

  private Secrets() {}

  /**
   * Removes the secrets of a command line, of {@code $LEDGER_URL} and every password pattern from a
   * text.
   *
   * @param text the text to print; null gives null
   * @param args the command line's arguments (may be null or empty)
   * @return the text without a password
   */
  public static String redact(String text, String... args) {
    return redactWith(text, System.getenv("LEDGER_URL"), args);
  }

  /**
   * {@link #redact(String, String...)} with a given {@code $LEDGER_URL}, for tests.
   *
   * @param text the text; null gives null
   * @param ledgerUrl the value of {@code $LEDGER_URL}, or null
   * @param args the arguments (may be null)
   * @return the text without a password
   */
  static String redactWith(String text, String ledgerUrl, String... args) {
    if (text == null) {
      return null;
    }
    Set<String> whole = new LinkedHashSet<>();
    Set<String> passwords = new LinkedHashSet<>();
    if (ledgerUrl != null && !ledgerUrl.isBlank()) {
      whole.add(ledgerUrl);
    }
    String[] given = args == null ? new String[0] : args;
    for (int i = 0; i < given.length; i++) {
      String arg = given[i];
      if (arg == null) {
        continue;
      }
      if ("--".equals(arg)) {
        // after "--" every word is an argument: a URL there is still masked by pattern below
        continue;
      }
      int equals = arg.indexOf('=');
      String name = arg.startsWith("-") && equals > 0 ? arg.substring(0, equals) : arg;
      if (arg.startsWith("-") && isPasswordOption(name)) {
        if (equals > 0) {
          passwords.add(arg.substring(equals + 1));
        } else if (i + 1 < given.length) {
          passwords.add(given[i + 1]);
        }
      } else if (arg.startsWith("-")
          && CONNECTION_OPTIONS.contains(name.toLowerCase(Locale.ROOT))) {
        if (equals > 0) {
          whole.add(arg.substring(equals + 1));
        } else if (i + 1 < given.length) {
          whole.add(given[i + 1]);
        }
      } else if (hasCredentials(arg)) {
        whole.add(equals > 0 && arg.startsWith("-") ? arg.substring(equals + 1) : arg);
      }
    }
    for (String url : whole) {
      passwords.addAll(passwordsIn(url));
    }
    String out = text;
    // each connection string in its masked form first (longest first: one may contain another)
    List<String> urls = new ArrayList<>(whole);
    urls.sort(Comparator.comparingInt(String::length).reversed());
    for (String url : urls) {
      if (!url.isEmpty()) {
        out = out.replace(url, mask(url));
      }
    }
    out = mask(out);
    // a password as such (decoded from %-escapes, or given to a password option); a very short
    // one is left to the patterns above, or every "a" of the message would go
    List<String> sorted = new ArrayList<>(passwords);
    sorted.sort(Comparator.comparingInt(String::length).reversed());
    for (String password : sorted) {
      if (password.length() >= 3 && !MASK.equals(password)) {
        out = out.replace(password, MASK);
      }
    }
    return out;
  }

  /**
   * Masks, by pattern, every {@code password=} parameter and URL user-information password.
   *
   * @param text any text, not null
   * @return the text with each such password replaced by {@code ***}
   */
  public static String mask(String text) {
    String out =
        PASSWORD_PARAMETER
            .matcher(text)
            .replaceAll(m -> Matcher.quoteReplacement(m.group(1) + masked(m.group(2))));
    return USER_INFO_PASSWORD
        .matcher(out)
        .replaceAll(m -> Matcher.quoteReplacement(m.group(1) + masked(m.group(2)) + "@"));
  }

  /** A password masked; a placeholder of a usage text ({@code password=...}) kept as it is. */
  private static String masked(String value) {
    return PLACEHOLDER.matcher(value).matches() ? value : MASK;
  }

  /**
   * Whether a text holds a credential a pattern recognises: a {@code password=} parameter or a URL
   * with a user-information password.
   *
   * @param text any text, not null
   * @return true when {@link #mask(String)} would change it
   */
  public static boolean hasCredentials(String text) {
    return PASSWORD_PARAMETER.matcher(text).find() || USER_INFO_PASSWORD.matcher(text).find();
  }

  private static boolean isPasswordOption(String name) {
    if (!name.startsWith("-")) {
      return false;
    }
    String lower = name.toLowerCase(Locale.ROOT);
    return SECRET_WORDS.stream().anyMatch(lower::contains);
  }

  /** The passwords of a URL as given and %-decoded (a URI's user information is %-encoded). */
  private static List<String> passwordsIn(String url) {
    List<String> found = new ArrayList<>();
    for (Pattern p : List.of(PASSWORD_PARAMETER, USER_INFO_PASSWORD)) {
      Matcher m = p.matcher(url);
      while (m.find()) {
        String raw = m.group(2);
        if (raw.isEmpty()) {
          continue;
        }
        found.add(raw);
        try {
          found.add(URLDecoder.decode(raw.replace("+", "%2B"), StandardCharsets.UTF_8));
        } catch (IllegalArgumentException malformed) {
          // not %-encoded: the raw form is the password
        }
      }
    }
    return found;
  }
}
