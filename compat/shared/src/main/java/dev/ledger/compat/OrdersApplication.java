package dev.ledger.compat;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A small order service as a backend team would write it: its own table in {@code public} made by
 * its own Flyway migrations ({@code db/migration}), and the ledger (through {@code
 * ledger-spring-boot-starter}) filing a shipping task for every order in the order's transaction.
 * Built once per Spring Boot line by {@code compat/boot-*}, from the same sources, with the line's
 * managed versions and no overrides.
 */
@SpringBootApplication
public class OrdersApplication {

  /**
   * Starts the service.
   *
   * @param args Spring Boot's command-line arguments
   */
  public static void main(String[] args) {
    SpringApplication.run(OrdersApplication.class, args);
  }
}
