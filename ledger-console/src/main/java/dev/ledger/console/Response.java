package dev.ledger.console;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One HTTP response of the console, whatever server sends it. Immutable.
 *
 * @param status the HTTP status, e.g. 200
 * @param contentType the {@code Content-Type}, e.g. {@code text/html; charset=utf-8}
 * @param headers more headers (each name once); {@code Set-Cookie} may carry several cookies joined
 *     by {@code \n}, which servers send as one header each ({@link #cookies()})
 * @param body the body's bytes, not null
 */
public record Response(int status, String contentType, Map<String, String> headers, byte[] body) {

  /** Copies the headers. */
  public Response {
    headers = Map.copyOf(headers);
  }

  static Response html(int status, String html) {
    return new Response(
        status, "text/html; charset=utf-8", Map.of(), html.getBytes(StandardCharsets.UTF_8));
  }

  static Response json(int status, String json) {
    return new Response(
        status, "application/json; charset=utf-8", Map.of(), json.getBytes(StandardCharsets.UTF_8));
  }

  static Response text(int status, String text) {
    return new Response(
        status, "text/plain; charset=utf-8", Map.of(), text.getBytes(StandardCharsets.UTF_8));
  }

  static Response redirect(String location) {
    return new Response(
        303, "text/plain; charset=utf-8", Map.of("Location", location), new byte[0]);
  }

  /**
   * This response with one more header.
   *
   * @param name the header's name
   * @param value its value
   * @return a new response
   */
  public Response with(String name, String value) {
    Map<String, String> h = new LinkedHashMap<>(headers);
    h.merge(name, value, (a, b) -> a + "\n" + b);
    return new Response(status, contentType, h, body);
  }

  /**
   * The cookies this response sets, one {@code Set-Cookie} value each.
   *
   * @return the values; empty when none
   */
  public List<String> cookies() {
    String all = headers.get("Set-Cookie");
    return all == null ? List.of() : List.of(all.split("\n"));
  }

  /**
   * The body as UTF-8 text.
   *
   * @return the text
   */
  public String bodyText() {
    return new String(body, StandardCharsets.UTF_8);
  }
}
