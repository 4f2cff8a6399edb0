package dev.ledger.console;

import java.io.IOException;
import java.net.CookieManager;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** A plain HTTP client with a cookie jar, for the console's tests: redirects are not followed. */
final class Http {

  private static final Pattern CSRF = Pattern.compile("name=\"csrf\" value=\"([^\"]+)\"");

  final String base;
  final HttpClient client;

  Http(String base) {
    this.base = base;
    this.client =
        HttpClient.newBuilder()
            .cookieHandler(new CookieManager())
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();
  }

  HttpResponse<String> get(String path) {
    return send(HttpRequest.newBuilder(URI.create(base + path)).GET().build());
  }

  HttpResponse<String> getBasic(String path, String user, String password) {
    String auth =
        Base64.getEncoder()
            .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8));
    return send(
        HttpRequest.newBuilder(URI.create(base + path))
            .header("Authorization", "Basic " + auth)
            .GET()
            .build());
  }

  HttpResponse<String> post(String path, Map<String, String> form) {
    String body =
        form.entrySet().stream()
            .map(
                e ->
                    URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8)
                        + "="
                        + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
            .collect(Collectors.joining("&"));
    return send(
        HttpRequest.newBuilder(URI.create(base + path))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build());
  }

  /** Logs in through the form; returns the session's CSRF token (from the overview page). */
  String login(String password) {
    String csrf = csrf(get("/login").body());
    Map<String, String> form = new LinkedHashMap<>();
    form.put("csrf", csrf);
    form.put("user", "admin");
    form.put("password", password);
    HttpResponse<String> r = post("/login", form);
    if (r.statusCode() != 303) {
      throw new AssertionError("login answered " + r.statusCode());
    }
    return csrf(get("/").body());
  }

  static String csrf(String html) {
    Matcher m = CSRF.matcher(html);
    if (!m.find()) {
      throw new AssertionError("no CSRF token in the page");
    }
    return m.group(1);
  }

  private HttpResponse<String> send(HttpRequest request) {
    try {
      return client.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
