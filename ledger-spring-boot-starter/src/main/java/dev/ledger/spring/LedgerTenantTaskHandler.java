package dev.ledger.spring;

import dev.ledger.worker.TenantTaskHandler;

/**
 * A {@link TenantTaskHandler} bean for one domain served across every tenant of the starter's
 * {@link dev.ledger.tenants.TenantDirectory}: the starter runs one {@link
 * dev.ledger.worker.TenantWorkerPool} per such bean (see {@link LedgerTenantsAutoConfiguration}),
 * unless {@code ledger.tenants.worker.enabled=false}. At most one bean per domain.
 *
 * <pre>{@code
 * @Component
 * class SendInvoice implements LedgerTenantTaskHandler {
 *   public String domain() { return "invoices"; }
 *   public Outcome handle(String tenant, Task task, TaskContext context) {
 *     mailer.send(tenant, task.spec().title());
 *     return Outcome.done();
 *   }
 * }
 * }</pre>
 *
 * <p>Called on the pools' worker threads: an implementation must be thread-safe.
 */
public interface LedgerTenantTaskHandler extends TenantTaskHandler {

  /**
   * The domain whose tasks this handler runs, in every tenant.
   *
   * @return a domain name; constant for the bean's life
   */
  String domain();
}
