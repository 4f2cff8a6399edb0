package dev.ledger.spring;

import dev.ledger.console.Console;
import dev.ledger.console.Request;
import dev.ledger.console.Response;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The operator console ({@link Console}) as a servlet, mapped under {@code ledger.console.path}.
 * Hands each request to the console's core and writes its response back. Under Spring Security its
 * CSRF token (the {@code _csrf} request attribute) is added to every form the console renders, so
 * both the service's check and the console's own pass. Thread-safe.
 */
public final class LedgerConsoleServlet extends HttpServlet {

  private static final long serialVersionUID = 1L;

  /** The console; not serializable, and servlets here never are. */
  private final transient Console console;

  /**
   * Creates the servlet.
   *
   * @param console the console it serves
   */
  public LedgerConsoleServlet(Console console) {
    this.console = console;
  }

  @Override
  protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
    String prefix = req.getContextPath() + req.getServletPath();
    String uri = req.getRequestURI();
    String path = uri.startsWith(prefix) ? uri.substring(prefix.length()) : "/";
    if (path.isEmpty()) {
      resp.sendRedirect(prefix + "/");
      return;
    }
    Map<String, String> headers = new LinkedHashMap<>();
    for (String name : Collections.list(req.getHeaderNames())) {
      headers.put(name, req.getHeader(name));
    }
    Map<String, List<String>> form = new LinkedHashMap<>();
    String type = req.getContentType();
    if ("POST".equalsIgnoreCase(req.getMethod())
        && type != null
        && type.toLowerCase(Locale.ROOT).startsWith("application/x-www-form-urlencoded")) {
      if (req.getContentLengthLong() > Request.MAX_FORM_BYTES) {
        resp.sendError(413);
        return;
      }
      // the container parses the body (a security filter may have read it already)
      req.getParameterMap().forEach((k, v) -> form.put(k, List.of(v)));
    }
    Request request =
        new Request(
                req.getMethod(), path, Request.parse(req.getQueryString()), form, headers, Map.of())
            .withFormFields(securityCsrf(req));
    Response r = console.handle(request);
    resp.setStatus(r.status());
    resp.setContentType(r.contentType());
    r.headers()
        .forEach(
            (k, v) -> {
              for (String one : v.split("\n")) {
                resp.addHeader(k, one);
              }
            });
    if (r.body().length > 0 && !"HEAD".equalsIgnoreCase(req.getMethod())) {
      resp.setContentLength(r.body().length);
      try (OutputStream out = resp.getOutputStream()) {
        out.write(r.body());
      }
    }
  }

  /** Spring Security's CSRF token for this request, when it set one: its parameter and value. */
  private static Map<String, String> securityCsrf(HttpServletRequest req) {
    Object token = req.getAttribute("_csrf");
    if (token == null) {
      return Map.of();
    }
    try {
      Method name = token.getClass().getMethod("getParameterName");
      Method value = token.getClass().getMethod("getToken");
      name.setAccessible(true);
      value.setAccessible(true);
      return Map.of((String) name.invoke(token), (String) value.invoke(token));
    } catch (ReflectiveOperationException | RuntimeException e) {
      return Map.of();
    }
  }
}
