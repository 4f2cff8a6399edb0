package dev.ledger.app.task;

import picocli.CommandLine.Command;

/** {@code ledger-app task ...}: file, claim, complete and inspect tasks from the shell. */
@Command(
    name = "task",
    description = "Operate on tasks: file, admit, claim, heartbeat, release, complete, ...",
    mixinStandardHelpOptions = true,
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
public final class TaskCommand {}
