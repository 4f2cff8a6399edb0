package dev.ledger;

import java.util.Locale;

/**
 * A task's or promotion's classification (docs/state-machine.md), stored as {@code label_rank}:
 * {@code public} 0 &lt; {@code internal} 1 &lt; {@code confidential} 2 &lt; {@code restricted} 3. A
 * claimer states its handling level and may take a task whose rank is not above it. Event payloads
 * carry the lowercase name.
 */
public enum Label {
  /** Rank 0. */
  PUBLIC,
  /** Rank 1. */
  INTERNAL,
  /** Rank 2. */
  CONFIDENTIAL,
  /** Rank 3. */
  RESTRICTED;

  /**
   * The stored rank.
   *
   * @return 0 to 3
   */
  public long rank() {
    return ordinal();
  }

  /**
   * The name in event payloads.
   *
   * @return e.g. {@code internal}
   */
  public String wire() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * Whether a claimer handling {@code this} level may take work classified {@code label}.
   *
   * @param label the work's classification, not null
   * @return true when {@code label}'s rank is not above this one
   */
  public boolean canHandle(Label label) {
    return label.ordinal() <= ordinal();
  }

  /**
   * The label of a stored rank.
   *
   * @param rank 0 to 3
   * @return the label
   * @throws InvalidInputException naming {@code label_rank} when out of range
   */
  public static Label ofRank(long rank) {
    if (rank < 0 || rank >= values().length) {
      throw new InvalidInputException("label_rank", "must be 0 to 3, was " + rank);
    }
    return values()[(int) rank];
  }

  /**
   * Parses a label name, case-insensitively.
   *
   * @param wire e.g. {@code confidential}, not null
   * @return the label
   * @throws InvalidInputException naming the field {@code classification} when unknown
   */
  public static Label parse(String wire) {
    for (Label l : values()) {
      if (l.wire().equalsIgnoreCase(wire)) {
        return l;
      }
    }
    throw new InvalidInputException(
        "classification",
        "unknown label '" + wire + "'; allowed: public, internal, confidential, restricted");
  }
}
