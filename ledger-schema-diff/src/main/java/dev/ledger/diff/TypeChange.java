package dev.ledger.diff;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Classifies a column's type change by what {@code ALTER COLUMN ... TYPE} does to the rows: nothing
 * (the new type holds every old value and PostgreSQL only relabels the column), a rewrite of the
 * table under an {@code ACCESS EXCLUSIVE} lock (every old value fits), or a possible failure or
 * loss (the type was narrowed, or changed to one the old values need not convert to).
 *
 * <p>Types are compared as {@code format_type} prints them. What PostgreSQL relabels without a
 * rewrite follows its type support functions ({@code varchar_support}, {@code numeric_support},
 * {@code timestamp_support}) and binary-coercible casts ({@code varchar} to {@code text}).
 */
final class TypeChange {

  /**
   * The class and reason of a type change.
   *
   * @param risk the class
   * @param reason why, one clause
   */
  record Verdict(Risk risk, String reason) {}

  private static final Pattern TYPE =
      Pattern.compile(
          "(?<name>[a-z][a-z ]*?)(?:\\((?<args>[0-9]+(?:,[0-9]+)?)\\))?"
              + "(?<zone> with(?:out)? time zone)?(?<array>(?:\\[\\])*)");

  /** Integer types and how many decimal digits their largest values have. */
  private static final Map<String, Integer> INTEGER_DIGITS =
      Map.of("smallint", 5, "integer", 10, "bigint", 19);

  private static final List<String> INTEGER_ORDER = List.of("smallint", "integer", "bigint");

  private static final List<String> LIMITED_STRINGS = List.of("character varying", "bit varying");

  private static final List<String> PRECISION_TIMES =
      List.of(
          "timestamp without time zone",
          "timestamp with time zone",
          "time without time zone",
          "time with time zone",
          "interval");

  private TypeChange() {}

  /**
   * Classifies a change from one type to another.
   *
   * @param from the base type, as {@code format_type} prints it
   * @param to the head type, as {@code format_type} prints it; differs from {@code from}
   * @return the class and the reason
   */
  static Verdict classify(String from, String to) {
    Parsed a = Parsed.of(from);
    Parsed b = Parsed.of(to);
    if (a == null || b == null || a.arrayDims != b.arrayDims) {
      return changed(from, to);
    }
    Verdict element = classifyScalar(a, b, from, to);
    if (a.arrayDims > 0 && element.risk() == Risk.SAFE) {
      return new Verdict(
          Risk.LOCKING, "array type changed from " + from + " to " + to + ": rewrites the table");
    }
    return element;
  }

  private static Verdict classifyScalar(Parsed a, Parsed b, String from, String to) {
    if (a.name.equals(b.name)) {
      if (LIMITED_STRINGS.contains(a.name)) {
        return b.unlimited() || (!a.unlimited() && b.first() >= a.first())
            ? relabelled(from, to)
            : narrowed(from, to, "longer values fail the change");
      }
      if (a.name.equals("character") || a.name.equals("bit")) {
        return !a.unlimited() && !b.unlimited() && b.first() > a.first()
            ? rewritten(from, to)
            : narrowed(from, to, "longer values fail the change");
      }
      if (a.name.equals("numeric")) {
        return numeric(a, b, from, to);
      }
      if (PRECISION_TIMES.contains(a.name)) {
        return b.unlimited() || (!a.unlimited() && b.first() >= a.first())
            ? relabelled(from, to)
            : narrowed(from, to, "values are rounded to the smaller precision");
      }
      return changed(from, to);
    }
    if (INTEGER_DIGITS.containsKey(a.name) && INTEGER_DIGITS.containsKey(b.name)) {
      return INTEGER_ORDER.indexOf(b.name) > INTEGER_ORDER.indexOf(a.name)
          ? rewritten(from, to)
          : narrowed(from, to, "values out of range fail the change");
    }
    if (INTEGER_DIGITS.containsKey(a.name) && b.name.equals("numeric")) {
      boolean fits = b.unlimited() || b.first() - b.second() >= INTEGER_DIGITS.get(a.name);
      return fits ? rewritten(from, to) : narrowed(from, to, "values out of range fail the change");
    }
    if (a.name.equals("real") && b.name.equals("double precision")) {
      return rewritten(from, to);
    }
    if (a.name.equals("double precision") && b.name.equals("real")) {
      return narrowed(from, to, "values lose precision or fail the change");
    }
    if ((a.name.equals("character varying") && b.name.equals("text"))
        || (a.name.equals("text") && b.name.equals("character varying") && b.unlimited())) {
      return relabelled(from, to);
    }
    if (a.name.equals("text") && b.name.equals("character varying")) {
      return narrowed(from, to, "longer values fail the change");
    }
    if (a.name.startsWith("timestamp ") && b.name.startsWith("timestamp ")) {
      return new Verdict(
          Risk.LOCKING,
          "time zone handling changed from "
              + from
              + " to "
              + to
              + ": rewrites the table under an ACCESS EXCLUSIVE lock unless the session time"
              + " zone is UTC");
    }
    if (b.name.equals("text") || (b.name.equals("character varying") && b.unlimited())) {
      return new Verdict(
          Risk.LOCKING,
          "converted from "
              + from
              + " to "
              + to
              + ": every value converts, but the table is rewritten under an ACCESS EXCLUSIVE"
              + " lock");
    }
    return changed(from, to);
  }

  private static Verdict numeric(Parsed a, Parsed b, String from, String to) {
    if (b.unlimited() || (!a.unlimited() && b.second() == a.second() && b.first() >= a.first())) {
      return relabelled(from, to);
    }
    if (!a.unlimited()
        && b.second() >= a.second()
        && b.first() - b.second() >= a.first() - a.second()) {
      return rewritten(from, to);
    }
    return narrowed(from, to, "values out of range fail the change or are rounded");
  }

  private static Verdict relabelled(String from, String to) {
    return new Verdict(
        Risk.SAFE, "type widened from " + from + " to " + to + ": no rewrite, catalog only");
  }

  private static Verdict rewritten(String from, String to) {
    return new Verdict(
        Risk.LOCKING,
        "type widened from "
            + from
            + " to "
            + to
            + ": rewrites the table under an ACCESS EXCLUSIVE lock");
  }

  private static Verdict narrowed(String from, String to, String consequence) {
    return new Verdict(
        Risk.DESTRUCTIVE, "type narrowed from " + from + " to " + to + ": " + consequence);
  }

  private static Verdict changed(String from, String to) {
    return new Verdict(
        Risk.DESTRUCTIVE,
        "type changed from "
            + from
            + " to "
            + to
            + ": values that do not convert fail the change, and the table is rewritten");
  }

  /** A type as format_type prints it, split into name, modifiers and array dimensions. */
  private record Parsed(String name, int[] args, int arrayDims) {

    static Parsed of(String type) {
      Matcher m = TYPE.matcher(type);
      if (!m.matches()) {
        return null;
      }
      String zone = m.group("zone") == null ? "" : m.group("zone");
      int[] args =
          m.group("args") == null
              ? new int[0]
              : Arrays.stream(m.group("args").split(",")).mapToInt(Integer::parseInt).toArray();
      return new Parsed(m.group("name") + zone, args, m.group("array").length() / 2);
    }

    boolean unlimited() {
      return args.length == 0;
    }

    int first() {
      return args[0];
    }

    int second() {
      return args.length > 1 ? args[1] : 0;
    }
  }
}
