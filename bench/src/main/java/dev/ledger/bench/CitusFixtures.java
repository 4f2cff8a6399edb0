package dev.ledger.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.testing.CitusCluster;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * B20's cluster fixtures (issue 29): the databases and pools of each side, and where a domain's
 * distributed schema lives and how it moves ({@code citus_shards}, {@code
 * citus_move_shard_placement}). Stateless; each call opens and closes its own connection.
 */
final class CitusFixtures {

  private CitusFixtures() {}

  /**
   * The coordinator and the workers of a cluster, coordinator first.
   *
   * @param cluster the running cluster
   * @return its nodes
   */
  static List<CitusCluster.Node> allNodes(CitusCluster cluster) {
    List<CitusCluster.Node> nodes = new ArrayList<>();
    nodes.add(cluster.coordinator());
    nodes.addAll(cluster.workers());
    return nodes;
  }

  /**
   * A database without the citus extension on the coordinator's server: the one-server side. Makes
   * {@code name} and {@code name + "2"} afresh (dropping them first, with {@code FORCE}).
   *
   * @param cluster the running cluster
   * @param name the database name, a plain lower-case identifier
   * @return the JDBC URL of {@code name}
   * @throws Exception on failure
   */
  static String plainDatabase(CitusCluster cluster, String name) throws Exception {
    try (Connection c =
            DriverManager.getConnection(cluster.urlFor(cluster.coordinator(), "postgres"));
        Statement s = c.createStatement()) {
      s.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
      s.execute("CREATE DATABASE " + name);
      s.execute("DROP DATABASE IF EXISTS " + name + "2 WITH (FORCE)");
      s.execute("CREATE DATABASE " + name + "2");
    }
    return cluster.urlFor(cluster.coordinator(), name);
  }

  /**
   * The port of the worker holding a distributed schema.
   *
   * @param url the coordinator's database
   * @param schema a domain schema, distributed
   * @return the port of its node (the lowest, were its shards split)
   * @throws Exception on failure
   */
  static int nodeOf(String url, String schema) throws Exception {
    return (int)
        Context.count(
            new org.postgresql.ds.PGSimpleDataSource() {
              {
                setURL(url);
              }
            },
            "SELECT min(nodeport) FROM citus_shards WHERE " + ofSchema(schema));
  }

  /**
   * Moves a distributed schema to the worker at {@code port}, unless it is there already.
   *
   * @param url the coordinator's database
   * @param schema a domain schema, distributed
   * @param port the target worker's port
   * @throws Exception on failure
   */
  static void moveTo(String url, String schema, int port) throws Exception {
    int from = nodeOf(url, schema);
    if (from == port) {
      return;
    }
    move(url, schema, from, port);
  }

  /**
   * Moves a distributed schema from one worker to another ({@code citus_move_shard_placement} of
   * its colocation group, {@code block_writes}); returns when the move is done.
   *
   * @param url the coordinator's database
   * @param schema a domain schema, distributed, on {@code from}
   * @param from the port of the worker holding it
   * @param to the port of the target worker
   * @throws Exception on failure
   */
  static void move(String url, String schema, int from, int to) throws Exception {
    try (Connection c = DriverManager.getConnection(url);
        Statement st = c.createStatement()) {
      st.execute(
          "SELECT citus_move_shard_placement(min(shardid), '127.0.0.1', "
              + from
              + ", '127.0.0.1', "
              + to
              + ", shard_transfer_mode := 'block_writes') FROM citus_shards"
              + " WHERE "
              + ofSchema(schema));
    }
  }

  /** The condition on {@code citus_shards} that picks the shards of a domain schema. */
  private static String ofSchema(String schema) {
    if (!schema.matches("[a-z0-9_]+")) {
      throw new IllegalArgumentException("B20: unexpected schema name " + schema);
    }
    return "split_part(replace(table_name::text, '\"', ''), '.', 1) = '" + schema + "'";
  }

  /**
   * A connection pool with no idle minimum.
   *
   * @param url the database
   * @param size the maximum pool size
   * @return the pool; the caller closes it
   */
  static HikariDataSource pool(String url, int size) {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setMaximumPoolSize(size);
    config.setMinimumIdle(0);
    return new HikariDataSource(config);
  }
}
