-- The routing tables of the directory schema (the reference's DIRECTORY): each domain and the
-- schema its tables live in (stored quoted, as the reference stack stores it), and each task id and
-- its domain, so an operation by id finds its schema in one lookup.
-- IF NOT EXISTS: a ledger the reference stack made has these tables already and no history; the
-- migration job baselines it at version 0 and this script then changes nothing.
CREATE TABLE IF NOT EXISTS "${flyway:defaultSchema}".ledger_domains (
    domain TEXT PRIMARY KEY,
    schema TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS "${flyway:defaultSchema}".ledger_tasks (
    id     TEXT PRIMARY KEY,
    domain TEXT NOT NULL REFERENCES "${flyway:defaultSchema}".ledger_domains (domain)
);
