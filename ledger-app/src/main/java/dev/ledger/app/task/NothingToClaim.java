package dev.ledger.app.task;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.ClaimHold;
import dev.ledger.DomainControls;
import dev.ledger.Label;
import dev.ledger.Ledger;
import dev.ledger.Status;
import dev.ledger.Task;
import dev.ledger.TaskNotFoundException;
import dev.ledger.app.Output;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Why {@code task claim} found nothing: read after the claim came back empty, from the domain's
 * open tasks, with the claim's own conditions (admitted or lease expired, requirements within
 * {@code --can}, label at most {@code --handling}, dependencies completed, no open {@code
 * continues:<id>} task).
 *
 * <p>The reads run after the claim, outside its statement: a task filed, admitted or released in
 * between is counted as {@code claimable} ("try again"). Costs one read per status and one per
 * dependency; only the empty path of {@code task claim} pays it.
 *
 * @param domain the domain asked
 * @param known whether the domain has a schema at all
 * @param proposed tasks not admitted yet
 * @param missing for each requirement the claimer lacks, how many otherwise claimable tasks need it
 * @param aboveHandling tasks whose label is above {@code --handling}, by label
 * @param waiting tasks waiting on a dependency that is not completed
 * @param continued tasks waiting on an open {@code continues:<id>} task
 * @param leased tasks held by a live lease
 * @param leasedUntil the earliest lease end among them, or null
 * @param claimable tasks that meet every condition now (filed or released after the claim)
 * @param controls the domain's queue controls (a pause or a reached limit holds claims back), or
 *     null for an unknown domain
 * @param hold why the claim itself was held back by the controls ({@link Ledger#claimHold}), or
 *     null when it was not: then {@code claimable} tasks are held back, not "try again"
 */
record NothingToClaim(
    String domain,
    boolean known,
    int proposed,
    Map<String, Integer> missing,
    Map<String, Integer> aboveHandling,
    int waiting,
    int continued,
    int leased,
    Instant leasedUntil,
    int claimable,
    DomainControls controls,
    ClaimHold hold) {

  /**
   * Reads why nothing is claimable.
   *
   * @param ledger the ledger
   * @param domain the domain
   * @param can the claimer's manifest
   * @param handling the claimer's highest label
   * @param now the time the leases are compared with
   * @return the reasons
   */
  static NothingToClaim explain(
      Ledger ledger, String domain, Collection<String> can, Label handling, Instant now) {
    if (!ledger.domains().contains(domain)) {
      return new NothingToClaim(domain, false, 0, Map.of(), Map.of(), 0, 0, 0, null, 0, null, null);
    }
    int proposed = ledger.list(domain, Status.PROPOSED).size();
    Map<String, Integer> missing = new TreeMap<>();
    Map<String, Integer> above = new TreeMap<>();
    int waiting = 0;
    int continued = 0;
    int leased = 0;
    Instant leasedUntil = null;
    int claimable = 0;
    List<Task> open = new ArrayList<>(ledger.list(domain, Status.ADMITTED));
    open.addAll(ledger.list(domain, Status.CLAIMED));
    for (Task t : open) {
      if (t.status() == Status.CLAIMED && !t.leaseUntil().isBefore(now)) {
        leased++;
        leasedUntil =
            leasedUntil == null || t.leaseUntil().isBefore(leasedUntil)
                ? t.leaseUntil()
                : leasedUntil;
        continue;
      }
      List<String> lacking =
          t.spec().requirements().stream().filter(r -> !can.contains(r)).toList();
      if (!lacking.isEmpty()) {
        lacking.forEach(r -> missing.merge(r, 1, Integer::sum));
        continue;
      }
      Label label = t.spec().classification();
      if (!handling.canHandle(label)) {
        above.merge(label.wire(), 1, Integer::sum);
        continue;
      }
      if (!t.spec().dependsOn().stream().allMatch(d -> completed(ledger, d))) {
        waiting++;
        continue;
      }
      if (ledger.withOrigin(domain, "continues:" + t.id()).stream()
          .anyMatch(c -> !c.status().terminal())) {
        continued++;
        continue;
      }
      claimable++;
    }
    return new NothingToClaim(
        domain,
        true,
        proposed,
        missing,
        above,
        waiting,
        continued,
        leased,
        leasedUntil,
        claimable,
        ledger.controls(domain),
        ledger.claimHold(domain).orElse(null));
  }

  private static boolean completed(Ledger ledger, String id) {
    try {
      return ledger.get(id).status() == Status.COMPLETED;
    } catch (TaskNotFoundException e) {
      return false;
    }
  }

  /**
   * The one line {@code task claim} prints.
   *
   * @param handling the {@code --handling} given, for the message
   * @return e.g. {@code nothing to claim in payments: 2 need --can docker; 1 is leased until ...}
   */
  String line(Label handling) {
    String head = "nothing to claim in " + Output.fit(domain, 40);
    if (!known) {
      return head + ": no such domain (no task was ever filed in it)";
    }
    List<String> why = new ArrayList<>();
    String held = heldBy();
    if (held != null) {
      why.add(held);
    }
    missing.forEach((r, n) -> why.add(n + " " + (n == 1 ? "needs" : "need") + " --can " + r));
    aboveHandling.forEach(
        (l, n) -> why.add(n + " labelled " + l + ", above --handling " + handling.wire()));
    if (waiting > 0) {
      why.add(waiting + " " + (waiting == 1 ? "waits" : "wait") + " on a dependency");
    }
    if (continued > 0) {
      why.add(continued + " " + (continued == 1 ? "waits" : "wait") + " on a continuation");
    }
    if (leased > 0) {
      why.add(
          leased
              + " "
              + (leased == 1 ? "is" : "are")
              + " leased (the first lease ends "
              + Output.time(leasedUntil)
              + ")");
    }
    if (proposed > 0) {
      why.add(proposed + " " + (proposed == 1 ? "is" : "are") + " not admitted (task admit ID)");
    }
    if (claimable > 0 && hold != null) {
      why.add(claimable + " claimable, held back by the control");
    } else if (claimable > 0) {
      why.add(claimable + " became claimable since (try again)");
    }
    if (why.isEmpty()) {
      return head + ": no open tasks";
    }
    return head + ": " + String.join("; ", why);
  }

  /**
   * The control that holds the domain's claims back, in words, or null: a pause, a concurrency
   * limit reached (the tasks claimed now), or a rate limit (which the read cannot tell full or not:
   * it is named).
   */
  private String heldBy() {
    if (hold != null && hold.reason() == ClaimHold.Reason.RATE_LIMIT) {
      return hold.describe()
          + " ("
          + (controls == null ? "" : "at most " + controls.rateText() + " claims; ")
          + "try again in "
          + hold.retryAfter().toMillis()
          + " ms)";
    }
    if (hold != null && hold.reason() == ClaimHold.Reason.CONCURRENCY_LIMIT && controls != null) {
      return "the domain's concurrency limit is reached ("
          + controls.claimedNow()
          + " of at most "
          + controls.maxClaimed()
          + " claimed)";
    }
    if (hold != null && hold.reason() == ClaimHold.Reason.PAUSED) {
      return hold.describe() + " (ledger-app domain resume " + Output.fit(domain, 40) + ")";
    }
    if (controls == null || !controls.any()) {
      return null;
    }
    if (controls.paused()) {
      return "the domain is paused (ledger-app domain resume " + Output.fit(domain, 40) + ")";
    }
    if (controls.maxClaimed() != null && controls.claimedNow() >= controls.maxClaimed()) {
      return "the domain's concurrency limit is reached ("
          + controls.claimedNow()
          + " of at most "
          + controls.maxClaimed()
          + " claimed)";
    }
    if (controls.rateClaims() != null) {
      return "the domain's rate limit of " + controls.rateText() + " claims may be reached";
    }
    return null;
  }

  /**
   * The same as JSON fields, added to {@code task claim --json}'s document.
   *
   * @param doc the document
   * @param handling the {@code --handling} given
   */
  void into(ObjectNode doc, Label handling) {
    doc.put("reason", line(handling));
    ObjectNode counts = doc.putObject("nothingClaimable");
    counts.put("domainKnown", known);
    counts.put("notAdmitted", proposed);
    ObjectNode needs = counts.putObject("needsCan");
    missing.forEach(needs::put);
    ObjectNode labels = counts.putObject("labelAboveHandling");
    aboveHandling.forEach(labels::put);
    counts.put("waitingOnDependency", waiting);
    counts.put("waitingOnContinuation", continued);
    counts.put("leased", leased);
    counts.put("firstLeaseEnds", leasedUntil == null ? null : Output.time(leasedUntil));
    counts.put("claimableNow", claimable);
    if (hold == null) {
      doc.putNull("heldBack");
    } else {
      doc.put("heldBack", hold.reason().name().toLowerCase(java.util.Locale.ROOT));
      doc.put("retryAfterMs", hold.retryAfter().toMillis());
    }
    if (controls != null) {
      doc.set("controls", ControlCommands.controls(controls));
    }
  }
}
