/**
 * Schedules: recurring tasks kept in the database ({@code ledger_schedules} in the directory
 * schema) and filed by any running worker pool of their domain, each tick exactly once. Start at
 * {@link dev.ledger.schedule.Schedules} ({@code Ledger.schedules()}); the tick arithmetic, daylight
 * saving time included, is {@link dev.ledger.schedule.Ticks}.
 */
package dev.ledger.schedule;
