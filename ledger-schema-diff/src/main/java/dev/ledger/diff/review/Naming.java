package dev.ledger.diff.review;

/**
 * How objects of a scratch schema are named in reports and printed SQL: an object of the set's
 * default schema without its schema, a schema whose name holds the scratch schema's with {@code
 * ${flyway:defaultSchema}} in its place, as the rest of the diff names them.
 */
final class Naming {

  /** Flyway's placeholder for the default schema. */
  static final String DEFAULT_SCHEMA = "${flyway:defaultSchema}";

  private final String scratch;

  /**
   * Names objects of one scratch schema.
   *
   * @param scratch the scratch schema's name
   */
  Naming(String scratch) {
    this.scratch = scratch;
  }

  /**
   * An object's name for a reader.
   *
   * @param e the object
   * @return e.g. {@code orders}, or {@code ${flyway:defaultSchema}_audit.log}
   */
  String display(CatalogSnapshot.Entry e) {
    return e.schema().equals(scratch)
        ? e.name()
        : e.schema().replace(scratch, DEFAULT_SCHEMA) + "." + e.name();
  }

  /**
   * An object's name in SQL: quoted where it must be, qualified outside the default schema.
   *
   * @param e the object
   * @return e.g. {@code orders}, {@code "Order"}, or {@code ${flyway:defaultSchema}_audit.log}
   */
  String sql(CatalogSnapshot.Entry e) {
    return e.schema().equals(scratch)
        ? e.quotedName()
        : e.quotedSchema().replace(scratch, DEFAULT_SCHEMA) + "." + e.quotedName();
  }

  /**
   * Text with the scratch schema's name replaced by {@code ${flyway:defaultSchema}}.
   *
   * @param text the text, may be null
   * @return the text, or null
   */
  String clean(String text) {
    return text == null ? null : text.replace(scratch, DEFAULT_SCHEMA);
  }
}
