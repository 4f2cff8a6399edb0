-- Not in the reference; derived from the events (a replay rebuilds all of it). Claims at depth
-- under filters (issue 6, B3): with many tasks ahead in claim order that this claimer may not take,
-- a claim that walks one index in (priority DESC, created) order and filters row by row visits
-- every one of them. The claim now visits only rows it may take:
--
-- blocked: true while a dependency in this domain is not completed. Set when the task is filed
-- (its dependencies' rows locked FOR SHARE, so a concurrent completion waits or is seen) and
-- cleared, under the dependent's row lock, by the completion of its last such dependency.
-- Dependencies in other domains are still checked row by row, as before.
ALTER TABLE "${flyway:defaultSchema}".tasks ADD COLUMN IF NOT EXISTS blocked BOOLEAN NOT NULL DEFAULT false;
UPDATE "${flyway:defaultSchema}".tasks t SET blocked = true
 WHERE t.depends_on <> '[]'
   AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(t.depends_on::jsonb) d(dep)
                 JOIN "${flyway:defaultSchema}".tasks x ON x.id = d.dep
                WHERE x.status <> 'completed');

-- tasks_ready: the admitted, unblocked tasks grouped by (label, requirement set), each group in
-- claim order. A claim enumerates the groups it qualifies for (label within its handling,
-- requirements within its manifest) with a skip scan, walks each group's head with LIMIT n FOR
-- UPDATE SKIP LOCKED and merges them. md5: a requirement set can be longer than a btree row allows.
CREATE INDEX tasks_ready ON "${flyway:defaultSchema}".tasks
    (label_rank, md5(requirements), priority DESC, created)
    WHERE status = 'admitted' AND NOT blocked;
-- tasks_leased: claimed tasks by lease end, so expired leases are found without walking live ones.
CREATE INDEX tasks_leased ON "${flyway:defaultSchema}".tasks (lease_until) WHERE status = 'claimed';
-- tasks_blocked_on: the blocked tasks by dependency, for the completion that may unblock them.
CREATE INDEX tasks_blocked_on ON "${flyway:defaultSchema}".tasks
    USING gin ((depends_on::jsonb) jsonb_path_ops) WHERE blocked;
-- tasks_claimable (V5) held claimed rows ahead of admitted ones in claim order; nothing uses it now.
DROP INDEX IF EXISTS "${flyway:defaultSchema}".tasks_claimable;
