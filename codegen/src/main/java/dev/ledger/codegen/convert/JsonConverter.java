package dev.ledger.codegen.convert;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.jooq.impl.AbstractConverter;

/**
 * jOOQ converter for the event payload column {@code events.payload}: JSON text in the database, a
 * Jackson {@link JsonNode} tree in Java, so payloads are parsed and edited as JSON, never as
 * strings. Written compact, fields in insertion order. {@code null} maps to {@code null}.
 */
public final class JsonConverter extends AbstractConverter<String, JsonNode> {

  private static final long serialVersionUID = 1L;
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Creates the converter; jOOQ's generated tables call this. */
  public JsonConverter() {
    super(String.class, JsonNode.class);
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException when the stored text is not JSON
   */
  @Override
  public JsonNode from(String databaseObject) {
    if (databaseObject == null) {
      return null;
    }
    try {
      return JSON.readTree(databaseObject);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("payload is not JSON: " + e.getOriginalMessage(), e);
    }
  }

  @Override
  public String to(JsonNode userObject) {
    if (userObject == null) {
      return null;
    }
    try {
      return JSON.writeValueAsString(userObject);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a JSON tree always serialises", e);
    }
  }
}
