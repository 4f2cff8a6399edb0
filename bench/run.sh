#!/usr/bin/env bash
# Ledger benchmarks (issue 6): builds the harness and what it needs (and the schema diff's own
# classpath for B19's child JVMs), then runs every benchmark and
# its baseline, alternating, against one PostgreSQL (embedded by default) and prints one table.
#
#   bench/run.sh [--quick] [--url JDBC] [--out DIR] [--only B1,B2,...] [--no-build]
#
#   --quick      scaled-down workloads (a few minutes on 2 cores; what CI runs, no thresholds)
#   --url JDBC   an admin database of another server, e.g.
#                'jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres' (each benchmark creates
#                and drops a database of its own there)
#   --out DIR    where the report and plots go (default: bench/results for a full run,
#                bench/target/results-quick for --quick)
#   --only LIST  some benchmarks, e.g. B2,B3
#   --no-build   reuse the last build (bench/target/classpath.txt)
#
# Exit codes: 0 done; 1 a correctness check failed (double claim, replay differs, ...) or the run
# broke; 2 bad arguments.
set -euo pipefail
cd "$(dirname "$0")/.."

build=1
args=()
for a in "$@"; do
  if [ "$a" = "--no-build" ]; then build=0; else args+=("$a"); fi
done

if [ "$build" = 1 ] || [ ! -f bench/target/classpath.txt ]; then
  echo "== building the harness (./mvnw package -pl bench,ledger-schema-diff -am, tests skipped)"
  mkdir -p bench/target
  if ! ./mvnw -B -ntp -q -pl bench,ledger-schema-diff -am -DskipTests \
    package dependency:build-classpath \
    -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime >bench/target/build.log 2>&1; then
    cat bench/target/build.log
    echo "bench/run.sh: the build failed" >&2
    exit 1
  fi
fi

exec java -Xmx6g -XX:+UseParallelGC \
  -Dbench.command="bench/run.sh ${args[*]:-}" \
  -cp "bench/target/classes:$(cat bench/target/classpath.txt)" \
  dev.ledger.bench.BenchMain "${args[@]}"
