/**
 * The migration job and the fleet reconciler (docs/migration-job.md; ports the reference reconciler
 * {@code reconcile.rs} and the reference backend's {@code connect}, {@code migrate_shared_tables}
 * and {@code add_promotion_tables}).
 *
 * <p>Two entry points, each returning a report record that a command line only renders:
 *
 * <pre>{@code
 * MigrationReport one = MigrationJob.builder().dataSource(ds).parallelism(4).build().migrate();
 * FleetReport all = Fleet.builder().control(controlDataSource).parallelism(8).build().migrate();
 * }</pre>
 *
 * <p>{@link dev.ledger.migrate.MigrationJob} brings one database up to date: the directory schema,
 * then every domain schema the routing table names, adopting ledgers the reference stack made
 * (which have no Flyway history). When everything is current it costs two statements whatever the
 * number of schemas (the directory's {@code ledger_schema_state} records what each schema holds),
 * not one Flyway run per schema. {@link dev.ledger.migrate.Fleet} runs that job for every tenant of
 * a control database's registry, under a per-tenant advisory lock.
 */
package dev.ledger.migrate;
