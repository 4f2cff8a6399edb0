package dev.ledger;

import java.util.Locale;

/**
 * A task's status (docs/state-machine.md): {@code proposed} to {@code admitted} to {@code claimed}
 * to {@code completed}; any open task to {@code invalidated}; {@code claimed} back to {@code
 * admitted} on release. Stored as the lowercase name in {@code tasks.status}.
 */
public enum Status {
  /** Filed, not yet admitted to the queue. */
  PROPOSED,
  /** In the queue, claimable. */
  ADMITTED,
  /** Held under a lease; claimable again once the lease has expired. */
  CLAIMED,
  /** Done. Terminal. */
  COMPLETED,
  /** Withdrawn. Terminal. */
  INVALIDATED;

  /**
   * The stored form.
   *
   * @return e.g. {@code admitted}
   */
  public String wire() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * Whether no further transition leaves this status.
   *
   * @return true for {@link #COMPLETED} and {@link #INVALIDATED}
   */
  public boolean terminal() {
    return this == COMPLETED || this == INVALIDATED;
  }

  /**
   * Parses the stored form, case-insensitively (as {@link Label#parse(String)}).
   *
   * @param wire e.g. {@code admitted} or {@code ADMITTED}, not null
   * @return the status
   * @throws InvalidInputException naming the field {@code status} when unknown
   */
  public static Status parse(String wire) {
    for (Status s : values()) {
      if (s.wire().equalsIgnoreCase(wire)) {
        return s;
      }
    }
    throw new InvalidInputException(
        "status",
        "unknown status '"
            + wire
            + "'; allowed: proposed, admitted, claimed, completed, invalidated");
  }
}
