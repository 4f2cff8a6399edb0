package dev.ledger.spring;

import dev.ledger.InvalidInputException;
import dev.ledger.Label;
import dev.ledger.Ledger;
import dev.ledger.schedule.ScheduleSpec;
import dev.ledger.schedule.Timing;
import java.util.Map;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Adds or changes the schedules declared under {@code ledger.schedules.<name>.*} ({@link
 * LedgerSchedulesProperties}) once the context's singletons exist, before any worker pool files a
 * tick: {@code Schedules.put}, so a restart with an unchanged declaration writes nothing and many
 * instances starting at once converge on one row per name. A bad declaration fails the start with
 * the property's name ({@code ledger.schedules.nightly.cron: ...}).
 */
@AutoConfiguration(after = LedgerAutoConfiguration.class)
@ConditionalOnBean(Ledger.class)
@ConditionalOnProperty(prefix = "ledger", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(LedgerSchedulesProperties.class)
public class LedgerSchedulesAutoConfiguration {

  /** Creates the configuration. */
  public LedgerSchedulesAutoConfiguration() {}

  /**
   * Upserts the declared schedules at start.
   *
   * @param ledger the ledger
   * @param properties {@code ledger.schedules.*}
   * @return the initializer
   */
  @Bean
  public SmartInitializingSingleton ledgerDeclaredSchedules(
      Ledger ledger, LedgerSchedulesProperties properties) {
    return () -> {
      for (Map.Entry<String, LedgerSchedulesProperties.Declared> e :
          properties.getSchedules().entrySet()) {
        String name = e.getKey();
        try {
          ledger.schedules().put(spec(name, e.getValue()));
        } catch (InvalidInputException x) {
          throw new IllegalStateException(
              "ledger.schedules." + name + "." + property(x.field()) + ": " + rule(x), x);
        }
      }
    };
  }

  /** The property a field of the spec comes from. */
  private static String property(String field) {
    return switch (field) {
      case "interval" -> "every";
      case "classification" -> "label";
      case "timing" -> "cron";
      default -> field.replace('_', '-');
    };
  }

  private static String rule(InvalidInputException x) {
    String m = x.getMessage();
    return m.startsWith(x.field() + ": ") ? m.substring(x.field().length() + 2) : m;
  }

  /**
   * The spec of a declared schedule.
   *
   * @param name its name
   * @param d its properties
   * @return the spec
   * @throws InvalidInputException naming the field
   */
  static ScheduleSpec spec(String name, LedgerSchedulesProperties.Declared d) {
    if ((d.getCron() == null) == (d.getEvery() == null)) {
      throw new InvalidInputException("cron", "give cron or every (one of them)");
    }
    Timing timing =
        d.getCron() != null ? Timing.cron(d.getCron(), d.getZone()) : Timing.every(d.getEvery());
    return ScheduleSpec.builder(name, d.getDomain(), timing, d.getTitle())
        .body(d.getBody())
        .requirements(d.getRequirements())
        .label(Label.parse(d.getLabel()))
        .priority(d.getPriority())
        .maxAttempts(d.getMaxAttempts())
        .catchUp(d.getCatchUp())
        .build();
  }
}
