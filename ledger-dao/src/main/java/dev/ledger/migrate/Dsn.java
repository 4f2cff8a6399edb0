package dev.ledger.migrate;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import org.postgresql.Driver;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A PostgreSQL connection string that may carry credentials, kept out of every message: a JDBC URL
 * ({@code jdbc:postgresql://host:port/db?user=u&password=p}) or a libpq connection URI ({@code
 * postgresql://u:p@host:port/db}, also {@code postgres://}), the form the reference stack stores in
 * its {@code harness_tenants} registry; a URI is turned into the equivalent JDBC URL (user and
 * password from the user information become parameters, the other parameters are passed on).
 *
 * <p>{@link #toString()} never shows it; {@link #redact(String)} removes it and its password from a
 * text (an error message from the driver or Flyway) before that text goes into a report, a log line
 * or an exception. The PostgreSQL driver's own {@code setUrl} puts an invalid URL into its
 * exception message, so {@link #parse(String)} validates first and never passes an invalid one on.
 */
public final class Dsn {

  private static final Pattern PASSWORD_PARAMETER = Pattern.compile("(?i)[?&]password=([^&]*)");
  private static final String REDACTED = "***";

  /** An authority with user information: {@code //user[:password]@host}. */
  private static final Pattern USER_INFO = Pattern.compile("^jdbc:postgresql://[^/?#]*@");

  /** A libpq connection URI: user information, hosts, database, parameters. */
  private static final Pattern LIBPQ_URI =
      Pattern.compile("^postgres(?:ql)?://(?:([^@/?#]*)@)?([^/?#]*)(/[^?#]*)?(?:\\?([^#]*))?$");

  private final String url;
  private final List<String> secrets;
  private final String description;

  private Dsn(String url, List<String> secrets, String description) {
    this.url = url;
    this.secrets = secrets;
    this.description = description;
  }

  /**
   * Parses and checks a JDBC URL or a libpq connection URI.
   *
   * @param text e.g. {@code jdbc:postgresql://127.0.0.1:5432/demo?user=postgres} or {@code
   *     postgresql://postgres:secret@127.0.0.1:5432/demo}, not null
   * @return the DSN
   * @throws IllegalArgumentException naming the field {@code dsn} when the text is neither a
   *     PostgreSQL JDBC URL nor a libpq URI with a host; the message never repeats the text
   */
  public static Dsn parse(String text) {
    if (text != null && (text.startsWith("postgresql://") || text.startsWith("postgres://"))) {
      return fromUri(text);
    }
    return parseJdbc(text, List.of());
  }

  /** A libpq URI as the JDBC URL pgjdbc reads; the URI's own text and password are secrets too. */
  private static Dsn fromUri(String uri) {
    Matcher m = LIBPQ_URI.matcher(uri);
    if (!m.matches() || m.group(2).isEmpty()) {
      throw new IllegalArgumentException(
          "dsn: not a libpq connection URI with a host; expected"
              + " postgresql://[user[:password]@]host[:port]/database[?parameters]");
    }
    List<String> secrets = new ArrayList<>();
    secrets.add(uri);
    List<String> parameters = new ArrayList<>();
    String userInfo = m.group(1);
    if (userInfo != null && !userInfo.isEmpty()) {
      int colon = userInfo.indexOf(':');
      String user = colon < 0 ? userInfo : userInfo.substring(0, colon);
      if (!user.isEmpty()) {
        parameters.add("user=" + encode(decodeUserInfo(user)));
      }
      if (colon >= 0 && colon + 1 < userInfo.length()) {
        String raw = userInfo.substring(colon + 1);
        String password = decodeUserInfo(raw);
        secrets.add(raw);
        secrets.add(password);
        parameters.add("password=" + encode(password));
      }
    }
    if (m.group(4) != null && !m.group(4).isEmpty()) {
      parameters.add(m.group(4));
    }
    String database = m.group(3) == null ? "/" : m.group(3);
    String jdbc =
        "jdbc:postgresql://"
            + m.group(2)
            + database
            + (parameters.isEmpty() ? "" : "?" + String.join("&", parameters));
    return parseJdbc(jdbc, secrets);
  }

  private static String decodeUserInfo(String raw) {
    try {
      // in a URI's user information a '+' is a plus, not a space
      return URLDecoder.decode(raw.replace("+", "%2B"), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException malformed) {
      throw new IllegalArgumentException(
          "dsn: the user information of the URI has a malformed percent escape");
    }
  }

  private static String encode(String value) {
    return java.net.URLEncoder.encode(value, StandardCharsets.UTF_8);
  }

  private static Dsn parseJdbc(String url, List<String> extraSecrets) {
    Properties parsed =
        url == null || !url.startsWith("jdbc:postgresql:") ? null : Driver.parseURL(url, null);
    if (parsed == null) {
      throw new IllegalArgumentException(
          "dsn: not a PostgreSQL JDBC URL; expected"
              + " jdbc:postgresql://host[:port]/database[?user=...&password=...]"
              + " (or a libpq URI: postgresql://user:password@host[:port]/database)");
    }
    if (USER_INFO.matcher(url).find()) {
      // the driver would take "user:password@host" for a host name, and name it in its errors
      throw new IllegalArgumentException(
          "dsn: credentials before the host (user:password@host) are not supported by the"
              + " PostgreSQL JDBC driver; give them as parameters:"
              + " jdbc:postgresql://host[:port]/database?user=...&password=...");
    }
    List<String> secrets = new ArrayList<>(extraSecrets);
    secrets.add(url);
    String password = parsed.getProperty("password");
    if (password != null && !password.isEmpty()) {
      secrets.add(password);
    }
    Matcher m = PASSWORD_PARAMETER.matcher(url);
    while (m.find()) {
      String raw = m.group(1);
      if (!raw.isEmpty()) {
        secrets.add(raw);
        try {
          secrets.add(URLDecoder.decode(raw, StandardCharsets.UTF_8));
        } catch (IllegalArgumentException malformed) {
          // the raw form is redacted already
        }
      }
    }
    secrets.removeIf(String::isEmpty);
    secrets.sort(Comparator.comparingInt(String::length).reversed());
    String host = parsed.getProperty("PGHOST", "localhost");
    String port = parsed.getProperty("PGPORT", "5432");
    String database = parsed.getProperty("PGDBNAME", "");
    return new Dsn(url, List.copyOf(secrets), host + ":" + port + "/" + database);
  }

  /**
   * A non-pooled data source over this URL: every {@code getConnection()} opens a new connection,
   * within pgjdbc's {@code connectTimeout} (10 s) and a {@code loginTimeout} of {@link
   * dev.ledger.Timeouts#connect()}'s default (10 s) unless the URL sets one.
   *
   * @return the data source
   */
  public DataSource dataSource() {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(url);
    if (!url.toLowerCase(java.util.Locale.ROOT).contains("logintimeout=")) {
      // pgjdbc bounds the TCP connect (connectTimeout, 10 s) but not the login after it: a server
      // that accepts and then never answers would hold the job forever
      ds.setLoginTimeout((int) dev.ledger.Timeouts.defaults().connect().toSeconds());
    }
    return ds;
  }

  /**
   * Opens a new, dedicated connection (never pooled).
   *
   * @return an open connection; the caller closes it
   * @throws SQLException when the database cannot be reached; the driver's messages name host and
   *     port, never the password, and callers still pass them through {@link #redact(String)}
   */
  public Connection connect() throws SQLException {
    return dataSource().getConnection();
  }

  /**
   * Removes the URL and its password from a text.
   *
   * @param text any text, may be null
   * @return the text with each occurrence replaced by {@code ***}; null for null
   */
  public String redact(String text) {
    if (text == null) {
      return null;
    }
    String out = text;
    for (String secret : secrets) {
      out = out.replace(secret, REDACTED);
    }
    return out;
  }

  /**
   * Host, port and database, without user or password, for messages that need to say where.
   *
   * @return e.g. {@code 127.0.0.1:5432/demo}
   */
  public String describe() {
    return description;
  }

  /** Never the URL. */
  @Override
  public String toString() {
    return "Dsn[" + description + ", credentials redacted]";
  }
}
