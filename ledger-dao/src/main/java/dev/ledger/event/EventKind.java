package dev.ledger.event;

import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The kinds of ledger event, format v1, each with its wire name as stored in {@code events.kind}:
 * the one place a kind's name is spelled. Every other place that tells kinds apart (the payload
 * records of {@link Event}, {@link Event#parse}, {@link Projection#apply}, the replay's streaming
 * reader, the scrub's redaction, the SQL of claims and reads) names a constant here, and those that
 * handle each kind do it in an exhaustive {@code switch}, so a new constant fails to compile until
 * every one of them handles it.
 *
 * <pre>{@code
 * ctx.selectFrom(EVENTS).where(EVENTS.KIND.eq(EventKind.CREATED.wire()));
 * }</pre>
 */
public enum EventKind {
  /** A task was filed: {@link Event.Created}. */
  CREATED("created"),
  /** A proposed task was admitted to the queue: {@link Event.Admitted}. */
  ADMITTED("admitted"),
  /** A task was claimed under a lease: {@link Event.Claimed}. */
  CLAIMED("claimed"),
  /** A lease was extended: {@link Event.Heartbeat}. */
  HEARTBEAT("heartbeat"),
  /** A handoff note was left on a claimed task: {@link Event.HandoffLeft}. */
  HANDOFF_LEFT("handoff_left"),
  /** A claimed task was given back to the queue: {@link Event.Released}. */
  RELEASED("released"),
  /** A claimed task was completed: {@link Event.Completed}. */
  COMPLETED("completed"),
  /** An open task was invalidated: {@link Event.Invalidated}. */
  INVALIDATED("invalidated"),
  /** A completed task's result was posted: {@link Event.Posted}. */
  POSTED("posted"),
  /** An open task's priority changed: {@link Event.Rescored}. */
  RESCORED("rescored"),
  /** A promotion was recorded, keyed {@code promotion:<entry>}: {@link Event.Promoted}. */
  PROMOTED("promoted");

  private static final Map<String, EventKind> BY_WIRE =
      Arrays.stream(values()).collect(Collectors.toUnmodifiableMap(EventKind::wire, k -> k));

  private final String wire;

  EventKind(String wire) {
    this.wire = wire;
  }

  /**
   * The name stored in {@code events.kind}.
   *
   * @return e.g. {@code handoff_left}
   */
  public String wire() {
    return wire;
  }

  /**
   * The kind of a stored name.
   *
   * @param wire a stored {@code events.kind}, may be null
   * @return the kind, or empty when no kind has that name (exactly; names are lowercase)
   */
  public static Optional<EventKind> find(String wire) {
    return wire == null ? Optional.empty() : Optional.ofNullable(BY_WIRE.get(wire));
  }
}
