package dev.ledger;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

/**
 * Who claims, and on what terms: the holder leases are taken in, how long each lease lasts, what
 * the claimer can do (its manifest: requirements it meets) and the highest label it may handle. One
 * value passed whole to {@link Ledger#claimNext(String, Claimer)}, {@link Ledger#claimBatch(String,
 * Claimer, int)}, {@link Ledger#claim(String, Claimer)} and a worker runtime's {@code claimTasks},
 * as River passes its {@code InsertOpts}.
 *
 * <pre>{@code
 * Claimer worker = Claimer.of("worker-1")
 *     .lease(Duration.ofMinutes(5))
 *     .manifest(List.of("sql"))
 *     .handling(Label.INTERNAL);
 * Optional<Lease> lease = ledger.claimNext("payments", worker);
 * }</pre>
 *
 * <p>Immutable: each setter returns a new claimer, checked there, once; a claimer that exists is
 * valid, and a claim takes it without checking it again. Defaults: a lease of {@link
 * #DEFAULT_LEASE}, an empty manifest (only tasks without requirements), handling {@link
 * Label#PUBLIC}. Thread-safe.
 */
public final class Claimer {

  /**
   * The lease a claimer takes unless told otherwise: 5 minutes, as {@code ledger-app task claim}.
   */
  public static final Duration DEFAULT_LEASE = Duration.ofMinutes(5);

  private final String holder;
  private final Duration lease;
  private final List<String> manifest;
  private final Label handling;

  private Claimer(String holder, Duration lease, List<String> manifest, Label handling) {
    this.holder = holder;
    this.lease = lease;
    this.manifest = manifest;
    this.handling = handling;
  }

  /**
   * A claimer with the defaults: a lease of {@link #DEFAULT_LEASE}, no manifest, handling {@link
   * Label#PUBLIC}.
   *
   * @param holder who claims, 1 to {@value Validation#MAX_NAME} characters; leases are taken in
   *     this name (unique per worker)
   * @return the claimer
   * @throws InvalidInputException naming {@code holder} when it is null, blank or too long
   */
  public static Claimer of(String holder) {
    Validation.required("holder", holder, Validation.MAX_NAME);
    return new Claimer(holder, DEFAULT_LEASE, List.of(), Label.PUBLIC);
  }

  /**
   * This claimer with another lease length.
   *
   * @param lease how long each lease lasts; more than zero, at most {@link Validation#MAX_LEASE}
   * @return a new claimer
   * @throws InvalidInputException naming {@code lease} when it is null, zero or less, or too long
   */
  public Claimer lease(Duration lease) {
    Validation.leaseDuration("lease", lease);
    return new Claimer(holder, lease, manifest, handling);
  }

  /**
   * This claimer with another manifest: a task is claimed only when its requirements are all in it.
   *
   * @param manifest the requirements met, not null (an empty collection for none); each 1 to
   *     {@value Validation#MAX_NAME} characters; copied
   * @return a new claimer
   * @throws InvalidInputException naming {@code manifest} when it is null or holds a null, blank or
   *     too long requirement
   */
  public Claimer manifest(Collection<String> manifest) {
    if (manifest == null) {
      throw new InvalidInputException("manifest", "must not be null (use an empty list)");
    }
    for (String m : manifest) {
      Validation.required("manifest", m, Validation.MAX_NAME);
    }
    return new Claimer(holder, lease, List.copyOf(manifest), handling);
  }

  /**
   * This claimer with another highest label: a task is claimed only when its label is at most this.
   *
   * @param handling the label, not null
   * @return a new claimer
   * @throws InvalidInputException naming {@code handling} when it is null
   */
  public Claimer handling(Label handling) {
    if (handling == null) {
      throw new InvalidInputException("handling", "must not be null");
    }
    return new Claimer(holder, lease, manifest, handling);
  }

  /**
   * Who claims.
   *
   * @return the holder name, never null
   */
  public String holder() {
    return holder;
  }

  /**
   * How long each lease lasts.
   *
   * @return the lease length, more than zero, at most {@link Validation#MAX_LEASE}
   */
  public Duration lease() {
    return lease;
  }

  /**
   * What the claimer can do.
   *
   * @return the requirements met, unmodifiable, never null
   */
  public List<String> manifest() {
    return manifest;
  }

  /**
   * The highest label the claimer may handle.
   *
   * @return the label, never null
   */
  public Label handling() {
    return handling;
  }

  /**
   * Equal when holder, lease, manifest (in order) and handling are.
   *
   * @param o the other object
   * @return whether they are equal
   */
  @Override
  public boolean equals(Object o) {
    return o instanceof Claimer c
        && holder.equals(c.holder)
        && lease.equals(c.lease)
        && manifest.equals(c.manifest)
        && handling == c.handling;
  }

  @Override
  public int hashCode() {
    return Objects.hash(holder, lease, manifest, handling);
  }

  /**
   * The claimer's settings, e.g. {@code Claimer[holder=worker-1, lease=PT5M, manifest=[sql],
   * handling=internal]}.
   *
   * @return the text
   */
  @Override
  public String toString() {
    return "Claimer[holder="
        + holder
        + ", lease="
        + lease
        + ", manifest="
        + manifest
        + ", handling="
        + handling.wire()
        + "]";
  }
}
