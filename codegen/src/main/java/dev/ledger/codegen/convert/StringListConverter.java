package dev.ledger.codegen.convert;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.jooq.impl.AbstractConverter;

/**
 * jOOQ converter for the JSON-array text columns {@code tasks.requirements} and {@code
 * tasks.depends_on}: {@code ["a","b"]} in the database (compact, as the reference's serde writes
 * it), an unmodifiable {@code List<String>} in Java. {@code null} maps to {@code null}.
 */
public final class StringListConverter extends AbstractConverter<String, List<String>> {

  private static final long serialVersionUID = 1L;
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final TypeReference<List<String>> LIST = new TypeReference<>() {};

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
    try {
      return List.copyOf(JSON.readValue(databaseObject, LIST));
    } catch (JsonProcessingException | NullPointerException e) {
      throw new IllegalArgumentException("not a JSON array of strings: " + e.getMessage(), e);
    }
  }

  @Override
  public String to(List<String> userObject) {
    if (userObject == null) {
      return null;
    }
    try {
      return JSON.writeValueAsString(userObject);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a list of strings always serialises", e);
    }
  }
}
