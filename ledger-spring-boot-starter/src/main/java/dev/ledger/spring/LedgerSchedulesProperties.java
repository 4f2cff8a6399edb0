package dev.ledger.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code ledger.schedules.<name>.*}: schedules declared in the application's configuration, added
 * or changed at start ({@link LedgerSchedulesAutoConfiguration}). Schedules added at run time (the
 * API, {@code ledger-app schedule add}) are left alone; a declared one removed from the
 * configuration stays in the database until removed there.
 *
 * <pre>
 * ledger.schedules.nightly-report.domain=reports
 * ledger.schedules.nightly-report.cron=30 2 * * *
 * ledger.schedules.nightly-report.zone=Europe/Berlin
 * ledger.schedules.nightly-report.title=Build the nightly report
 * ledger.schedules.heartbeat.domain=ops
 * ledger.schedules.heartbeat.every=30s
 * ledger.schedules.heartbeat.title=Check the queue
 * </pre>
 */
@ConfigurationProperties(prefix = "ledger")
public class LedgerSchedulesProperties {

  private final Map<String, Declared> schedules = new LinkedHashMap<>();

  /**
   * The declared schedules by name.
   *
   * @return the map, mutable (bound by Spring)
   */
  public Map<String, Declared> getSchedules() {
    return schedules;
  }

  /** One declared schedule; the fields of {@code dev.ledger.schedule.ScheduleSpec}. */
  public static class Declared {
    private String domain;
    private String cron;
    private String zone = "UTC";
    private Duration every;
    private String title;
    private String body = "";
    private List<String> requirements = new ArrayList<>();
    private String label = "public";
    private long priority;
    private int maxAttempts;
    private int catchUp = 1;

    /**
     * The domain.
     *
     * @return the domain
     */
    public String getDomain() {
      return domain;
    }

    /**
     * Sets the domain its tasks are filed in.
     *
     * @param domain the domain
     */
    public void setDomain(String domain) {
      this.domain = domain;
    }

    /**
     * The cron expression.
     *
     * @return 5 or 6 fields, or null for an interval
     */
    public String getCron() {
      return cron;
    }

    /**
     * Sets the cron expression (excludes {@code every}).
     *
     * @param cron 5 fields (minute first) or 6 (second first)
     */
    public void setCron(String cron) {
      this.cron = cron;
    }

    /**
     * The cron expression's time zone.
     *
     * @return the zone id, {@code UTC} by default
     */
    public String getZone() {
      return zone;
    }

    /**
     * Sets the cron expression's time zone.
     *
     * @param zone a region id, e.g. {@code Europe/Berlin}
     */
    public void setZone(String zone) {
      this.zone = zone;
    }

    /**
     * The interval.
     *
     * @return whole seconds, or null for a cron expression
     */
    public Duration getEvery() {
      return every;
    }

    /**
     * Sets a fixed interval (excludes {@code cron}).
     *
     * @param every whole seconds, e.g. {@code 30s}
     */
    public void setEvery(Duration every) {
      this.every = every;
    }

    /**
     * Each task's title.
     *
     * @return the title
     */
    public String getTitle() {
      return title;
    }

    /**
     * Sets each task's title.
     *
     * @param title the title
     */
    public void setTitle(String title) {
      this.title = title;
    }

    /**
     * Each task's body.
     *
     * @return the body, empty by default
     */
    public String getBody() {
      return body;
    }

    /**
     * Sets each task's body.
     *
     * @param body the body
     */
    public void setBody(String body) {
      this.body = body;
    }

    /**
     * Each task's requirements.
     *
     * @return the list, mutable
     */
    public List<String> getRequirements() {
      return requirements;
    }

    /**
     * Sets each task's requirements.
     *
     * @param requirements the requirements
     */
    public void setRequirements(List<String> requirements) {
      this.requirements = requirements;
    }

    /**
     * Each task's label.
     *
     * @return the label's wire name, {@code public} by default
     */
    public String getLabel() {
      return label;
    }

    /**
     * Sets each task's label.
     *
     * @param label public, internal, confidential or restricted
     */
    public void setLabel(String label) {
      this.label = label;
    }

    /**
     * Each task's priority.
     *
     * @return the priority
     */
    public long getPriority() {
      return priority;
    }

    /**
     * Sets each task's priority.
     *
     * @param priority higher is claimed first
     */
    public void setPriority(long priority) {
      this.priority = priority;
    }

    /**
     * Each task's maximum of attempts.
     *
     * @return 1 to 1000, or 0 for the pool's default
     */
    public int getMaxAttempts() {
      return maxAttempts;
    }

    /**
     * Sets each task's maximum of attempts.
     *
     * @param maxAttempts 1 to 1000, or 0 for the pool's default
     */
    public void setMaxAttempts(int maxAttempts) {
      this.maxAttempts = maxAttempts;
    }

    /**
     * The catch-up policy.
     *
     * @return how many of the latest missed ticks are filed after downtime, 1 by default
     */
    public int getCatchUp() {
      return catchUp;
    }

    /**
     * Sets the catch-up policy.
     *
     * @param catchUp 1 (the latest only) to 1000
     */
    public void setCatchUp(int catchUp) {
      this.catchUp = catchUp;
    }
  }
}
