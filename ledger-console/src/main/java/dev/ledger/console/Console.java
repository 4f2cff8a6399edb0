package dev.ledger.console;

import dev.ledger.InvalidInputException;
import dev.ledger.Label;
import dev.ledger.LeaseLostException;
import dev.ledger.Ledger;
import dev.ledger.LedgerException;
import dev.ledger.TaskNotFoundException;
import dev.ledger.WrongStateException;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator console: a ledger's domains, queues, tasks and their whole event histories as
 * server-rendered pages, a JSON API under {@code /api/}, and confirmed actions (admit, release,
 * invalidate, re-file, rescore) through the ledger's API. The core takes a {@link Request} and
 * gives a {@link Response}; it knows no HTTP server. {@link ConsoleServer} serves it with the JDK's
 * HTTP server, and a service can call {@link #handle} from a servlet or controller.
 *
 * <pre>{@code
 * Console console = Console.builder(ledger, dataSource)
 *     .password(System.getenv("LEDGER_CONSOLE_PASSWORD").toCharArray())
 *     .handling(Label.INTERNAL)
 *     .build();
 * try (ConsoleServer server = ConsoleServer.start(console, new InetSocketAddress("127.0.0.1", 8080))) {
 *   ...
 * }
 * }</pre>
 *
 * <p>Security: every page and API call needs a login (user {@value #USER}, the configured password)
 * through the login form's session cookie ({@code HttpOnly}, {@code SameSite=Strict}) or HTTP
 * Basic; every POST carries the session's CSRF token or is refused with 403; a read-only console
 * refuses every action with 403; titles, bodies and other free text of tasks labelled above the
 * handling label are hidden. The console never holds a connection string: it is given a {@code
 * DataSource}. Inside a service whose own security guards the path, {@link
 * Builder#trustCaller(boolean)} lets that security decide who may see (CSRF still applies).
 *
 * <p>Thread-safe: one console serves any number of requests at once.
 */
public final class Console {

  /** The one user of the standalone console. */
  public static final String USER = "admin";

  /** The session cookie's name. */
  public static final String SESSION_COOKIE = "ledger_console";

  /** The login form's own CSRF cookie (before a session exists). */
  static final String LOGIN_COOKIE = "ledger_console_login";

  private static final Logger LOG = LoggerFactory.getLogger(Console.class);

  private final Ledger ledger;
  private final ReadModel reads;
  private final byte[] passwordDigest;
  private final boolean readOnly;
  private final boolean trustCaller;
  private final Label handling;
  private final String basePath;
  private final Clock clock;
  private final Sessions sessions;
  private final Views views = new Views();
  private final Pages pages;

  private Console(Builder b) {
    this.ledger = b.ledger;
    this.readOnly = b.readOnly;
    this.trustCaller = b.trustCaller;
    this.handling = b.handling;
    this.basePath = b.basePath;
    this.clock = b.clock;
    this.passwordDigest = b.password == null ? null : digest(new String(b.password));
    this.reads = new ReadModel(b.dataSource, b.directorySchema, b.clock, b.queryTimeoutSeconds);
    this.sessions = new Sessions(b.clock);
    this.pages =
        new Pages(
            ledger,
            reads,
            handling,
            readOnly,
            clock,
            new FleetView(b.dataSource, b.directorySchema, b.control, b.controlSchema));
  }

  /**
   * Starts building a console.
   *
   * @param ledger the ledger it reads and acts through
   * @param dataSource the ledger's database, for the console's own reads (queue pages, counts)
   * @return the builder
   */
  public static Builder builder(Ledger ledger, DataSource dataSource) {
    return new Builder(ledger, dataSource);
  }

  /** A console's settings; {@link #build()} checks them. Not thread-safe. */
  public static final class Builder {
    private final Ledger ledger;
    private final DataSource dataSource;
    private String directorySchema = "public";
    private char[] password;
    private boolean readOnly;
    private boolean trustCaller;
    private Label handling = Label.INTERNAL;
    private String basePath = "";
    private Clock clock = Clock.systemUTC();
    private int queryTimeoutSeconds = 10;
    private DataSource control;
    private String controlSchema = "public";

    private Builder(Ledger ledger, DataSource dataSource) {
      this.ledger = ledger;
      this.dataSource = dataSource;
    }

    /**
     * The schema of the ledger's routing tables.
     *
     * @param schema unquoted, {@code public} by default
     * @return this builder
     */
    public Builder directorySchema(String schema) {
      this.directorySchema = schema;
      return this;
    }

    /**
     * The password of user {@value #USER}; required unless {@link #trustCaller(boolean)}. Only its
     * SHA-256 is kept.
     *
     * @param password the password, at least 8 characters
     * @return this builder
     */
    public Builder password(char[] password) {
      this.password = password == null ? null : password.clone();
      return this;
    }

    /**
     * Refuses every action (403); pages and the API still read.
     *
     * @param readOnly true to refuse actions; false by default
     * @return this builder
     */
    public Builder readOnly(boolean readOnly) {
      this.readOnly = readOnly;
      return this;
    }

    /**
     * The most sensitive label whose titles, bodies and other free text the console shows; tasks
     * above it show their id, status and times only.
     *
     * @param handling the label, {@link Label#INTERNAL} by default
     * @return this builder
     */
    public Builder handling(Label handling) {
      this.handling = handling;
      return this;
    }

    /**
     * Where the console is mounted, for its links and its cookie's path: empty when it is served at
     * the root, e.g. {@code /ledger} inside a service.
     *
     * @param basePath empty, or {@code /} followed by a path without a trailing {@code /}
     * @return this builder
     */
    public Builder basePath(String basePath) {
      this.basePath = basePath;
      return this;
    }

    /**
     * Lets the caller's own security decide who may see and act (inside a service behind Spring
     * Security): no login of the console's own, every request taken as authenticated. CSRF tokens
     * (from a console session made on first visit) and read-only still apply.
     *
     * @param trust true to trust the caller; false by default
     * @return this builder
     */
    public Builder trustCaller(boolean trust) {
      this.trustCaller = trust;
      return this;
    }

    /**
     * A fleet's control database (its tenant registry, as {@code ledger-app fleet} takes it with
     * {@code --control}): the tenants page lists its tenants, and the schema-versions page plans
     * each of them. Without one, those pages say so and show the console's own database only.
     *
     * @param control the control database, or null for none; the console never closes it
     * @param schema the registry's schema in it, unquoted ({@code public} as the fleet's default)
     * @return this builder
     */
    public Builder control(DataSource control, String schema) {
      this.control = control;
      this.controlSchema = schema;
      return this;
    }

    /**
     * The clock for ages, leases and sessions.
     *
     * @param clock the clock, the system's UTC clock by default
     * @return this builder
     */
    public Builder clock(Clock clock) {
      this.clock = clock;
      return this;
    }

    /**
     * How long one of the console's own reads may run.
     *
     * @param seconds 1 to 300; 10 by default
     * @return this builder
     */
    public Builder queryTimeoutSeconds(int seconds) {
      this.queryTimeoutSeconds = seconds;
      return this;
    }

    /**
     * Checks the settings and builds the console.
     *
     * @return the console
     * @throws IllegalArgumentException naming the setting that is missing or wrong
     */
    public Console build() {
      if (ledger == null || dataSource == null) {
        throw new IllegalArgumentException("ledger and dataSource: both are required");
      }
      if (!trustCaller && (password == null || password.length < 8)) {
        throw new IllegalArgumentException(
            "password: the console needs a password of at least 8 characters"
                + " (LEDGER_CONSOLE_PASSWORD)");
      }
      if (handling == null) {
        throw new IllegalArgumentException("handling: must not be null");
      }
      if (basePath == null || (!basePath.isEmpty() && !basePath.matches("(/[A-Za-z0-9._~-]+)+"))) {
        throw new IllegalArgumentException(
            "basePath: must be empty or like /ledger (no trailing slash)");
      }
      if (directorySchema == null || !directorySchema.matches("[a-z_][a-z0-9_]{0,62}")) {
        throw new IllegalArgumentException("directorySchema: must be a lowercase identifier");
      }
      if (control != null
          && (controlSchema == null || !controlSchema.matches("[a-z_][a-z0-9_]{0,62}"))) {
        throw new IllegalArgumentException("controlSchema: must be a lowercase identifier");
      }
      if (queryTimeoutSeconds < 1 || queryTimeoutSeconds > 300) {
        throw new IllegalArgumentException("queryTimeoutSeconds: must be 1 to 300");
      }
      Console c = new Console(this);
      LOG.info(
          "ledger console: handling {}, {}, {}",
          handling.wire(),
          readOnly ? "read-only" : "actions allowed",
          trustCaller ? "caller's security decides" : "login required");
      return c;
    }
  }

  /**
   * Whether this console refuses every action.
   *
   * @return true when read-only
   */
  public boolean readOnly() {
    return readOnly;
  }

  /**
   * The label above which task text is hidden.
   *
   * @return the handling label
   */
  public Label handling() {
    return handling;
  }

  /**
   * Answers one request. Never throws: errors become error pages (or JSON under {@code /api/}),
   * with the ledger's own message where it has one and nothing of the database's connection.
   *
   * @param request the request
   * @return the response
   */
  public Response handle(Request request) {
    List<String> seg;
    try {
      seg = segments(request.path());
    } catch (IllegalArgumentException e) {
      return Response.text(400, "bad path");
    }
    boolean api = !seg.isEmpty() && seg.get(0).equals("api");
    try {
      refuseNul(request, seg);
      return secure(route(request, seg, api));
    } catch (Refusal r) {
      return secure(error(api, r.status, r.getMessage(), request));
    } catch (TaskNotFoundException e) {
      return secure(error(api, 404, e.getMessage(), request));
    } catch (WrongStateException | LeaseLostException e) {
      return secure(error(api, 409, e.getMessage(), request));
    } catch (InvalidInputException | IllegalArgumentException e) {
      return secure(error(api, 400, e.getMessage(), request));
    } catch (dev.ledger.migrate.MigrationException e) {
      // the fleet's control database or a tenant's (tenants, schema versions): its messages hold
      // no DSN by contract
      LOG.warn("ledger console: {} on {} {}", e.reason(), request.method(), request.path());
      return secure(error(api, 503, e.getMessage(), request));
    } catch (LedgerException e) {
      LOG.warn(
          "ledger console: {} on {} {}",
          e.getClass().getSimpleName(),
          request.method(),
          request.path());
      return secure(error(api, 503, e.getMessage(), request));
    } catch (org.jooq.exception.DataAccessException e) {
      // the console's own reads (jOOQ on its data source): a database that failed or cannot be
      // reached is an outage, as it is for the ledger's calls; jOOQ's message carries SQL and
      // bind values (task text), so only the SQLState is told
      String failure = databaseFailure(e);
      LOG.warn("ledger console: {} on {} {}", failure, request.method(), request.path());
      return secure(error(api, 503, failure, request));
    } catch (RuntimeException e) {
      // jOOQ's messages carry SQL and bind values (task text): log the class only
      LOG.warn("ledger console: internal error {}", e.getClass().getName());
      return secure(
          error(api, 500, "internal error (" + e.getClass().getSimpleName() + ")", request));
    }
  }

  /**
   * What a failed read of the console's own says: "database unreachable" for a connection that
   * could not be made or was lost (SQLState class 08, 57P, a pool's connection timeout), else
   * "database error"; with the SQLState when there is one, never the driver's message.
   */
  static String databaseFailure(Throwable e) {
    String state = null;
    boolean connection = false;
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof java.sql.SQLTransientConnectionException
          || t instanceof java.net.SocketException
          || t instanceof java.net.SocketTimeoutException) {
        connection = true;
      }
      if (t instanceof java.sql.SQLException q && q.getSQLState() != null && state == null) {
        state = q.getSQLState();
      }
    }
    if (state != null && (state.startsWith("08") || state.startsWith("57P"))) {
      connection = true;
    }
    return (connection ? "database unreachable" : "database error")
        + (state == null ? "" : " (SQLState " + state + ")")
        + (connection ? ": check that the database is up and reachable" : "");
  }

  /** A request refused with a status and a message. */
  static final class Refusal extends RuntimeException {
    final int status;

    Refusal(int status, String message) {
      super(message, null, false, false);
      this.status = status;
    }
  }

  /**
   * Refuses a NUL character in the path or any parameter (400, naming where): PostgreSQL's text
   * cannot hold one, and the database's refusal would read as an outage (503).
   */
  private static void refuseNul(Request request, List<String> seg) {
    for (String s : seg) {
      if (s.indexOf('\u0000') >= 0) {
        throw new Refusal(400, "path: must not hold a NUL character");
      }
    }
    for (Map<String, List<String>> params : List.of(request.query(), request.form())) {
      for (Map.Entry<String, List<String>> p : params.entrySet()) {
        if (p.getKey().indexOf('\u0000') >= 0
            || p.getValue().stream().anyMatch(v -> v.indexOf('\u0000') >= 0)) {
          throw new Refusal(
              400, p.getKey().replace("\u0000", "\\0") + ": must not hold a NUL character");
        }
      }
    }
  }

  private static List<String> segments(String rawPath) {
    List<String> out = new ArrayList<>();
    for (String s : rawPath.split("/")) {
      if (!s.isEmpty()) {
        out.add(URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  private Response route(Request req, List<String> seg, boolean api) {
    String method = req.method();
    if (!method.equals("GET") && !method.equals("POST") && !method.equals("HEAD")) {
      throw new Refusal(405, "method not allowed");
    }
    if (!seg.isEmpty() && seg.get(0).equals("static") && seg.size() == 2) {
      return staticFile(seg.get(1));
    }
    if (seg.size() == 1 && seg.get(0).equals("login")) {
      return method.equals("POST") ? login(req) : loginPage(req, null, 200);
    }
    Sessions.Session session = trustCaller ? trustedSession(req) : sessions.find(sessionToken(req));
    boolean basic = !trustCaller && session == null && basicOk(req.header("authorization"));
    if (session == null && !basic && !trustCaller) {
      if (api) {
        return error(true, 401, "log in: HTTP Basic as " + USER, req)
            .with("WWW-Authenticate", "Basic realm=\"ledger-console\", charset=\"UTF-8\"");
      }
      return Response.redirect(basePath + "/login");
    }
    Map<String, Object> frame = frame(session, req);
    if (method.equals("POST")) {
      String sent = req.formValue("csrf");
      if (session == null
          || sent == null
          || !MessageDigest.isEqual(
              sent.getBytes(StandardCharsets.UTF_8),
              session.csrf().getBytes(StandardCharsets.UTF_8))) {
        throw new Refusal(403, "refused: this request carries no valid CSRF token");
      }
      if (seg.size() == 1 && seg.get(0).equals("logout")) {
        sessions.close(session.token());
        return Response.redirect(basePath + "/login")
            .with("Set-Cookie", cookie(SESSION_COOKIE, "", 0));
      }
      if (readOnly) {
        throw new Refusal(403, "refused: this console is read-only (--read-only)");
      }
      return pages.act(seg, req, frame, views, basePath);
    }
    Response r = api ? pages.api(seg, req) : pages.page(seg, req, frame, views);
    if (trustCaller && session != null && sessionToken(req) == null) {
      r = r.with("Set-Cookie", cookie(SESSION_COOKIE, session.token(), -1));
    }
    return r;
  }

  private Sessions.Session trustedSession(Request req) {
    Sessions.Session s = sessions.find(sessionToken(req));
    return s != null ? s : sessions.open();
  }

  private static String sessionToken(Request req) {
    return req.cookie(SESSION_COOKIE);
  }

  private Map<String, Object> frame(Sessions.Session session, Request req) {
    Map<String, Object> m = new LinkedHashMap<>();
    List<Map<String, String>> extra = new ArrayList<>();
    req.formFields().forEach((k, v) -> extra.add(Map.of("name", k, "value", v)));
    m.put("extraFields", extra);
    m.put("base", basePath);
    m.put("csrf", session == null ? "" : session.csrf());
    m.put("session", session != null && !trustCaller);
    m.put("readOnly", readOnly);
    m.put("handling", handling.wire());
    return m;
  }

  private boolean basicOk(String header) {
    if (header == null || !header.regionMatches(true, 0, "Basic ", 0, 6)) {
      return false;
    }
    String plain;
    try {
      plain =
          new String(
              Base64.getDecoder().decode(header.substring(6).trim()), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return false;
    }
    int colon = plain.indexOf(':');
    return colon > 0
        && plain.substring(0, colon).equals(USER)
        && passwordOk(plain.substring(colon + 1));
  }

  private boolean passwordOk(String password) {
    return passwordDigest != null && MessageDigest.isEqual(passwordDigest, digest(password));
  }

  private static byte[] digest(String s) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private Response loginPage(Request req, String message, int status) {
    String pre = req.cookie(LOGIN_COOKIE);
    boolean fresh = pre == null || pre.length() < 20;
    if (fresh) {
      pre = Sessions.randomToken();
    }
    Map<String, Object> m = frame(null, req);
    m.put("title", "Log in");
    m.put("csrf", pre);
    m.put("user", USER);
    m.put("error", message);
    m.put("trusted", trustCaller);
    Response r = Response.html(status, views.render("login", m));
    return fresh ? r.with("Set-Cookie", cookie(LOGIN_COOKIE, pre, -1)) : r;
  }

  private Response login(Request req) {
    String pre = req.cookie(LOGIN_COOKIE);
    String sent = req.formValue("csrf");
    if (pre == null
        || sent == null
        || !MessageDigest.isEqual(
            pre.getBytes(StandardCharsets.UTF_8), sent.getBytes(StandardCharsets.UTF_8))) {
      throw new Refusal(403, "refused: this request carries no valid CSRF token");
    }
    if (trustCaller) {
      return Response.redirect(basePath + "/");
    }
    String user = req.formValue("user");
    String password = req.formValue("password");
    if (!USER.equals(user) || password == null || !passwordOk(password)) {
      LOG.info("ledger console: a login failed");
      return loginPage(req, "wrong user or password", 401);
    }
    Sessions.Session s = sessions.open();
    LOG.info("ledger console: {} logged in", USER);
    return Response.redirect(basePath + "/")
        .with("Set-Cookie", cookie(SESSION_COOKIE, s.token(), -1))
        .with("Set-Cookie", cookie(LOGIN_COOKIE, "", 0));
  }

  private String cookie(String name, String value, int maxAge) {
    return name
        + "="
        + value
        + "; Path="
        + (basePath.isEmpty() ? "/" : basePath)
        + "; HttpOnly; SameSite=Strict"
        + (maxAge >= 0 ? "; Max-Age=" + maxAge : "");
  }

  private Response error(boolean api, int status, String message, Request req) {
    if (api) {
      return Response.json(status, Pages.JSON.createObjectNode().put("error", message).toString());
    }
    Map<String, Object> m = frame(null, req);
    m.put("title", "Error " + status);
    m.put("status", status);
    m.put("message", message);
    return Response.html(status, views.render("error", m));
  }

  private static Response secure(Response r) {
    return r.with("Cache-Control", "no-store")
        .with("X-Content-Type-Options", "nosniff")
        .with("X-Frame-Options", "DENY")
        .with("Referrer-Policy", "no-referrer")
        .with(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'");
  }

  private static final Map<String, String> STATIC =
      Map.of(
          "console.css", "text/css; charset=utf-8", "console.js", "text/javascript; charset=utf-8");

  private static Response staticFile(String name) {
    String type = STATIC.get(name);
    if (type == null) {
      throw new Refusal(404, "no such file");
    }
    try (InputStream in = Console.class.getResourceAsStream("/dev/ledger/console/static/" + name)) {
      if (in == null) {
        throw new Refusal(404, "no such file");
      }
      return new Response(200, type, Map.of(), in.readAllBytes());
    } catch (IOException e) {
      throw new Refusal(500, "static file unreadable");
    }
  }
}
