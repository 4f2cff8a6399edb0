package dev.ledger.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code ledger.worker.*} properties: the worker pool the starter runs over the {@link
 * LedgerTaskHandler} beans. Mutable bean for binding; read once, when the context starts.
 */
@ConfigurationProperties(prefix = "ledger.worker")
public class LedgerWorkerProperties {

  /** Whether the starter runs a worker pool when LedgerTaskHandler beans exist. */
  private boolean enabled = true;

  /** How many tasks run at once (worker threads), 1 to 1000. */
  private int concurrency = 4;

  /** How long each lease lasts, 300 ms to 7 days; the pool heartbeats every third of it. */
  private Duration lease = Duration.ofSeconds(30);

  /** How often the pool claims when no wake-up came, 10 ms to 1 hour. */
  private Duration pollInterval = Duration.ofSeconds(5);

  /** How long shutdown waits for running handlers before it interrupts them. */
  private Duration shutdownTimeout = Duration.ofSeconds(30);

  /**
   * Whether the pool's log lines may carry a failure's text (the handler's message, which may hold
   * personal data from the task); by default they carry task ids and error classes only.
   */
  private boolean logTaskText;

  /**
   * How long a handler may run before it is interrupted and its attempt fails as timed out (retried
   * like any failure), 10 ms to 1 day; no limit when unset (docs/controls.md).
   */
  private Duration handlerTimeout;

  /**
   * The holder name leases are taken in, unique per pool; by default host, pid and a random part.
   */
  private String holder;

  /**
   * The requirements this service's workers meet: a task is claimed only when all of its are here.
   */
  private List<String> manifest = new ArrayList<>();

  /**
   * Whether the pool starts although a served domain has no schema yet (it waits for the domain's
   * first task); by default an unknown domain fails startup. Provisioning the domains at startup
   * (ledger.migration.domains) avoids the question.
   */
  private boolean awaitUnknownDomains = false;

  /**
   * Runs per retry chain (a task and its retries) unless the task's spec sets its own, 1 to 1000.
   */
  private int maxAttempts = 5;

  /** The wait before the retry after the first failed attempt. */
  private Duration retryInitial = Duration.ofSeconds(1);

  /** The longest wait before a retry. */
  private Duration retryMax = Duration.ofMinutes(5);

  /** How much each wait grows, at least 1. */
  private double retryMultiplier = 2.0;

  /** The random share taken off each wait, 0 to 0.5. */
  private double retryJitter = 0.2;

  /**
   * @return whether the pool runs
   */
  public boolean isEnabled() {
    return enabled;
  }

  /**
   * @param enabled false to run no pool
   */
  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  /**
   * @return worker threads
   */
  public int getConcurrency() {
    return concurrency;
  }

  /**
   * @param concurrency worker threads, 1 to 1000
   */
  public void setConcurrency(int concurrency) {
    this.concurrency = concurrency;
  }

  /**
   * @return the lease
   */
  public Duration getLease() {
    return lease;
  }

  /**
   * @param lease 300 ms to 7 days
   */
  public void setLease(Duration lease) {
    this.lease = lease;
  }

  /**
   * @return the poll interval
   */
  public Duration getPollInterval() {
    return pollInterval;
  }

  /**
   * @param pollInterval 10 ms to 1 hour
   */
  public void setPollInterval(Duration pollInterval) {
    this.pollInterval = pollInterval;
  }

  /**
   * @return the handler timeout, or null for none
   */
  public Duration getHandlerTimeout() {
    return handlerTimeout;
  }

  /**
   * @param handlerTimeout the handler timeout, 10 ms to 1 day, or null for none
   */
  public void setHandlerTimeout(Duration handlerTimeout) {
    this.handlerTimeout = handlerTimeout;
  }

  /**
   * @return whether log lines may carry a failure's text
   */
  public boolean isLogTaskText() {
    return logTaskText;
  }

  /**
   * @param logTaskText true to log failures' text (the handler's message)
   */
  public void setLogTaskText(boolean logTaskText) {
    this.logTaskText = logTaskText;
  }

  /**
   * @return the shutdown timeout
   */
  public Duration getShutdownTimeout() {
    return shutdownTimeout;
  }

  /**
   * @param shutdownTimeout zero or more
   */
  public void setShutdownTimeout(Duration shutdownTimeout) {
    this.shutdownTimeout = shutdownTimeout;
  }

  /**
   * @return the holder, or null for the pool's default
   */
  public String getHolder() {
    return holder;
  }

  /**
   * @param holder the holder name, or null
   */
  public void setHolder(String holder) {
    this.holder = holder;
  }

  /**
   * @return the manifest, mutable
   */
  public List<String> getManifest() {
    return manifest;
  }

  /**
   * @param manifest the requirements met
   */
  public void setManifest(List<String> manifest) {
    this.manifest = manifest;
  }

  /**
   * @return whether unknown domains are awaited
   */
  public boolean isAwaitUnknownDomains() {
    return awaitUnknownDomains;
  }

  /**
   * @param awaitUnknownDomains true to start with domains that have no schema yet
   */
  public void setAwaitUnknownDomains(boolean awaitUnknownDomains) {
    this.awaitUnknownDomains = awaitUnknownDomains;
  }

  /**
   * @return runs per retry chain by default
   */
  public int getMaxAttempts() {
    return maxAttempts;
  }

  /**
   * @param maxAttempts runs per retry chain by default, 1 to 1000
   */
  public void setMaxAttempts(int maxAttempts) {
    this.maxAttempts = maxAttempts;
  }

  /**
   * @return the wait after the first failure
   */
  public Duration getRetryInitial() {
    return retryInitial;
  }

  /**
   * @param retryInitial the wait after the first failure, more than zero
   */
  public void setRetryInitial(Duration retryInitial) {
    this.retryInitial = retryInitial;
  }

  /**
   * @return the longest wait
   */
  public Duration getRetryMax() {
    return retryMax;
  }

  /**
   * @param retryMax the longest wait, at least the initial one
   */
  public void setRetryMax(Duration retryMax) {
    this.retryMax = retryMax;
  }

  /**
   * @return how much each wait grows
   */
  public double getRetryMultiplier() {
    return retryMultiplier;
  }

  /**
   * @param retryMultiplier how much each wait grows, at least 1
   */
  public void setRetryMultiplier(double retryMultiplier) {
    this.retryMultiplier = retryMultiplier;
  }

  /**
   * @return the random share taken off each wait
   */
  public double getRetryJitter() {
    return retryJitter;
  }

  /**
   * @param retryJitter the random share taken off each wait, 0 to 0.5
   */
  public void setRetryJitter(double retryJitter) {
    this.retryJitter = retryJitter;
  }
}
