package dev.ledger.app.task;

import dev.ledger.Lease;
import dev.ledger.app.Converters;
import picocli.CommandLine.Option;

/**
 * {@code --lease TOKEN}, the one option of every command that acts on a held lease ({@code
 * heartbeat}, {@code release}, {@code handoff}, {@code complete}): the token a claim printed,
 * converted before any database is opened ({@link Converters.Leases}).
 */
public final class LeaseOption {

  @Option(
      names = "--lease",
      required = true,
      paramLabel = "TOKEN",
      converter = Converters.Leases.class,
      description = "The lease.")
  Lease lease;
}
