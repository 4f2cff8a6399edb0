package dev.ledger.app.schedule;

import dev.ledger.app.ParentJson;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code ledger-app schedule ...}: add, list, pause, resume and remove recurring tasks. */
@Command(
    name = "schedule",
    description = "Manage schedules (recurring tasks): add, list, pause, resume, remove, file-due.",
    mixinStandardHelpOptions = true,
    footer = {
      "",
      "Examples:",
      "  ledger-app schedule add nightly --domain reports --cron '30 2 * * *' \\",
      "      --zone Europe/Berlin --title 'Build the nightly report'",
      "  ledger-app schedule list --json",
      "  ledger-app schedule pause nightly"
    },
    subcommands = {
      ScheduleCommands.Add.class,
      ScheduleCommands.ListSchedules.class,
      ScheduleCommands.Pause.class,
      ScheduleCommands.Resume.class,
      ScheduleCommands.Remove.class,
      ScheduleCommands.FileDue.class
    })
public final class ScheduleCommand {

  /** {@code --json} before the subcommand. */
  @Mixin ParentJson json;
}
