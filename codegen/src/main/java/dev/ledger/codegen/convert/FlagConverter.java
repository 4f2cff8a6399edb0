package dev.ledger.codegen.convert;

import org.jooq.impl.AbstractConverter;

/**
 * jOOQ converter for {@code promotions.why_erased}: {@code BIGINT} 0/1 in the database (the
 * reference's shape), {@link Boolean} in Java. Any non-zero value reads as {@code true}.
 */
public final class FlagConverter extends AbstractConverter<Long, Boolean> {

  private static final long serialVersionUID = 1L;

  /** Creates the converter; jOOQ's generated tables call this. */
  public FlagConverter() {
    super(Long.class, Boolean.class);
  }

  @Override
  public Boolean from(Long databaseObject) {
    return databaseObject == null ? null : databaseObject != 0L;
  }

  @Override
  public Long to(Boolean userObject) {
    return userObject == null ? null : (userObject ? 1L : 0L);
  }
}
