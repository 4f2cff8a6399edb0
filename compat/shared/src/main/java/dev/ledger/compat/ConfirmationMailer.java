package dev.ledger.compat;

import dev.ledger.Task;
import dev.ledger.spring.LedgerTaskHandler;
import dev.ledger.worker.Outcome;
import dev.ledger.worker.TaskContext;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.stereotype.Component;

/**
 * The service's worker: a {@link LedgerTaskHandler} bean for the {@code mail} domain, which the
 * starter's worker pool runs (configured by {@code ledger.worker.*} in application.properties).
 * Here it "sends" a confirmation by remembering its body. Thread-safe.
 */
@Component
public class ConfirmationMailer implements LedgerTaskHandler {

  /** The ledger domain of the confirmation mails. */
  public static final String DOMAIN = "mail";

  private final List<String> sent = new CopyOnWriteArrayList<>();

  /** Created by Spring. */
  public ConfirmationMailer() {}

  @Override
  public String domain() {
    return DOMAIN;
  }

  @Override
  public Outcome handle(Task task, TaskContext context) {
    sent.add(task.spec().body());
    return Outcome.done("sent to " + task.spec().body());
  }

  /**
   * What was sent so far.
   *
   * @return the bodies, in order
   */
  public List<String> sent() {
    return List.copyOf(sent);
  }
}
