package dev.ledger.schedule;

import dev.ledger.Label;
import dev.ledger.Validation;
import java.util.List;

/**
 * What a schedule is: its name, the domain it files into, when it ticks, the task it files at each
 * tick, and its catch-up policy. Immutable; checked when added or changed ({@link Schedules}).
 *
 * @param name 1 to {@value Schedules#MAX_NAME} characters of {@code A-Z a-z 0-9 . _ : -}, starting
 *     with a letter or digit; unique in the ledger. Its tasks' origin is {@code schedule:<name>}
 * @param domain the domain its tasks are filed in (the domain rules of {@link
 *     Validation#domain(String)})
 * @param timing when it ticks, not null
 * @param title each task's title
 * @param body each task's body; never null
 * @param requirements each task's requirements; never null
 * @param label each task's label; never null
 * @param priority each task's priority
 * @param maxAttempts each task's maximum of attempts, 1 to 1000, or 0 for the pool's default
 * @param catchUp after a time when no process filed its ticks (downtime), how many of the missed
 *     ticks are filed: the latest {@code catchUp} of them, 1 ({@link #LATEST_ONLY}) to {@value
 *     #MAX_CATCH_UP}; older ones are skipped
 */
public record ScheduleSpec(
    String name,
    String domain,
    Timing timing,
    String title,
    String body,
    List<String> requirements,
    Label label,
    long priority,
    int maxAttempts,
    int catchUp) {

  /** The catch-up policy that files only the latest missed tick. */
  public static final int LATEST_ONLY = 1;

  /** The largest catch-up: ticks filed at most in one step. */
  public static final int MAX_CATCH_UP = 1000;

  /** Copies the list and fills the defaults (empty body, {@code public}). */
  public ScheduleSpec {
    body = body == null ? "" : body;
    requirements = Validation.copyOfNames("requirements", requirements);
    label = label == null ? Label.PUBLIC : label;
  }

  /**
   * A builder with the defaults: empty body, no requirements, {@code public}, priority 0, the
   * pool's maximum of attempts, catch-up {@link #LATEST_ONLY}.
   *
   * @param name the schedule's name
   * @param domain the domain
   * @param timing when it ticks
   * @param title each task's title
   * @return the builder
   */
  public static Builder builder(String name, String domain, Timing timing, String title) {
    return new Builder(name, domain, timing, title);
  }

  /**
   * A builder holding this spec's values, to change some of them.
   *
   * @return the builder
   */
  public Builder toBuilder() {
    return new Builder(name, domain, timing, title)
        .body(body)
        .requirements(requirements)
        .label(label)
        .priority(priority)
        .maxAttempts(maxAttempts)
        .catchUp(catchUp);
  }

  /** Builds a {@link ScheduleSpec}; not thread-safe. */
  public static final class Builder {
    private final String name;
    private final String domain;
    private Timing timing;
    private String title;
    private String body = "";
    private List<String> requirements = List.of();
    private Label label = Label.PUBLIC;
    private long priority;
    private int maxAttempts;
    private int catchUp = LATEST_ONLY;

    private Builder(String name, String domain, Timing timing, String title) {
      this.name = name;
      this.domain = domain;
      this.timing = timing;
      this.title = title;
    }

    /**
     * Sets the timing.
     *
     * @param timing when it ticks
     * @return this
     */
    public Builder timing(Timing timing) {
      this.timing = timing;
      return this;
    }

    /**
     * Sets the title.
     *
     * @param title each task's title
     * @return this
     */
    public Builder title(String title) {
      this.title = title;
      return this;
    }

    /**
     * Sets the body.
     *
     * @param body each task's body
     * @return this
     */
    public Builder body(String body) {
      this.body = body;
      return this;
    }

    /**
     * Sets the requirements.
     *
     * @param requirements each task's requirements
     * @return this
     */
    public Builder requirements(List<String> requirements) {
      this.requirements = requirements;
      return this;
    }

    /**
     * Sets the label.
     *
     * @param label each task's label
     * @return this
     */
    public Builder label(Label label) {
      this.label = label;
      return this;
    }

    /**
     * Sets the priority.
     *
     * @param priority each task's priority
     * @return this
     */
    public Builder priority(long priority) {
      this.priority = priority;
      return this;
    }

    /**
     * Sets the maximum of attempts.
     *
     * @param maxAttempts 1 to 1000, or 0 for the pool's default
     * @return this
     */
    public Builder maxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
      return this;
    }

    /**
     * Sets the catch-up policy.
     *
     * @param catchUp how many of the latest missed ticks are filed after downtime, 1 to {@value
     *     ScheduleSpec#MAX_CATCH_UP}
     * @return this
     */
    public Builder catchUp(int catchUp) {
      this.catchUp = catchUp;
      return this;
    }

    /**
     * Builds the spec; it is checked when added or changed.
     *
     * @return the spec
     */
    public ScheduleSpec build() {
      return new ScheduleSpec(
          name, domain, timing, title, body, requirements, label, priority, maxAttempts, catchUp);
    }
  }
}
