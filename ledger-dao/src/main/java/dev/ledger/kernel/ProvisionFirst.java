package dev.ledger.kernel;

/**
 * Thrown inside a transaction the ledger owns when the domain written to has no schema yet: {@link
 * Engine#write} rolls back, provisions the domain in a transaction of its own and runs the
 * operation again. Never leaves the kernel. Immutable.
 */
final class ProvisionFirst extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The domain to provision. */
  final String domain;

  ProvisionFirst(String domain) {
    super("domain " + domain + " has no schema yet", null, false, false);
    this.domain = domain;
  }
}
