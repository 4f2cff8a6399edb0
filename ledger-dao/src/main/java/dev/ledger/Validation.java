package dev.ledger;

import dev.ledger.codegen.convert.Rfc3339;
import dev.ledger.schema.DomainSchemas;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;

/**
 * The ledger's input rules, checked before anything is written. Every failure is an {@link
 * InvalidInputException} that names the field (as the event format names it) and the rule.
 */
public final class Validation {

  /** Longest title, in characters. */
  public static final int MAX_TITLE = 500;

  /** Longest body, reason or handoff, in characters. */
  public static final int MAX_BODY = 100_000;

  /** Longest name-like value (holder, requirement, origin, tier, ...), in characters. */
  public static final int MAX_NAME = 500;

  /** Longest lease, so a typo cannot park a task for years. */
  public static final Duration MAX_LEASE = Duration.ofDays(7);

  /** Most attempts a task may be given. */
  public static final int MAX_ATTEMPTS = 1000;

  /** Earliest start time a task may name (RFC 3339 text order is time order from here). */
  private static final Instant EARLIEST = Instant.parse("1970-01-01T00:00:00Z");

  /** Latest start time a task may name (four-digit years). */
  private static final Instant LATEST = Instant.parse("9999-12-31T23:59:59Z");

  private Validation() {}

  /**
   * Checks a domain name: {@link DomainSchemas#checkDomain(String)}, and not only whitespace.
   *
   * <p>Domains are compared as exact strings, as the reference stack compares them: no Unicode
   * normalisation, so {@code "café"} typed in NFD (e + U+0301) is another domain, with another
   * schema, than the NFC {@code "café"} (U+00E9). Normalise in the caller when input may arrive in
   * either form ({@code java.text.Normalizer.normalize(domain, Normalizer.Form.NFC)}).
   *
   * @param domain the value
   * @throws InvalidInputException naming {@code domain}
   */
  public static void domain(String domain) {
    try {
      DomainSchemas.checkDomain(domain);
    } catch (IllegalArgumentException e) {
      throw new InvalidInputException("domain", e.getMessage().replaceFirst("^domain: ", ""));
    }
    if (blank(domain)) {
      throw new InvalidInputException(
          "domain", "must not be only whitespace or invisible characters");
    }
  }

  /**
   * Checks a required text: present, non-empty, not only whitespace or invisible characters (spaces
   * of any kind, such as U+00A0, and format characters, such as the zero-width U+200B), within
   * {@code max} characters, no U+0000, no unpaired surrogate.
   *
   * @param field the field name
   * @param value the value
   * @param max the most characters
   * @throws InvalidInputException naming {@code field}
   */
  public static void required(String field, String value, int max) {
    if (value == null || value.isEmpty()) {
      throw new InvalidInputException(field, "must not be empty");
    }
    if (blank(value)) {
      throw new InvalidInputException(field, "must not be only whitespace or invisible characters");
    }
    text(field, value, max);
  }

  /** Whether every code point is whitespace, a space separator, a control or a format character. */
  private static boolean blank(String value) {
    return value
        .codePoints()
        .allMatch(
            cp ->
                Character.isWhitespace(cp)
                    || Character.isSpaceChar(cp)
                    || Character.getType(cp) == Character.FORMAT
                    || Character.getType(cp) == Character.CONTROL);
  }

  /**
   * Checks an optional text: null, or within {@code max} characters with no U+0000 and no unpaired
   * surrogate (which PostgreSQL's UTF-8 text cannot hold: the driver would store {@code ?}).
   *
   * @param field the field name
   * @param value the value, may be null
   * @param max the most characters
   * @throws InvalidInputException naming {@code field}
   */
  public static void text(String field, String value, int max) {
    if (value == null) {
      return;
    }
    if (value.codePointCount(0, value.length()) > max) {
      throw new InvalidInputException(field, "longer than " + max + " characters");
    }
    for (int i = 0, n = value.length(); i < n; i++) {
      char c = value.charAt(i);
      if (c == '\0') {
        throw new InvalidInputException(field, "must not contain U+0000 (NUL)");
      }
      if (Character.isSurrogate(c)) {
        if (Character.isHighSurrogate(c)
            && i + 1 < n
            && Character.isLowSurrogate(value.charAt(i + 1))) {
          i++;
        } else {
          throw new InvalidInputException(
              field,
              String.format(
                  java.util.Locale.ROOT,
                  "is not valid Unicode: an unpaired surrogate U+%04X at index %d",
                  (int) c,
                  i));
        }
      }
    }
  }

  /**
   * An immutable copy of a list of names a caller gave, refusing a null element with a typed error
   * ({@link List#copyOf} would throw a bare {@link NullPointerException}). The elements are
   * otherwise checked by {@link #names}.
   *
   * @param field the field name, e.g. {@code requirements}
   * @param values the list, may be null (an empty list)
   * @return the copy, never null
   * @throws InvalidInputException naming {@code field} and the null element's index
   */
  public static List<String> copyOfNames(String field, List<String> values) {
    if (values == null) {
      return List.of();
    }
    for (int i = 0; i < values.size(); i++) {
      if (values.get(i) == null) {
        throw new InvalidInputException(field, "item " + i + " is null");
      }
    }
    return List.copyOf(values);
  }

  /**
   * Checks a list of names: none empty, none over {@value #MAX_NAME} characters, no U+0000, no
   * duplicates.
   *
   * @param field the field name
   * @param values the list, not null
   * @throws InvalidInputException naming {@code field}
   */
  public static void names(String field, List<String> values) {
    if (values.size() > 1000) {
      throw new InvalidInputException(field, "more than 1000 items");
    }
    HashSet<String> seen = new HashSet<>();
    for (String v : values) {
      required(field, v, MAX_NAME);
      if (!seen.add(v)) {
        throw new InvalidInputException(field, "lists '" + v + "' twice");
      }
    }
  }

  /**
   * Checks a task spec, all but the existence of its dependencies (checked in the filing
   * transaction).
   *
   * @param spec the spec, may be null (refused)
   * @throws InvalidInputException naming the first invalid field
   */
  public static void spec(TaskSpec spec) {
    if (spec == null) {
      throw new InvalidInputException("spec", "must not be null");
    }
    domain(spec.domain());
    required("title", spec.title(), MAX_TITLE);
    text("body", spec.body(), MAX_BODY);
    names("requirements", spec.requirements());
    names("depends_on", spec.dependsOn());
    text("origin", spec.origin(), MAX_NAME);
    if (spec.origin() != null && spec.origin().isEmpty()) {
      throw new InvalidInputException("origin", "must not be empty (use null for none)");
    }
    text("upstream_event", spec.upstreamEvent(), MAX_NAME);
    if (spec.upstreamEvent() != null && spec.origin() == null) {
      throw new InvalidInputException("upstream_event", "needs an origin");
    }
    required("created_by", spec.createdBy(), MAX_NAME);
    if (spec.maxAttempts() < 0 || spec.maxAttempts() > MAX_ATTEMPTS) {
      throw new InvalidInputException(
          "max_attempts",
          "must be 1 to "
              + MAX_ATTEMPTS
              + " (0 for the pool's default), was "
              + spec.maxAttempts());
    }
    if (spec.notBefore() != null
        && (spec.notBefore().isBefore(EARLIEST) || spec.notBefore().isAfter(LATEST))) {
      throw new InvalidInputException(
          "not_before", "must be between " + EARLIEST + " and " + LATEST);
    }
  }

  /**
   * Checks a promotion spec.
   *
   * @param spec the spec, may be null (refused)
   * @throws InvalidInputException naming the first invalid field
   */
  public static void promotion(PromotionSpec spec) {
    if (spec == null) {
      throw new InvalidInputException("spec", "must not be null");
    }
    domain(spec.domain());
    required("entry", spec.entry(), MAX_NAME);
    required("tier", spec.tier(), MAX_NAME);
    required("by", spec.by(), MAX_NAME);
    required("author", spec.author(), MAX_NAME);
    text("why", spec.why(), MAX_BODY);
    if (spec.why() == null) {
      throw new InvalidInputException("why", "must not be null");
    }
    required("digest", spec.digest(), MAX_NAME);
    text("new_digest", spec.newDigest(), MAX_NAME);
  }

  /**
   * Checks a lease duration.
   *
   * @param field the field name, e.g. {@code lease}
   * @param duration the duration, may be null (refused)
   * @throws InvalidInputException when null, zero or negative, or over {@link #MAX_LEASE}
   */
  public static void leaseDuration(String field, Duration duration) {
    if (duration == null) {
      throw new InvalidInputException(field, "must not be null");
    }
    if (duration.isZero() || duration.isNegative()) {
      throw new InvalidInputException(field, "must be longer than zero");
    }
    if (duration.compareTo(MAX_LEASE) > 0) {
      throw new InvalidInputException(field, "must be at most " + MAX_LEASE.toDays() + " days");
    }
  }

  /**
   * Parses an RFC 3339 time given as input.
   *
   * @param field the field name
   * @param text the text
   * @return the instant, truncated to microseconds
   * @throws InvalidInputException naming {@code field} when the text is not valid RFC 3339 (a leap
   *     second included)
   */
  public static Instant time(String field, String text) {
    if (text == null) {
      throw new InvalidInputException(field, "must not be empty");
    }
    try {
      return Rfc3339.parse(text);
    } catch (IllegalArgumentException e) {
      throw new InvalidInputException(field, e.getMessage());
    }
  }

  /**
   * Checks a redaction (what a scrub writes instead of the erased text): {@code redaction.title}
   * and {@code redaction.reason} 1 to {@value #MAX_TITLE} and {@value #MAX_BODY} characters, {@code
   * redaction.body} not null (it may be empty) and at most {@value #MAX_BODY} characters.
   *
   * @param redaction the redaction
   * @throws InvalidInputException naming {@code redaction} or the invalid field; nothing is written
   */
  public static void redaction(Redaction redaction) {
    if (redaction == null) {
      throw new InvalidInputException("redaction", "must not be null");
    }
    required("redaction.title", redaction.title(), MAX_TITLE);
    if (redaction.body() == null) {
      throw new InvalidInputException(
          "redaction.body", "must not be null (use \"\" for an empty body)");
    }
    text("redaction.body", redaction.body(), MAX_BODY);
    required("redaction.reason", redaction.reason(), MAX_BODY);
  }
}
