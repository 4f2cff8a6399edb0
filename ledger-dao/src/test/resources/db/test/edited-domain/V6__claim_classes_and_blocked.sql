-- Not in the reference; derived from the events, so a replay rebuilds all of it. They keep a claim's
-- cost flat however many tasks ahead of the claimable ones a claimer cannot take.
--
-- blocked: some dependency of the task is not completed. Set when the task is filed, cleared when
-- its last open dependency completes (whatever its domain). A schema upgraded to this version starts
-- with blocked = false everywhere; claims stay correct (they still check dependencies), and a replay
-- (`ledger-app replay`) sets the flag on tasks filed before the upgrade.
ALTER TABLE "${flyway:defaultSchema}".tasks ADD COLUMN blocked BOOLEAN NOT NULL DEFAULT false;

-- claim_classes: every (label_rank, requirements) pair a task of the domain was filed with. A claim
-- reads the few classes its handling level and manifest admit, then walks tasks_claim_class once per
-- class, merging in claim order, instead of filtering every open task.
CREATE TABLE "${flyway:defaultSchema}".claim_classes (
    label_rank       BIGINT NOT NULL,
    requirements_md5 TEXT   NOT NULL,
    requirements     TEXT   NOT NULL,
    PRIMARY KEY (label_rank, requirements_md5)
);
INSERT INTO "${flyway:defaultSchema}".claim_classes (label_rank, requirements_md5, requirements)
SELECT DISTINCT label_rank, md5(requirements), requirements FROM "${flyway:defaultSchema}".tasks
ON CONFLICT DO NOTHING;

CREATE INDEX tasks_claim_class ON "${flyway:defaultSchema}".tasks
    (label_rank, md5(requirements), priority DESC, created)
    WHERE status IN ('admitted', 'claimed') AND NOT blocked;
