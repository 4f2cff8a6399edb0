package dev.ledger.app;

import picocli.CommandLine.Option;

/**
 * {@code --json} on a command group ({@code task}, {@code schedule}, {@code domain}, {@code
 * retention}, {@code fleet}) before its subcommand: the subcommand's own {@code --json} ({@link
 * Main} hands it on), and an error the group finds (an unknown subcommand) as a JSON document too.
 * A picocli mixin: {@code @Mixin ParentJson json;}.
 */
public final class ParentJson {

  /** Whether {@code --json} was given before the subcommand. */
  @Option(
      names = "--json",
      description = "The same as the subcommand's --json; errors found here as JSON too.")
  boolean json;

  /** For picocli. */
  public ParentJson() {}
}
