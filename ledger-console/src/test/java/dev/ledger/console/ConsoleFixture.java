package dev.ledger.console;

import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import java.time.Duration;
import java.util.List;

/**
 * The ledger the console tests look at: domain {@code payments} with admitted, claimed, delayed,
 * confidential and dead-letter tasks, and a dependency.
 */
final class ConsoleFixture {

  static final String DOMAIN = "payments";
  static final String SECRET_BODY = "IBAN DE89 3704 0044 0532 0130 00";

  final String first;
  final String second;
  final String claimed;
  final String confidential;
  final String dependent;
  final String deadTimeout1;
  final String deadTimeout2;
  final String deadRefused;
  final String proposed;

  ConsoleFixture(Ledger ledger) {
    first = admitted(ledger, "Reconcile batch 1", 9, List.of("sql"));
    second = admitted(ledger, "Reconcile batch 2", 5, List.of());
    claimed = admitted(ledger, "Send statement", 3, List.of());
    ledger.claim(claimed, "worker-7", Duration.ofMinutes(10), List.of(), Label.INTERNAL);
    confidential =
        ledger.fileAndAdmit(
            TaskSpec.builder(DOMAIN, "Payroll for the board")
                .body(SECRET_BODY)
                .classification(Label.CONFIDENTIAL)
                .priority(1)
                .build());
    dependent =
        ledger.fileAndAdmit(
            TaskSpec.builder(DOMAIN, "Close the month").dependsOn(List.of(first)).build());
    deadTimeout1 = dead(ledger, "Charge card 1", "gateway timeout");
    deadTimeout2 = dead(ledger, "Charge card 2", "gateway timeout");
    deadRefused = dead(ledger, "Charge card 3", "card refused");
    proposed = ledger.file(TaskSpec.builder(DOMAIN, "Draft refund").build());
    String done = admitted(ledger, "Reconcile batch 0", 20, List.of());
    ledger.complete(
        ledger.claim(done, "worker-7", Duration.ofMinutes(10), List.of(), Label.INTERNAL),
        "reconciled: 0 differences");
  }

  private static String admitted(Ledger ledger, String title, long priority, List<String> req) {
    return ledger.fileAndAdmit(
        TaskSpec.builder(DOMAIN, title)
            .body("body of " + title)
            .priority(priority)
            .requirements(req)
            .build());
  }

  private static String dead(Ledger ledger, String title, String error) {
    String id =
        ledger.fileAndAdmit(TaskSpec.builder("cards", title).body("charge " + title).build());
    Lease lease = ledger.claim(id, "worker-1", Duration.ofMinutes(1), List.of(), Label.INTERNAL);
    ledger.fail(lease, error, 1, Duration.ZERO);
    return id;
  }
}
