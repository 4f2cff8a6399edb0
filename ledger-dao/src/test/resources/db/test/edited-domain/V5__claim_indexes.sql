-- Not in the reference; indexes only, derived from the projection, so a replay rebuilds them.
-- tasks_claimable: the claim walks the open queue in claim order (priority DESC, created) and stops
-- at the first row it can take, instead of sorting every admitted and claimed task on each claim.
CREATE INDEX tasks_claimable ON "${flyway:defaultSchema}".tasks (priority DESC, created)
    WHERE status IN ('admitted', 'claimed');
-- tasks_by_origin: "no open continuation" (origin = 'continues:<id>'), filed_from and with_origin look
-- tasks up by origin alone; tasks_origin covers only rows that have an upstream event.
CREATE INDEX tasks_by_origin ON "${flyway:defaultSchema}".tasks (origin) WHERE origin IS NOT NULL;
