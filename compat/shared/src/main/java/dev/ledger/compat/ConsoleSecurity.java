package dev.ledger.compat;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configuration.EnableWebSecurity;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;

/**
 * The service's own security, as a team would write it: the ledger's operator console under {@code
 * /ledger} ({@code ledger.console.enabled=true}) needs an operator (HTTP Basic, user {@code ops},
 * password {@code compat.ops.password}); the rest of the service is open. The console adds no login
 * of its own behind it (the starter sees Spring Security and trusts it). Only in a servlet web
 * application: the tests that start no server have no filter chain to build.
 */
@Configuration
@EnableWebSecurity
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
public class ConsoleSecurity {

  /** Creates the configuration. */
  public ConsoleSecurity() {}

  /**
   * The filter chain: {@code /ledger/**} authenticated, everything else permitted.
   *
   * @param http Spring Security's builder
   * @return the chain
   * @throws Exception when Spring Security refuses the configuration
   */
  @Bean
  SecurityFilterChain filterChain(HttpSecurity http) throws Exception {
    http.authorizeHttpRequests(
            a ->
                a.requestMatchers("/ledger/**", "/ledger").authenticated().anyRequest().permitAll())
        .httpBasic(Customizer.withDefaults());
    return http.build();
  }

  /**
   * The one operator.
   *
   * @param password {@code compat.ops.password}, required in a web application
   * @return the users
   */
  @Bean
  UserDetailsService operators(@Value("${compat.ops.password}") String password) {
    return new InMemoryUserDetailsManager(
        User.withUsername("ops").password("{noop}" + password).roles("OPS").build());
  }
}
