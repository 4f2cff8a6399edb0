package dev.ledger.tenants;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * Threads running {@link Cycles#cycle} against every tenant of a directory in turn, recording per
 * phase and tenant the cycles that succeeded, the refusals (with how long each call took) and any
 * other failure.
 */
final class TenantLoad {

  /** A refused call. */
  record Refusal(int phase, String tenant, long nanos, TenantUnavailableException error) {}

  /** A call that failed otherwise. */
  record Failure(int phase, String tenant, Throwable error) {}

  private final TenantDirectory directory;
  private final List<String> tenants;
  private final List<Thread> threads = new ArrayList<>();
  private final AtomicBoolean running = new AtomicBoolean(true);
  private final AtomicInteger phase = new AtomicInteger(1);
  private final Map<String, AtomicInteger> successes = new ConcurrentHashMap<>();
  final List<Refusal> refusals = new CopyOnWriteArrayList<>();
  final List<Failure> failures = new CopyOnWriteArrayList<>();

  TenantLoad(TenantDirectory directory, List<String> tenants, int threadCount) {
    this.directory = directory;
    this.tenants = List.copyOf(tenants);
    for (int i = 0; i < threadCount; i++) {
      int offset = i;
      Thread t = new Thread(() -> loop(offset), "tenant-load-" + i);
      t.setDaemon(true);
      threads.add(t);
    }
  }

  void start() {
    threads.forEach(Thread::start);
  }

  private void loop(int offset) {
    String holder = "worker-" + offset;
    for (int k = offset; running.get(); k++) {
      String tenant = tenants.get(Math.floorMod(k * 7 + offset, tenants.size()));
      int p = phase.get();
      long t0 = System.nanoTime();
      try {
        directory.run(tenant, l -> Cycles.cycle(l, holder));
        successes.computeIfAbsent(p + "/" + tenant, x -> new AtomicInteger()).incrementAndGet();
      } catch (TenantUnavailableException e) {
        refusals.add(new Refusal(p, tenant, System.nanoTime() - t0, e));
      } catch (RuntimeException | AssertionError e) {
        failures.add(new Failure(p, tenant, e));
      }
    }
  }

  /** Starts the next phase (calls started from now on count in it). */
  void phase(int next) {
    phase.set(next);
  }

  /** Cycles that succeeded for a tenant in a phase. */
  int successes(int p, String tenant) {
    AtomicInteger n = successes.get(p + "/" + tenant);
    return n == null ? 0 : n.get();
  }

  /** Refusals of a tenant in a phase. */
  long refusals(int p, String tenant) {
    return refusals.stream().filter(r -> r.phase() == p && r.tenant().equals(tenant)).count();
  }

  /**
   * Waits until a condition holds, checking every 20 ms.
   *
   * @param what what is awaited, for the failure message
   * @param condition the condition
   * @param seconds the most to wait
   */
  void await(String what, Predicate<TenantLoad> condition, int seconds)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!condition.test(this)) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "timed out after " + seconds + " s waiting for " + what + "; failures " + failures);
      }
      Thread.sleep(20);
    }
  }

  /** Stops the threads and waits for them. */
  void stop() throws InterruptedException {
    running.set(false);
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(30));
    }
  }
}
