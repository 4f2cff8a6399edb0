package dev.ledger.app.task;

import dev.ledger.app.ParentJson;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code ledger-app task ...}: file, claim, complete and inspect tasks from the shell. */
@Command(
    name = "task",
    description = "Operate on tasks: file, admit, claim, heartbeat, release, complete, ...",
    mixinStandardHelpOptions = true,
    footer = {
      "",
      "Examples:",
      "  ledger-app task file --domain payments --title 'Reconcile batch 42'",
      "  ledger-app task list --domain payments --json",
      "  ledger-app task dead-letters --domain payments"
    },
    subcommands = {
      TaskCommands.File.class,
      TaskCommands.Admit.class,
      TaskCommands.Claim.class,
      TaskCommands.Heartbeat.class,
      TaskCommands.Release.class,
      TaskCommands.Handoff.class,
      TaskCommands.Complete.class,
      TaskCommands.Invalidate.class,
      TaskCommands.Rescore.class,
      TaskCommands.Post.class,
      TaskCommands.Show.class,
      TaskCommands.ListTasks.class,
      TaskCommands.DeadLetters.class,
      TaskCommands.Refile.class
    })
public final class TaskCommand {

  /** {@code --json} before the subcommand. */
  @Mixin ParentJson json;
}
