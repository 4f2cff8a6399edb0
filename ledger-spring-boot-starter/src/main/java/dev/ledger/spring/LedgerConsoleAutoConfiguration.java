package dev.ledger.spring;

import dev.ledger.Label;
import dev.ledger.Ledger;
import dev.ledger.console.Console;
import javax.sql.DataSource;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.util.ClassUtils;

/**
 * Serves the operator console ({@code ledger-console}) inside a servlet web application when {@code
 * ledger.console.enabled=true}, under {@code ledger.console.path} ({@code /ledger}):
 *
 * <ul>
 *   <li>with Spring Security on the class path, the service's security decides who may see and act:
 *       its filter chain guards the path like any other, the console adds no login of its own
 *       ({@link Console.Builder#trustCaller(boolean)}), and its forms carry both Spring Security's
 *       CSRF token and the console's;
 *   <li>without it, the console's own login (user {@code admin}, {@code ledger.console.password},
 *       then required) and HTTP Basic, as standalone.
 * </ul>
 *
 * <p>{@code ledger.console.read-only} refuses every action; {@code ledger.console.handling} hides
 * the text of tasks labelled above it. Needs the {@code ledger-console} jar and a servlet container
 * (e.g. {@code spring-boot-starter-web}). Backs off when the application defines its own {@link
 * Console}.
 */
@AutoConfiguration(after = LedgerAutoConfiguration.class)
@ConditionalOnClass(
    name = {"dev.ledger.console.Console", "jakarta.servlet.http.HttpServlet"},
    value = ServletRegistrationBean.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnProperty(prefix = "ledger.console", name = "enabled", havingValue = "true")
@ConditionalOnBean(Ledger.class)
@EnableConfigurationProperties(LedgerConsoleProperties.class)
public class LedgerConsoleAutoConfiguration {

  /** Spring Security's filter chain type: present, it guards the console. */
  static final String SPRING_SECURITY = "org.springframework.security.web.SecurityFilterChain";

  /** Creates the auto-configuration. */
  public LedgerConsoleAutoConfiguration() {}

  /**
   * The console over the ledger and the application's {@code DataSource}.
   *
   * @param ledger the ledger
   * @param dataSource the application's data source, for the console's own reads
   * @param properties {@code ledger.console.*}
   * @param ledgerProperties {@code ledger.*}, for the directory schema
   * @return the console
   * @throws IllegalArgumentException naming {@code ledger.console.password} when the service has no
   *     Spring Security and no password is set, or {@code ledger.console.handling} when it is not a
   *     label
   */
  @Bean
  @ConditionalOnMissingBean
  public Console ledgerConsole(
      Ledger ledger,
      DataSource dataSource,
      LedgerConsoleProperties properties,
      LedgerProperties ledgerProperties) {
    boolean secured = ClassUtils.isPresent(SPRING_SECURITY, getClass().getClassLoader());
    Console.Builder b =
        Console.builder(ledger, dataSource)
            .directorySchema(ledgerProperties.getDirectorySchema())
            .basePath(properties.getPath())
            .readOnly(properties.isReadOnly())
            .handling(Label.parse(properties.getHandling()))
            .trustCaller(secured);
    if (!secured) {
      if (properties.getPassword() == null || properties.getPassword().length() < 8) {
        throw new IllegalArgumentException(
            "ledger.console.password: the console needs a password of at least 8 characters"
                + " where the service has no Spring Security (or add Spring Security, or set"
                + " ledger.console.enabled=false)");
      }
      b.password(properties.getPassword().toCharArray());
    }
    return b.build();
  }

  /**
   * The console's servlet under {@code ledger.console.path}.
   *
   * @param console the console
   * @param properties {@code ledger.console.*}
   * @return the registration
   */
  @Bean
  public ServletRegistrationBean<LedgerConsoleServlet> ledgerConsoleServlet(
      Console console, LedgerConsoleProperties properties) {
    ServletRegistrationBean<LedgerConsoleServlet> r =
        new ServletRegistrationBean<>(
            new LedgerConsoleServlet(console), properties.getPath(), properties.getPath() + "/*");
    r.setName("ledgerConsole");
    return r;
  }
}
