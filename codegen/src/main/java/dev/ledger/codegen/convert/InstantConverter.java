package dev.ledger.codegen.convert;

import java.time.Instant;
import org.jooq.impl.AbstractConverter;

/**
 * jOOQ converter for the ledger's time columns ({@code tasks.created}, {@code tasks.lease_until},
 * {@code events.at}, {@code promotions.at}): RFC 3339 text in the database, {@link Instant} in
 * Java. Writes only the canonical form of {@link Rfc3339#format(Instant)}; reads any RFC 3339
 * width. {@code null} maps to {@code null} both ways.
 */
public final class InstantConverter extends AbstractConverter<String, Instant> {

  private static final long serialVersionUID = 1L;

  /** Creates the converter; jOOQ's generated tables call this. */
  public InstantConverter() {
    super(String.class, Instant.class);
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException when the stored text is not RFC 3339
   */
  @Override
  public Instant from(String databaseObject) {
    return databaseObject == null ? null : Rfc3339.parse(databaseObject);
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException when the instant lies outside years 0000 to 9999
   */
  @Override
  public String to(Instant userObject) {
    return userObject == null ? null : Rfc3339.format(userObject);
  }
}
