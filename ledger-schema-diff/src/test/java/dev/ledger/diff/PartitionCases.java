package dev.ledger.diff;

import static dev.ledger.diff.AcceptanceCases.T;
import static dev.ledger.diff.AcceptanceCases.TOUCH;
import static dev.ledger.diff.AcceptanceCases.exact;

/**
 * Acceptance cases of {@link SchemaDiffAcceptanceTest} ({@link AcceptanceCases}): partitions and
 * inheritance, and tables made again with their rows because their partitioning changes.
 */
final class PartitionCases {

  private PartitionCases() {}

  /** Adds the cases, in a stable order. */
  static void addAll() {
    partitionsAndInheritance();
  }

  /**
   * Tables made again with their rows because their partitioning changes: checked with sample rows
   * written into the base's table, found again in the head's partitions.
   */
  private static void rebuilds() {
    String plain =
        """
        CREATE TABLE k (id bigint NOT NULL, at date NOT NULL, region text NOT NULL, note text,
            PRIMARY KEY (id, at));
        CREATE INDEX k_note ON k (note);
        """;
    exact(
        "rebuild: plain table becomes range-partitioned",
        plain,
        """
        CREATE TABLE k (id bigint NOT NULL, at date NOT NULL, region text NOT NULL, note text,
            PRIMARY KEY (id, at)) PARTITION BY RANGE (at);
        CREATE TABLE k_2025 PARTITION OF k FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
        CREATE TABLE k_2026 PARTITION OF k FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
        CREATE TABLE k_rest PARTITION OF k DEFAULT;
        CREATE INDEX k_note ON k (note);
        """,
        "locking+safe");
    exact(
        "rebuild: plain table becomes list-partitioned",
        plain,
        """
        CREATE TABLE k (id bigint NOT NULL, at date NOT NULL, region text NOT NULL, note text,
            PRIMARY KEY (id, at, region)) PARTITION BY LIST (region);
        CREATE TABLE k_eu PARTITION OF k FOR VALUES IN ('eu');
        CREATE TABLE k_us PARTITION OF k FOR VALUES IN ('us', 'ca');
        CREATE INDEX k_note ON k (note);
        """,
        "destructive+safe");
    exact(
        "rebuild: plain table becomes hash-partitioned",
        plain,
        """
        CREATE TABLE k (id bigint NOT NULL, at date NOT NULL, region text NOT NULL, note text,
            PRIMARY KEY (id, at)) PARTITION BY HASH (id);
        CREATE TABLE k_0 PARTITION OF k FOR VALUES WITH (MODULUS 2, REMAINDER 0);
        CREATE TABLE k_1 PARTITION OF k FOR VALUES WITH (MODULUS 2, REMAINDER 1);
        CREATE INDEX k_note ON k (note);
        """,
        "locking+safe");
    exact(
        "rebuild: partition key changed, with partitions",
        """
        CREATE TABLE m (id bigint NOT NULL, at date NOT NULL, region text NOT NULL)
            PARTITION BY RANGE (at);
        CREATE TABLE m_2025 PARTITION OF m FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
        CREATE TABLE m_2026 PARTITION OF m FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
        CREATE INDEX m_at ON m (at);
        """,
        """
        CREATE TABLE m (id bigint NOT NULL, at date NOT NULL, region text NOT NULL)
            PARTITION BY LIST (region);
        CREATE TABLE m_eu PARTITION OF m FOR VALUES IN ('eu');
        CREATE TABLE m_rest PARTITION OF m DEFAULT;
        CREATE INDEX m_at ON m (at);
        """,
        "locking+safe");
    exact(
        "rebuild: partition key changed, partitions keep their names",
        """
        CREATE TABLE m (id bigint NOT NULL, at date NOT NULL, PRIMARY KEY (id, at))
            PARTITION BY RANGE (at);
        CREATE TABLE m_a PARTITION OF m FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
        CREATE TABLE m_b PARTITION OF m FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');
        """,
        """
        CREATE TABLE m (id bigint NOT NULL, at date NOT NULL, PRIMARY KEY (id, at))
            PARTITION BY RANGE (id);
        CREATE TABLE m_a PARTITION OF m FOR VALUES FROM (0) TO (1000);
        CREATE TABLE m_b PARTITION OF m FOR VALUES FROM (1000) TO (MAXVALUE);
        """,
        "destructive+safe");
    exact(
        "rebuild: partitioned table becomes plain",
        """
        CREATE TABLE m (id bigint NOT NULL, at date NOT NULL) PARTITION BY RANGE (at);
        CREATE TABLE m_2025 PARTITION OF m FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
        """,
        "CREATE TABLE m (id bigint NOT NULL, at date NOT NULL);\n",
        "locking+safe");
    String referenced = "CREATE TABLE o (id bigint PRIMARY KEY, k_id bigint REFERENCES k (id));\n";
    exact(
        "rebuild: a foreign key points at the table",
        "CREATE TABLE k (id bigint PRIMARY KEY, note text);\n" + referenced,
        """
        CREATE TABLE k (id bigint PRIMARY KEY, note text) PARTITION BY HASH (id);
        CREATE TABLE k_0 PARTITION OF k FOR VALUES WITH (MODULUS 2, REMAINDER 0);
        CREATE TABLE k_1 PARTITION OF k FOR VALUES WITH (MODULUS 2, REMAINDER 1);
        """
            + referenced,
        "locking+safe");
    String view = "CREATE VIEW k_notes AS SELECT id, note FROM k WHERE note IS NOT NULL;\n";
    exact(
        "rebuild: a view over the table",
        "CREATE TABLE k (id bigint NOT NULL, at date NOT NULL, note text);\n" + view,
        """
        CREATE TABLE k (id bigint NOT NULL, at date NOT NULL, note text) PARTITION BY RANGE (at);
        CREATE TABLE k_2025 PARTITION OF k FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
        CREATE TABLE k_rest PARTITION OF k DEFAULT;
        """
            + view,
        "locking+safe");
    exact(
        "rebuild: an identity column",
        """
        CREATE TABLE k (id bigint GENERATED ALWAYS AS IDENTITY (START WITH 100), at date NOT NULL,
            PRIMARY KEY (id, at));
        """,
        """
        CREATE TABLE k (id bigint GENERATED ALWAYS AS IDENTITY (START WITH 100), at date NOT NULL,
            PRIMARY KEY (id, at)) PARTITION BY RANGE (at);
        CREATE TABLE k_2025 PARTITION OF k FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
        CREATE TABLE k_rest PARTITION OF k DEFAULT;
        """,
        "locking+safe");
    exact(
        "rebuild: a serial column keeps its sequence",
        "CREATE TABLE k (id bigserial, at date NOT NULL, PRIMARY KEY (id, at));\n",
        """
        CREATE TABLE k (id bigserial, at date NOT NULL, PRIMARY KEY (id, at))
            PARTITION BY RANGE (at);
        CREATE TABLE k_rest PARTITION OF k DEFAULT;
        """,
        "locking+safe");
    String decorated =
        """
        CREATE TRIGGER k_touch BEFORE INSERT ON k FOR EACH ROW EXECUTE FUNCTION touch();
        COMMENT ON TABLE k IS 'the k';
        COMMENT ON COLUMN k.a IS 'the a';
        GRANT SELECT ON k TO PUBLIC;
        """;
    exact(
        "rebuild: trigger, comments and grant on the table",
        TOUCH + "CREATE TABLE k (id bigint NOT NULL, a int, at date NOT NULL);\n" + decorated,
        TOUCH
            + """
            CREATE TABLE k (id bigint NOT NULL, a int, at date NOT NULL) PARTITION BY RANGE (at);
            CREATE TABLE k_rest PARTITION OF k DEFAULT;
            """
            + decorated,
        "locking+safe");
  }

  private static void partitionsAndInheritance() {
    String m =
        "CREATE TABLE m (id bigint, at date, PRIMARY KEY (id, at)) PARTITION BY RANGE (at);\n";
    String p25 =
        "CREATE TABLE m_2025 PARTITION OF m FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');\n";
    String p26 =
        "CREATE TABLE m_2026 PARTITION OF m FOR VALUES FROM ('2026-01-01') TO ('2027-01-01');\n";
    exact("partitioned table added", T, T + m + p25 + "CREATE INDEX m_at ON m (at);", "safe");
    exact("partition added", m + p25, m + p25 + p26, "safe");
    exact("partition dropped", m + p25 + p26, m + p25, "destructive");
    exact("partitioned parent dropped", T + m + p25 + p26, T, "destructive");
    exact(
        "index on a partitioned parent",
        m + p25,
        m + p25 + "CREATE INDEX m_at ON m (at);",
        "locking");
    // Issue 31: a partitioned parent's index is built on every partition and attached.
    exact(
        "hash index on a partitioned parent",
        m + p25 + p26,
        m + p25 + p26 + "CREATE INDEX m_id_hash ON m USING hash (id);",
        "locking");
    exact(
        "functional index on a partitioned parent",
        m + p25 + p26,
        m + p25 + p26 + "CREATE INDEX m_year ON m ((extract(year FROM at)));",
        "locking");
    exact(
        "index column order changed on a partitioned parent",
        m + p25 + p26 + "CREATE INDEX m_ix ON m (id, at);",
        m + p25 + p26 + "CREATE INDEX m_ix ON m (at, id);",
        "locking");
    exact(
        "partition's own index attached to a new parent index",
        m + p25 + p26 + "CREATE INDEX m_2025_at ON m_2025 (at);",
        m + p25 + p26 + "CREATE INDEX m_2025_at ON m_2025 (at);\nCREATE INDEX m_at ON m (at);",
        "locking");
    String bare = "CREATE TABLE m (id bigint, at date) PARTITION BY RANGE (at);\n";
    exact(
        "partition's unique index taken over by its key",
        bare + p25 + "CREATE UNIQUE INDEX m_2025_key ON m_2025 (id);",
        bare
            + p25
            + "CREATE UNIQUE INDEX m_2025_key ON m_2025 (id);\n"
            + "ALTER TABLE m_2025 ADD CONSTRAINT m_2025_key UNIQUE USING INDEX m_2025_key;",
        "locking");
    exact(
        "parent's key over a partition's unique index",
        bare + p25 + "CREATE UNIQUE INDEX m_2025_at_id ON m_2025 (at, id);",
        bare
            + p25
            + "CREATE UNIQUE INDEX m_2025_at_id ON m_2025 (at, id);\n"
            + "ALTER TABLE m ADD PRIMARY KEY (at, id);",
        "destructive");
    exact(
        "attached partitions' NOT NULL after the parent's key goes",
        "CREATE TABLE m (id bigint NOT NULL, at date NOT NULL, PRIMARY KEY (id, at))"
            + " PARTITION BY RANGE (at);\n"
            + "CREATE TABLE m_2025 (id bigint NOT NULL, at date NOT NULL);\n"
            + "ALTER TABLE m ATTACH PARTITION m_2025 FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');",
        bare
            + "CREATE TABLE m_2025 (id bigint, at date);\n"
            + "ALTER TABLE m ATTACH PARTITION m_2025 FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');",
        "safe");
    exact(
        "foreign key to a partitioned table whose key is made again",
        m
            + p25
            + "CREATE TABLE r (id bigint, m_id bigint, m_at date, FOREIGN KEY (m_id, m_at) REFERENCES m);",
        m.replace("PRIMARY KEY (id, at)", "PRIMARY KEY (at, id)")
            + p25
            + "CREATE TABLE r (id bigint, m_id bigint, m_at date,"
            + " FOREIGN KEY (m_at, m_id) REFERENCES m (at, id));",
        "destructive+locking+safe");
    exact(
        "column on a partitioned parent",
        m + p25,
        m + p25 + "ALTER TABLE m ADD COLUMN x int;",
        "safe");
    exact(
        "column dropped from a partitioned parent",
        m + p25 + "ALTER TABLE m ADD COLUMN x int;",
        m + p25,
        "destructive");
    exact(
        "partition bound changed",
        m + p25,
        m + "CREATE TABLE m_2025 PARTITION OF m FOR VALUES FROM ('2025-01-01') TO ('2025-07-01');",
        "locking");
    exact(
        "partition detached",
        m + p25,
        m
            + "CREATE TABLE m_2025 (id bigint NOT NULL, at date NOT NULL,"
            + " CONSTRAINT m_2025_pkey PRIMARY KEY (id, at));",
        "locking");
    exact("default partition", m, m + "CREATE TABLE m_rest PARTITION OF m DEFAULT;", "safe");
    exact(
        "list partitions",
        T,
        T
            + """
        CREATE TABLE l (id int, region text) PARTITION BY LIST (region);
        CREATE TABLE l_eu PARTITION OF l FOR VALUES IN ('eu');
        CREATE TABLE l_us PARTITION OF l FOR VALUES IN ('us', 'ca');
        """,
        "safe");
    exact(
        "hash partitions",
        T,
        T
            + """
        CREATE TABLE h (id int) PARTITION BY HASH (id);
        CREATE TABLE h0 PARTITION OF h FOR VALUES WITH (MODULUS 2, REMAINDER 0);
        CREATE TABLE h1 PARTITION OF h FOR VALUES WITH (MODULUS 2, REMAINDER 1);
        """,
        "safe");
    exact(
        "sub-partitions",
        T,
        T
            + m
            + """
        CREATE TABLE m_2025 PARTITION OF m FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')
            PARTITION BY RANGE (id);
        CREATE TABLE m_2025_a PARTITION OF m_2025 FOR VALUES FROM (0) TO (1000);
        """,
        "safe");
    exact(
        "partition attached from a table",
        T,
        T
            + m
            + """
        CREATE TABLE m_2025 (id bigint NOT NULL, at date NOT NULL);
        ALTER TABLE m ATTACH PARTITION m_2025 FOR VALUES FROM ('2025-01-01') TO ('2026-01-01');
        """,
        "safe");
    exact(
        "foreign key on a partitioned table",
        T + m + p25,
        T + m + p25 + "ALTER TABLE m ADD COLUMN t_id bigint REFERENCES t;",
        "destructive+safe");
    exact(
        "trigger on a partitioned table",
        T + TOUCH + "CREATE TABLE m (id bigint, a int, at date) PARTITION BY RANGE (at);\n" + p25,
        T
            + TOUCH
            + "CREATE TABLE m (id bigint, a int, at date) PARTITION BY RANGE (at);\n"
            + p25
            + "CREATE TRIGGER m_touch BEFORE INSERT ON m FOR EACH ROW EXECUTE FUNCTION touch();",
        "safe");
    // Issue 31: a table whose partitioning changes is made again with its rows (PartitionRebuild).
    // With no partition in the head, every existing row fails the copy: destructive.
    exact(
        "partition key changed",
        T + "CREATE TABLE k (id bigint, at date) PARTITION BY RANGE (at);",
        T + "CREATE TABLE k (id bigint, at date) PARTITION BY RANGE (id);",
        "destructive");
    exact(
        "table becomes partitioned",
        T + "CREATE TABLE k (id bigint, at date);",
        T + "CREATE TABLE k (id bigint, at date) PARTITION BY RANGE (at);",
        "destructive");
    rebuilds();
    String p = "CREATE TABLE p (id int, x int);\n";
    exact("inheritance child added", p, p + "CREATE TABLE c (y int) INHERITS (p);", "safe");
    exact(
        "inheritance child dropped", p + "CREATE TABLE c (y int) INHERITS (p);", p, "destructive");
    exact(
        "inheritance parent and child dropped",
        T + p + "CREATE TABLE c () INHERITS (p);",
        T,
        "destructive");
    exact(
        "column added to an inheritance parent",
        p + "CREATE TABLE c () INHERITS (p);",
        p + "CREATE TABLE c () INHERITS (p);\nALTER TABLE p ADD COLUMN z int;",
        "safe");
    exact(
        "inheritance child keeps a dropped parent column",
        p + "CREATE TABLE c () INHERITS (p);",
        "CREATE TABLE p (id int);\nCREATE TABLE c (x int) INHERITS (p);",
        "destructive+safe");
    exact(
        "inheritance removed",
        p + "CREATE TABLE c (id int, x int) INHERITS (p);",
        p + "CREATE TABLE c (id int, x int);",
        "safe");
    exact(
        "inheritance added",
        p + "CREATE TABLE c (id int, x int);",
        p + "CREATE TABLE c (id int, x int) INHERITS (p);",
        "safe");
    exact(
        "inherited check",
        p,
        p
            + "ALTER TABLE p ADD CONSTRAINT x_pos CHECK (x > 0);\n"
            + "CREATE TABLE c () INHERITS (p);",
        "destructive+safe");
  }
}
