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
 * A PostgreSQL JDBC URL that may carry credentials ({@code
 * jdbc:postgresql://host:port/db?user=u&password=p}), kept out of every message.
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

  private final String url;
  private final List<String> secrets;
  private final String description;

  private Dsn(String url, List<String> secrets, String description) {
    this.url = url;
    this.secrets = secrets;
    this.description = description;
  }

  /**
   * Parses and checks a JDBC URL.
   *
   * @param url e.g. {@code jdbc:postgresql://127.0.0.1:5432/demo?user=postgres}, not null
   * @return the DSN
   * @throws IllegalArgumentException naming the field {@code dsn} when the text is not a PostgreSQL
   *     JDBC URL; the message never repeats the text
   */
  public static Dsn parse(String url) {
    Properties parsed =
        url == null || !url.startsWith("jdbc:postgresql:") ? null : Driver.parseURL(url, null);
    if (parsed == null) {
      throw new IllegalArgumentException(
          "dsn: not a PostgreSQL JDBC URL; expected"
              + " jdbc:postgresql://host[:port]/database[?user=...&password=...]");
    }
    if (USER_INFO.matcher(url).find()) {
      // the driver would take "user:password@host" for a host name, and name it in its errors
      throw new IllegalArgumentException(
          "dsn: credentials before the host (user:password@host) are not supported by the"
              + " PostgreSQL JDBC driver; give them as parameters:"
              + " jdbc:postgresql://host[:port]/database?user=...&password=...");
    }
    List<String> secrets = new ArrayList<>();
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
    secrets.sort(Comparator.comparingInt(String::length).reversed());
    String host = parsed.getProperty("PGHOST", "localhost");
    String port = parsed.getProperty("PGPORT", "5432");
    String database = parsed.getProperty("PGDBNAME", "");
    return new Dsn(url, List.copyOf(secrets), host + ":" + port + "/" + database);
  }

  /**
   * A non-pooled data source over this URL: every {@code getConnection()} opens a new connection.
   *
   * @return the data source
   */
  public DataSource dataSource() {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setUrl(url);
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
