package dev.ledger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ledger.testing.PostgresExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What becomes of the tasks that wait on a dead letter: they can never run (a dependency must be
 * completed), so they become dead letters too, in the dead letter's transaction, each naming its
 * dependency, across domains and transitively; re-filing the dead letter and then them makes them
 * depend on its re-filed successor, so the work goes on once the cause is fixed. Replay yields the
 * same rows.
 */
class DeadLetterDependentsTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  private static final Duration LEASE = Duration.ofMinutes(1);

  @Test
  void dependents_of_a_dead_letter_become_dead_letters_and_run_after_both_are_refiled() {
    Ledger ledger = Ledger.open(PG.dataSource());
    String root = ledger.fileAndAdmit(TaskSpec.builder("dl-build", "build").maxAttempts(1).build());
    String deploy =
        ledger.fileAndAdmit(
            TaskSpec.builder("dl-build", "deploy").dependsOn(List.of(root)).build());
    String announce =
        ledger.fileAndAdmit(
            TaskSpec.builder("dl-mail", "announce").dependsOn(List.of(deploy)).build());
    String other = ledger.fileAndAdmit(TaskSpec.builder("dl-build", "unrelated").build());

    Lease lease = claim(ledger, "dl-build", "build").orElseThrow();
    assertThat(lease.taskId()).isEqualTo(root);
    FailureRecord f = ledger.fail(lease, "compiler crashed", 5, Duration.ZERO);
    assertThat(f.deadLetter()).isTrue();

    Task d = ledger.get(deploy);
    assertThat(d.status()).isEqualTo(Status.INVALIDATED);
    assertThat(d.reason())
        .isEqualTo(
            "dead letter: dependency "
                + root
                + " is a dead letter, so this task cannot run; re-file "
                + root
                + " first, then this task");
    assertThat(d.supersededBy()).isNull();
    Task a = ledger.get(announce);
    assertThat(a.status()).isEqualTo(Status.INVALIDATED);
    assertThat(a.reason()).startsWith("dead letter: dependency " + deploy + " is a dead letter");
    assertThat(ledger.deadLetters("dl-build")).extracting(Task::id).containsExactly(root, deploy);
    assertThat(ledger.deadLetters("dl-mail")).extracting(Task::id).containsExactly(announce);
    assertThat(ledger.get(other).status()).isEqualTo(Status.ADMITTED);

    // a dependent first: it would wait on the dead letter forever, so it is refused
    assertThatThrownBy(() -> ledger.refile(deploy))
        .isInstanceOf(WrongStateException.class)
        .hasMessageContaining("its dependency " + root + " is a dead letter that was not re-filed")
        .hasMessageContaining("re-file " + root + " first");

    String root2 = ledger.refile(root);
    // a re-filed dead letter leaves the list; the others stay until re-filed
    assertThat(ledger.deadLetters("dl-build")).extracting(Task::id).containsExactly(deploy);
    String deploy2 = ledger.refile(deploy);
    assertThat(ledger.deadLetters("dl-build")).isEmpty();
    String announce2 = ledger.refile(announce);
    assertThat(ledger.refile(deploy)).isEqualTo(deploy2);
    assertThat(ledger.get(deploy2).spec().dependsOn()).containsExactly(root2);
    assertThat(ledger.get(announce2).spec().dependsOn()).containsExactly(deploy2);
    assertThat(ledger.get(deploy2).spec().origin()).isEqualTo("retries:" + deploy);
    assertThat(ledger.get(deploy2).spec().upstreamEvent()).isEqualTo("refiled:" + deploy);
    assertThat(ledger.deadLetters("dl-mail")).isEmpty();

    // the chain runs in order once the cause is fixed
    assertThat(claim(ledger, "dl-mail", "announce")).isEmpty();
    List<String> ran = new ArrayList<>();
    for (String[] step :
        List.of(
            new String[] {"dl-build", "build"},
            new String[] {"dl-build", "deploy"},
            new String[] {"dl-mail", "announce"})) {
      Lease l = claim(ledger, step[0], step[1]).orElseThrow();
      ran.add(l.taskId());
      ledger.complete(l, "ok");
    }
    assertThat(ran).containsExactly(root2, deploy2, announce2);

    List<Task> before = new ArrayList<>();
    for (String id : List.of(root, deploy, announce, other, root2, deploy2, announce2)) {
      before.add(ledger.get(id));
    }
    ledger.rebuild();
    List<Task> after = new ArrayList<>();
    for (String id : List.of(root, deploy, announce, other, root2, deploy2, announce2)) {
      after.add(ledger.get(id));
    }
    assertThat(after).isEqualTo(before);
  }

  /** Claims the next task of the domain if it has the title; the others are left claimable. */
  private static Optional<Lease> claim(Ledger ledger, String domain, String title) {
    List<Lease> all = ledger.claimBatch(domain, "w", LEASE, List.of(), Label.PUBLIC, 10);
    Optional<Lease> wanted = Optional.empty();
    for (Lease l : all) {
      if (wanted.isEmpty() && ledger.get(l.taskId()).spec().title().equals(title)) {
        wanted = Optional.of(l);
      } else {
        ledger.release(l);
      }
    }
    return wanted;
  }
}
