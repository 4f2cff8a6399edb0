/**
 * The run-time tenant directory: one service serving every tenant database of a fleet, on many
 * PostgreSQL servers ({@link dev.ledger.tenants.TenantDirectory}).
 */
package dev.ledger.tenants;
