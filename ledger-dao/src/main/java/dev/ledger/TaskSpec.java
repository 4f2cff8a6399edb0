package dev.ledger;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;

/**
 * What a task is filed with: the {@code spec} of its {@code created} event (format v1,
 * docs/storage-and-replay.md). Ports the reference's {@code TaskSpec}.
 *
 * @param domain the domain, 1 to 200 characters, no U+0000
 * @param title 1 to {@value Validation#MAX_TITLE} characters, no U+0000
 * @param body 0 to {@value Validation#MAX_BODY} characters, no U+0000; never null
 * @param requirements what a claimer's manifest must hold, each 1 to {@value Validation#MAX_NAME}
 *     characters; never null
 * @param dependsOn ids of tasks (of any domain) that must be completed before this one is
 *     claimable; each must exist when filed, no duplicates; never null
 * @param origin where the task came from: {@code task:<parent>}, {@code continues:<parent>}, {@code
 *     retries:<root>}, or any external origin; null for none
 * @param upstreamEvent the upstream event it was filed from; with {@code origin}, unique per
 *     domain, so filing it again returns the first task; null for none (then {@code origin} may be
 *     anything)
 * @param createdBy who filed it, 1 to {@value Validation#MAX_NAME} characters
 * @param classification its label; never null
 * @param priority higher is claimed first; any {@code long}
 * @param notBefore the earliest time the task may run, or null for at once: a task filed with a
 *     time in the future stays {@code proposed} until a worker pool of its domain admits it at that
 *     time ({@code dev.ledger.worker.WorkerPool}); microsecond precision. Written to the {@code
 *     created} event as {@code not_before} only when set (an extension the reference stack ignores)
 * @param maxAttempts how many times a worker pool runs the task before it ends as a dead letter, 1
 *     to 1000; 0 for the pool's default. Written as {@code max_attempts} only when set
 */
public record TaskSpec(
    String domain,
    String title,
    String body,
    List<String> requirements,
    List<String> dependsOn,
    String origin,
    String upstreamEvent,
    String createdBy,
    Label classification,
    long priority,
    Instant notBefore,
    int maxAttempts) {

  /** Copies the lists, so the spec is immutable; truncates {@code notBefore} to microseconds. */
  public TaskSpec {
    notBefore = notBefore == null ? null : notBefore.truncatedTo(ChronoUnit.MICROS);
    requirements = Validation.copyOfNames("requirements", requirements);
    dependsOn = Validation.copyOfNames("depends_on", dependsOn);
    body = body == null ? "" : body;
    classification = classification == null ? Label.PUBLIC : classification;
  }

  /**
   * A spec without a start time or a maximum of attempts: the reference's {@code TaskSpec}.
   *
   * @param domain the domain
   * @param title the title
   * @param body the body
   * @param requirements the requirements
   * @param dependsOn the dependencies
   * @param origin the origin
   * @param upstreamEvent the upstream event
   * @param createdBy the filer
   * @param classification the label
   * @param priority the priority
   */
  public TaskSpec(
      String domain,
      String title,
      String body,
      List<String> requirements,
      List<String> dependsOn,
      String origin,
      String upstreamEvent,
      String createdBy,
      Label classification,
      long priority) {
    this(
        domain,
        title,
        body,
        requirements,
        dependsOn,
        origin,
        upstreamEvent,
        createdBy,
        classification,
        priority,
        null,
        0);
  }

  /**
   * This spec with another origin, upstream event, start time and maximum of attempts (a retry).
   *
   * @param origin the origin
   * @param upstreamEvent the upstream event
   * @param notBefore the start time, or null
   * @param maxAttempts the maximum of attempts, 0 for the default
   * @return the new spec
   */
  public TaskSpec refiled(String origin, String upstreamEvent, Instant notBefore, int maxAttempts) {
    return new TaskSpec(
        domain,
        title,
        body,
        requirements,
        dependsOn,
        origin,
        upstreamEvent,
        createdBy,
        classification,
        priority,
        notBefore,
        maxAttempts);
  }

  /**
   * This spec with other dependencies (a re-filed task whose dependency was re-filed too).
   *
   * @param dependsOn the task ids it depends on
   * @return the new spec
   */
  public TaskSpec dependingOn(List<String> dependsOn) {
    return new TaskSpec(
        domain,
        title,
        body,
        requirements,
        dependsOn,
        origin,
        upstreamEvent,
        createdBy,
        classification,
        priority,
        notBefore,
        maxAttempts);
  }

  /**
   * A builder with the defaults: empty body, no requirements, no dependencies, no origin, {@code
   * public}, priority 0, created by {@code ledger}.
   *
   * @param domain the domain
   * @param title the title
   * @return the builder
   */
  public static Builder builder(String domain, String title) {
    return new Builder(domain, title);
  }

  /** Builds a {@link TaskSpec}; not thread-safe. */
  public static final class Builder {
    private final String domain;
    private final String title;
    private String body = "";
    private List<String> requirements = List.of();
    private List<String> dependsOn = List.of();
    private String origin;
    private String upstreamEvent;
    private String createdBy = "ledger";
    private Label classification = Label.PUBLIC;
    private long priority;
    private Instant notBefore;
    private int maxAttempts;

    private Builder(String domain, String title) {
      this.domain = domain;
      this.title = title;
    }

    /**
     * Sets the body.
     *
     * @param body the body, not null
     * @return this
     */
    public Builder body(String body) {
      this.body = body;
      return this;
    }

    /**
     * Sets the requirements.
     *
     * @param requirements what a claimer's manifest must hold
     * @return this
     */
    public Builder requirements(List<String> requirements) {
      this.requirements = requirements;
      return this;
    }

    /**
     * Sets the dependencies.
     *
     * @param dependsOn task ids that must be completed first
     * @return this
     */
    public Builder dependsOn(List<String> dependsOn) {
      this.dependsOn = dependsOn;
      return this;
    }

    /**
     * Sets the origin and the upstream event.
     *
     * @param origin the origin, may be null
     * @param upstreamEvent the upstream event, may be null
     * @return this
     */
    public Builder origin(String origin, String upstreamEvent) {
      this.origin = origin;
      this.upstreamEvent = upstreamEvent;
      return this;
    }

    /**
     * Sets who files it.
     *
     * @param createdBy the filer
     * @return this
     */
    public Builder createdBy(String createdBy) {
      this.createdBy = createdBy;
      return this;
    }

    /**
     * Sets the classification.
     *
     * @param classification the label
     * @return this
     */
    public Builder classification(Label classification) {
      this.classification = classification;
      return this;
    }

    /**
     * Sets the priority.
     *
     * @param priority higher is claimed first
     * @return this
     */
    public Builder priority(long priority) {
      this.priority = priority;
      return this;
    }

    /**
     * Sets the earliest time the task may run.
     *
     * @param notBefore the time, or null for at once
     * @return this
     */
    public Builder notBefore(Instant notBefore) {
      this.notBefore = notBefore;
      return this;
    }

    /**
     * Sets how many times a worker pool runs the task before it is a dead letter.
     *
     * @param maxAttempts 1 to 1000, or 0 for the pool's default
     * @return this
     */
    public Builder maxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
      return this;
    }

    /**
     * Builds the spec; validation happens when it is filed.
     *
     * @return the spec
     */
    public TaskSpec build() {
      return new TaskSpec(
          domain,
          title,
          body,
          requirements,
          dependsOn,
          origin,
          upstreamEvent,
          createdBy,
          classification,
          priority,
          notBefore,
          maxAttempts);
    }
  }
}
