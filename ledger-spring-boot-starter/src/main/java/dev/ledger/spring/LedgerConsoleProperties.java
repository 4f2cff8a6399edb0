package dev.ledger.spring;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code ledger.console.*} properties: the operator console inside the service ({@link
 * LedgerConsoleAutoConfiguration}).
 */
@ConfigurationProperties(prefix = "ledger.console")
public class LedgerConsoleProperties {

  private boolean enabled;
  private String path = "/ledger";
  private String password;
  private boolean readOnly;
  private String handling = "internal";

  /** Creates the properties with their defaults. */
  public LedgerConsoleProperties() {}

  /**
   * Whether the console is served; off by default.
   *
   * @return {@code ledger.console.enabled}
   */
  public boolean isEnabled() {
    return enabled;
  }

  /**
   * Serves the console or not.
   *
   * @param enabled true to serve it
   */
  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  /**
   * Where the console is served, below the service's context path.
   *
   * @return {@code ledger.console.path}, {@code /ledger} by default
   */
  public String getPath() {
    return path;
  }

  /**
   * Sets where the console is served.
   *
   * @param path {@code /} and a path without a trailing {@code /}, e.g. {@code /ledger}
   */
  public void setPath(String path) {
    this.path = path;
  }

  /**
   * The password of the console's own login (user {@code admin}); used only where the service has
   * no Spring Security, and then required.
   *
   * @return {@code ledger.console.password}, or null
   */
  public String getPassword() {
    return password;
  }

  /**
   * Sets the console's own password.
   *
   * @param password at least 8 characters
   */
  public void setPassword(String password) {
    this.password = password;
  }

  /**
   * Whether every action is refused.
   *
   * @return {@code ledger.console.read-only}, false by default
   */
  public boolean isReadOnly() {
    return readOnly;
  }

  /**
   * Refuses every action or not.
   *
   * @param readOnly true to refuse actions
   */
  public void setReadOnly(boolean readOnly) {
    this.readOnly = readOnly;
  }

  /**
   * The most sensitive label whose task titles and bodies the console shows.
   *
   * @return {@code ledger.console.handling}, {@code internal} by default
   */
  public String getHandling() {
    return handling;
  }

  /**
   * Sets the handling label.
   *
   * @param handling {@code public}, {@code internal}, {@code confidential} or {@code restricted}
   */
  public void setHandling(String handling) {
    this.handling = handling;
  }
}
