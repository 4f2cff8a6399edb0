package dev.ledger.tenants;

import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/** The unit of work of the tenant tests: file, admit, claim, complete one task. */
final class Cycles {

  static final String DOMAIN = "jobs";

  private Cycles() {}

  /**
   * One file+admit+claim+complete cycle on a ledger.
   *
   * @param ledger the tenant's ledger
   * @param holder the claimer
   * @return the id of the task filed
   */
  static String cycle(Ledger ledger, String holder) {
    String id = ledger.file(TaskSpec.builder(DOMAIN, "cycle").build());
    ledger.admit(id);
    // another thread's claim may hold (and skip-lock) the task just admitted while its own is
    // still unclaimed: try again, a task is always claimable right after an admit
    for (int attempt = 0; attempt < 100; attempt++) {
      Optional<Lease> lease =
          ledger.claimNext(DOMAIN, holder, Duration.ofMinutes(5), List.of(), Label.PUBLIC);
      if (lease.isPresent()) {
        ledger.complete(lease.get(), null);
        return id;
      }
    }
    throw new AssertionError("nothing claimable in 100 tries right after an admit");
  }

  /**
   * Appends a password parameter to a JDBC URL (trust authentication ignores it): a secret that
   * must never show up anywhere.
   *
   * @param url the URL
   * @param secret the password
   * @return the URL with {@code password=secret}
   */
  static String withPassword(String url, String secret) {
    return url + (url.contains("?") ? "&" : "?") + "password=" + secret;
  }

  /**
   * The message of an error and of every cause, one per line.
   *
   * @param e the error
   * @return the texts
   */
  static String chain(Throwable e) {
    StringBuilder b = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      b.append(t.getClass().getName()).append(": ").append(t.getMessage()).append('\n');
    }
    return b.toString();
  }
}
