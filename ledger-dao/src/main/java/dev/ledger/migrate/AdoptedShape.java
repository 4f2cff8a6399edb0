package dev.ledger.migrate;

/**
 * The historic shapes of a domain schema the reference stack made (no Flyway history), and the
 * version each is baselined at before the remaining migrations run (docs/storage-and-replay.md).
 */
public enum AdoptedShape {
  /** {@code events} and {@code tasks}, no {@code promotions}: baseline 1. */
  NO_PROMOTIONS("1"),
  /** {@code promotions} without {@code new_digest}/{@code why_erased}: baseline 2. */
  PROMOTIONS_FIRST_SHAPE("2"),
  /** {@code promotions} with both columns, {@code promotions_version} without the promoter: 3. */
  PROMOTIONS_KEYED_WITHOUT_PROMOTER("3"),
  /** The reference's current shape: baseline 4. */
  REFERENCE_CURRENT("4");

  private final String baselineVersion;

  AdoptedShape(String baselineVersion) {
    this.baselineVersion = baselineVersion;
  }

  /**
   * The Flyway version this shape is baselined at.
   *
   * @return e.g. {@code 2}
   */
  public String baselineVersion() {
    return baselineVersion;
  }
}
