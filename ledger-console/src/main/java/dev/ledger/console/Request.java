package dev.ledger.console;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One HTTP request as the console sees it, whatever server received it: the method, the path below
 * the console's root, the query and form parameters, and the headers. Immutable.
 *
 * <pre>{@code
 * Request r = Request.of("GET", "/tasks/t-1", "tab=events", Map.of("cookie", "ledger_console=..."), null);
 * }</pre>
 *
 * @param method the HTTP method, upper case, e.g. {@code GET}
 * @param path the path below the console's root, starting with {@code /}, still percent-encoded
 *     (the console decodes each segment, so a domain may hold a {@code /})
 * @param query the query parameters, each name with its values in order; not null
 * @param form the {@code application/x-www-form-urlencoded} body's parameters; empty for other
 *     bodies, not null
 * @param headers the headers, names lower case, the first value of each; not null
 * @param formFields hidden fields every form of the page carries besides the console's own, e.g. a
 *     service's own CSRF token ({@code _csrf} under Spring Security); empty standalone, not null
 */
public record Request(
    String method,
    String path,
    Map<String, List<String>> query,
    Map<String, List<String>> form,
    Map<String, String> headers,
    Map<String, String> formFields) {

  /** The largest form body the console reads, in bytes (64 KiB); a larger one is refused. */
  public static final int MAX_FORM_BYTES = 64 * 1024;

  /** Copies the maps, so the request cannot change after it is made. */
  public Request {
    method = method.toUpperCase(Locale.ROOT);
    path = path == null || path.isEmpty() ? "/" : path;
    query = Map.copyOf(query);
    form = Map.copyOf(form);
    Map<String, String> lower = new LinkedHashMap<>();
    headers.forEach((k, v) -> lower.putIfAbsent(k.toLowerCase(Locale.ROOT), v));
    headers = Map.copyOf(lower);
    formFields = Map.copyOf(formFields);
  }

  /**
   * A request from its raw parts.
   *
   * @param method the HTTP method
   * @param path the path below the console's root, percent-encoded
   * @param rawQuery the query string, undecoded, without {@code ?}; may be null
   * @param headers the headers (any case); the first value of each
   * @param formBody the body when its content type is {@code application/x-www-form-urlencoded},
   *     else null
   * @return the request
   */
  public static Request of(
      String method, String path, String rawQuery, Map<String, String> headers, String formBody) {
    return new Request(method, path, parse(rawQuery), parse(formBody), headers, Map.of());
  }

  /**
   * This request with hidden fields every form of its page carries (a service's own CSRF token).
   *
   * @param fields field names and values
   * @return a new request
   */
  public Request withFormFields(Map<String, String> fields) {
    return new Request(method, path, query, form, headers, fields);
  }

  /**
   * Parses {@code a=1&b=2} (URL-encoded, UTF-8).
   *
   * @param raw the encoded text, may be null
   * @return each name with its values in order
   */
  public static Map<String, List<String>> parse(String raw) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    if (raw == null || raw.isEmpty()) {
      return out;
    }
    for (String pair : raw.split("&")) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String name = decode(eq < 0 ? pair : pair.substring(0, eq));
      String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
      out.computeIfAbsent(name, n -> new ArrayList<>()).add(value);
    }
    out.replaceAll((k, v) -> List.copyOf(v));
    return out;
  }

  private static String decode(String s) {
    try {
      return URLDecoder.decode(s, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return "";
    }
  }

  /**
   * A query parameter's first value.
   *
   * @param name the name
   * @return the value, or null when absent or blank
   */
  public String param(String name) {
    return first(query, name);
  }

  /**
   * A query parameter's values.
   *
   * @param name the name
   * @return the non-blank values, in order; empty when none
   */
  public List<String> params(String name) {
    return query.getOrDefault(name, List.of()).stream().filter(v -> !v.isBlank()).toList();
  }

  /**
   * A form parameter's first value.
   *
   * @param name the name
   * @return the value, or null when absent or blank
   */
  public String formValue(String name) {
    return first(form, name);
  }

  private static String first(Map<String, List<String>> map, String name) {
    List<String> values = map.get(name);
    if (values == null || values.isEmpty() || values.get(0).isBlank()) {
      return null;
    }
    return values.get(0);
  }

  /**
   * A header.
   *
   * @param name the name, any case
   * @return its value, or null
   */
  public String header(String name) {
    return headers.get(name.toLowerCase(Locale.ROOT));
  }

  /**
   * A cookie from the {@code Cookie} header.
   *
   * @param name the cookie's name
   * @return its value, or null
   */
  public String cookie(String name) {
    String all = header("cookie");
    if (all == null) {
      return null;
    }
    for (String part : all.split(";")) {
      String p = part.strip();
      int eq = p.indexOf('=');
      if (eq > 0 && p.substring(0, eq).equals(name)) {
        return p.substring(eq + 1);
      }
    }
    return null;
  }
}
