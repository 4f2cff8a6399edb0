package dev.ledger.app;

import dev.ledger.InvalidInputException;
import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Status;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Option converters for the ledger's names, so a bad value is a usage error naming the option
 * before any database is opened. Both ignore case.
 */
public final class Converters {

  private Converters() {}

  /** {@code --label}, {@code --handling}: {@code public}, {@code internal}, ... */
  public static final class Labels implements ITypeConverter<Label> {
    @Override
    public Label convert(String value) {
      try {
        return Label.parse(value);
      } catch (InvalidInputException e) {
        throw new TypeConversionException(rule(e));
      }
    }
  }

  /** {@code --status}: {@code proposed}, {@code admitted}, ... */
  public static final class Statuses implements ITypeConverter<Status> {
    @Override
    public Status convert(String value) {
      try {
        return Status.parse(value);
      } catch (InvalidInputException e) {
        throw new TypeConversionException(rule(e));
      }
    }
  }

  /** {@code --lease}: the token a claim printed, checked before any database is opened. */
  public static final class Leases implements ITypeConverter<Lease> {
    @Override
    public Lease convert(String value) {
      if (value.isBlank()) {
        // most often a shell variable the claim did not set: nothing was claimed
        throw new TypeConversionException(
            "is empty (use the token a claim printed; did the claim print one?)");
      }
      try {
        return Lease.parse(value);
      } catch (InvalidInputException e) {
        throw new TypeConversionException(rule(e));
      }
    }
  }

  /**
   * Every {@code long} option ({@code --priority}, ...): a value that is not a whole number says
   * so, where picocli's own says {@code is not a long}. A class, not a lambda: the launcher's
   * class-data archive dump at exit crashed the JDK 17 VM on lambda proxies of these converters.
   */
  public static final class Longs implements ITypeConverter<Long> {
    @Override
    public Long convert(String value) {
      try {
        return Long.valueOf(value.strip());
      } catch (NumberFormatException e) {
        throw new TypeConversionException(notWhole(value, Long.MIN_VALUE, Long.MAX_VALUE));
      }
    }
  }

  /** Every {@code int} option ({@code --concurrency}, ...), as {@link Longs}. */
  public static final class Ints implements ITypeConverter<Integer> {
    @Override
    public Integer convert(String value) {
      try {
        return Integer.valueOf(value.strip());
      } catch (NumberFormatException e) {
        throw new TypeConversionException(notWhole(value, Integer.MIN_VALUE, Integer.MAX_VALUE));
      }
    }
  }

  /**
   * {@code --not-before}: an RFC 3339 time, or a duration from now as {@link Durations} reads it.
   */
  public static final class Times implements ITypeConverter<java.time.Instant> {
    @Override
    public java.time.Instant convert(String value) {
      String text = value.strip();
      if (text.length() > 10 && text.charAt(4) == '-') {
        try {
          return dev.ledger.codegen.convert.Rfc3339.parse(text);
        } catch (IllegalArgumentException e) {
          throw new TypeConversionException(
              "'" + value + "' is not an RFC 3339 time: " + e.getMessage());
        }
      }
      try {
        return java.time.Instant.now().plus(Durations.parse(text));
      } catch (TypeConversionException e) {
        throw new TypeConversionException(
            "'"
                + value
                + "' is neither an RFC 3339 time (2026-12-03T15:00:00Z) nor a duration from now"
                + " (10m, 2h)");
      }
    }
  }

  private static String notWhole(String value, long min, long max) {
    return "'" + value + "' is not a whole number (" + min + " to " + max + ")";
  }

  private static String rule(InvalidInputException e) {
    String prefix = e.field() + ": ";
    String m = e.getMessage();
    return m.startsWith(prefix) ? m.substring(prefix.length()) : m;
  }
}
