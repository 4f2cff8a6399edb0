package dev.ledger.console;

import dev.ledger.Label;
import dev.ledger.Ledger;
import dev.ledger.Status;
import dev.ledger.Task;
import dev.ledger.TaskNotFoundException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Why one task is not claimable, with the conditions {@code ledger-app task claim} checks when it
 * finds nothing (its {@code NothingToClaim}), for one task instead of a domain: admitted (or
 * claimed with an expired lease), every requirement in the claimer's manifest ({@code --can}),
 * label at most the claimer's handling, every dependency completed, no open {@code continues:<id>}
 * task. Read through the ledger's API only.
 */
final class Why {

  private Why() {}

  /**
   * The reasons, each one line; empty when the task is claimable now.
   *
   * @param ledger the ledger
   * @param task the task
   * @param can the claimer's manifest
   * @param handling the claimer's handling label
   * @param now the time leases are compared with
   * @return the reasons, in the order {@code task claim} checks them
   */
  static List<String> reasons(
      Ledger ledger, Task task, Collection<String> can, Label handling, Instant now) {
    List<String> why = new ArrayList<>();
    switch (task.status()) {
      case COMPLETED, INVALIDATED -> {
        why.add("it is " + task.status().wire() + ": finished tasks are never claimed");
        return why;
      }
      case PROPOSED -> {
        Instant due = task.spec().notBefore();
        why.add(
            due != null && due.isAfter(now)
                ? "it is not admitted: delayed until " + Format.time(due)
                : "it is not admitted (admit it: task admit ID)");
      }
      case CLAIMED -> {
        if (task.leaseUntil() != null && !task.leaseUntil().isBefore(now)) {
          why.add(
              "it is leased by "
                  + task.holder()
                  + " (attempt "
                  + task.attempts()
                  + ") until "
                  + Format.time(task.leaseUntil()));
        }
      }
      case ADMITTED -> {}
    }
    List<String> lacking =
        task.spec().requirements().stream().filter(r -> !can.contains(r)).toList();
    if (!lacking.isEmpty()) {
      why.add("it needs --can " + String.join(" --can ", lacking));
    }
    Label label = task.spec().classification();
    if (!handling.canHandle(label)) {
      why.add("it is labelled " + label.wire() + ", above --handling " + handling.wire());
    }
    for (String dep : task.spec().dependsOn()) {
      String state = dependencyStatus(ledger, dep);
      if (!state.equals(Status.COMPLETED.wire())) {
        why.add("it waits on dependency " + dep + " (" + state + ")");
      }
    }
    for (Task c : ledger.withOrigin(task.spec().domain(), "continues:" + task.id())) {
      if (!c.status().terminal()) {
        why.add("it waits on its continuation " + c.id() + " (" + c.status().wire() + ")");
      }
    }
    return why;
  }

  static String dependencyStatus(Ledger ledger, String id) {
    try {
      return ledger.get(id).status().wire();
    } catch (TaskNotFoundException e) {
      return "not filed";
    }
  }
}
