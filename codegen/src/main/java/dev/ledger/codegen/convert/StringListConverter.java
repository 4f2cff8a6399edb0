package dev.ledger.codegen.convert;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import java.util.List;
import org.jooq.impl.AbstractConverter;

/**
 * jOOQ converter for the JSON-array text columns {@code tasks.requirements} and {@code
 * tasks.depends_on}: {@code ["a","b"]} in the database (compact, as the reference's serde writes
 * it), an unmodifiable {@code List<String>} in Java. {@code null} maps to {@code null}.
 */
public final class StringListConverter extends AbstractConverter<String, List<String>> {

  private static final long serialVersionUID = 1L;
  private static final TypeReference<List<String>> LIST = new TypeReference<>() {};

  // readers and writers are immutable and thread-safe; resolving the type once per call instead
  // was a quarter of a worker pool's claiming thread's time (bench B9, JFR)
  private static final ObjectReader READER = new ObjectMapper().readerFor(LIST);
  private static final ObjectWriter WRITER = new ObjectMapper().writerFor(LIST);

  /** The empty list as stored: most tasks' requirements and dependencies. */
  private static final String EMPTY = "[]";

  /** Creates the converter; jOOQ's generated tables call this. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public StringListConverter() {
    super(String.class, (Class<List<String>>) (Class) List.class);
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException when the stored text is not a JSON array of strings
   */
  @Override
  public List<String> from(String databaseObject) {
    if (databaseObject == null) {
      return null;
    }
    if (databaseObject.equals(EMPTY)) {
      return List.of();
    }
    try {
      return List.copyOf(READER.<List<String>>readValue(databaseObject));
    } catch (JsonProcessingException | NullPointerException e) {
      throw new IllegalArgumentException("not a JSON array of strings: " + e.getMessage(), e);
    }
  }

  @Override
  public String to(List<String> userObject) {
    if (userObject == null) {
      return null;
    }
    if (userObject.isEmpty()) {
      return EMPTY;
    }
    try {
      return WRITER.writeValueAsString(userObject);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a list of strings always serialises", e);
    }
  }
}
