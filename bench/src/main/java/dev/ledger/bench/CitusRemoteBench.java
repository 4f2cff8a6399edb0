package dev.ledger.bench;

import dev.ledger.testing.CitusCluster;
import java.net.InetSocketAddress;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * B20's rows with the workers 2 ms away (issue 29, full runs only), as B8's remote rows: a second
 * cluster database ({@code b20_remote}) whose coordinator reaches both workers through {@link
 * LatencyProxy} (1 ms each way), the client reaching the coordinator directly; file+admit at 8
 * clients and claim+complete at 8 workers against one server, each side checked by {@link
 * CitusSide#check}. Not thread-safe (one run).
 */
final class CitusRemoteBench {

  private CitusRemoteBench() {}

  /**
   * Runs the rows; makes {@code b20_remote} on every node and uses the one-server database {@code
   * <single>2} that {@link CitusFixtures#plainDatabase} made beside {@code singleUrl}'s.
   *
   * @param ctx the run
   * @param cluster the running cluster
   * @param singleUrl the one-server side's database of the main rows ({@code b20_single})
   * @throws Exception on failure, or a failed check ({@link BenchFailure})
   */
  static void run(Context ctx, CitusCluster cluster, String singleUrl) throws Exception {
    List<LatencyProxy> proxies = new ArrayList<>();
    try {
      for (CitusCluster.Node w : cluster.workers()) {
        proxies.add(LatencyProxy.start(new InetSocketAddress("127.0.0.1", w.port()), 1_000));
      }
      String db = "b20_remote";
      for (CitusCluster.Node node : CitusFixtures.allNodes(cluster)) {
        try (Connection c = DriverManager.getConnection(cluster.urlFor(node, "postgres"));
            Statement s = c.createStatement()) {
          s.execute("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
          s.execute("CREATE DATABASE " + db);
        }
        try (Connection c = DriverManager.getConnection(cluster.urlFor(node, db));
            Statement s = c.createStatement()) {
          s.execute("CREATE EXTENSION citus");
        }
      }
      String url = cluster.urlFor(cluster.coordinator(), db);
      try (Connection c = DriverManager.getConnection(url);
          Statement s = c.createStatement()) {
        s.execute(
            "SELECT citus_set_coordinator_host('127.0.0.1', " + cluster.coordinator().port() + ")");
        for (LatencyProxy p : proxies) {
          s.execute("SELECT citus_add_node('127.0.0.1', " + p.port() + ")");
        }
      }
      String label = " (workers at 2 ms round trip)";
      try (CitusSide remote = new CitusSide("cluster at 2 ms", url, 40);
          CitusSide single =
              new CitusSide("one server", singleUrl.replace("b20_single", "b20_single2"), 40)) {
        CitusCycles.append(ctx, label, remote, single, new int[] {8});
        CitusCycles.cycles(ctx, label, remote, single, new int[] {8});
        remote.check();
        single.check();
        ctx.results()
            .note(
                "B20 at 2 ms: the coordinator reaches each worker through LatencyProxy (1 ms each"
                    + " way), the client reaches the coordinator directly; busy cores: cluster "
                    + remote.busyCores()
                    + ", one server "
                    + single.busyCores());
      }
    } finally {
      for (LatencyProxy p : proxies) {
        p.close();
      }
    }
  }
}
