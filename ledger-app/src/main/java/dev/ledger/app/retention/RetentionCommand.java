package dev.ledger.app.retention;

import dev.ledger.app.ParentJson;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code ledger-app retention ...}: set, clear and show domains' retention, and run a purge. */
@Command(
    name = "retention",
    description = "Keep completed and invalidated tasks for a while, then purge them.",
    mixinStandardHelpOptions = true,
    footer = {
      "",
      "Examples:",
      "  ledger-app retention set --domain payments --keep 7d",
      "  ledger-app retention run --domain payments --batch 1000 --json"
    },
    subcommands = {
      RetentionCommands.Set.class,
      RetentionCommands.Clear.class,
      RetentionCommands.Show.class,
      RetentionCommands.Run.class
    })
public final class RetentionCommand {

  /** {@code --json} before the subcommand. */
  @Mixin ParentJson json;
}
