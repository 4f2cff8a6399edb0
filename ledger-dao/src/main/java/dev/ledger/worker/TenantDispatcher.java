package dev.ledger.worker;

import dev.ledger.Ledger;
import dev.ledger.LedgerException;
import dev.ledger.tenants.TenantDirectory;
import dev.ledger.tenants.TenantUnavailableException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;

/**
 * The claiming side of a {@link TenantWorkerPool}: one thread that turns over the served tenants
 * (at most a quantum of one tenant per turn, resuming after the tenant served last), files each
 * tenant's due schedule ticks, admits its delayed tasks when due, claims, hands the claimed tasks
 * to the pool's {@link TaskRunner}, and waits for a free thread or the next tenant due a claim.
 * What it knows of each tenant (its next claim, its running tasks, its refusal) is kept in one
 * {@link Slot} per tenant under one monitor. Thread-safe: {@link #run} on the dispatcher thread;
 * {@link #taskDone}, {@link #retryAt}, {@link #stop} and {@link #turns} from any thread.
 */
final class TenantDispatcher implements Runnable {

  private final Logger log;
  private final TenantDirectory directory;
  private final String domain;
  private final String holder;
  private final int quantum;
  private final int perTenant;
  private final Duration pollInterval;
  private final WorkerMetrics metrics;
  private final TaskRunner runner;

  /** The pool's free threads: one permit per thread, taken per claimed task. */
  private final Semaphore permits;

  private final Object signal = new Object();
  private final Map<String, Slot> slots = new HashMap<>();
  private final AtomicInteger turns = new AtomicInteger();
  private volatile boolean stopping;

  /** The tenant served last (the next turn starts after it); the dispatcher thread's own. */
  private String after = "";

  /** What the dispatcher knows of one tenant; read and written under {@link #signal}. */
  private static final class Slot {
    long nextClaim = System.nanoTime();
    long nextDueCheck = System.nanoTime();

    /** When to look at the tenant's due schedule ticks again ({@link TickFiler}). */
    long nextTickCheck = System.nanoTime();

    int inFlight;
    int empty;
    boolean idle = true;
    String refusal;

    /** When the tenant's domain controls held its last claim back: when to claim again. */
    Long heldUntil;
  }

  /**
   * A dispatcher over the tenants {@code directory} serves; not started.
   *
   * @param log the pool's logger
   * @param directory the tenants, not null
   * @param domain the domain served in every tenant
   * @param holder the holder the pool claims as
   * @param concurrency the pool's threads (the permits)
   * @param quantum the most tasks of one tenant per turn
   * @param perTenant the most tasks of one tenant running at once
   * @param pollInterval how long a tenant without work rests
   * @param metrics the pool's meters
   * @param runner runs the claimed tasks
   */
  TenantDispatcher(
      Logger log,
      TenantDirectory directory,
      String domain,
      String holder,
      int concurrency,
      int quantum,
      int perTenant,
      Duration pollInterval,
      WorkerMetrics metrics,
      TaskRunner runner) {
    this.log = log;
    this.directory = directory;
    this.domain = domain;
    this.holder = holder;
    this.quantum = quantum;
    this.perTenant = perTenant;
    this.pollInterval = pollInterval;
    this.metrics = metrics;
    this.runner = runner;
    this.permits = new Semaphore(concurrency);
  }

  /**
   * How many claim turns were taken so far (one tenant asked for up to a quantum).
   *
   * @return the count
   */
  int turns() {
    return turns.get();
  }

  /** Stops claiming: the dispatcher thread returns after the turn it is in. */
  void stop() {
    stopping = true;
    synchronized (signal) {
      signal.notifyAll();
    }
  }

  /**
   * A task of {@code tenant} ended: its thread is free again.
   *
   * @param tenant the task's tenant
   */
  void taskDone(String tenant) {
    synchronized (signal) {
      Slot s = slots.get(tenant);
      if (s != null) {
        s.inFlight--;
      }
      permits.release();
      signal.notifyAll();
    }
  }

  /** Claims until {@link #stop}; a failed turn is logged and tried again a poll interval later. */
  @Override
  public void run() {
    while (!stopping) {
      try {
        boolean claimed = turnOverTenants();
        if (!claimed) {
          awaitWork();
        }
      } catch (RuntimeException e) {
        if (stopping) {
          break;
        }
        log.warn("ledger tenant worker {}: dispatching failed, retrying", holder, e);
        TaskRunner.pause(pollInterval);
      }
    }
  }

  /**
   * One pass over the served tenants in turn, starting after the last tenant served; each eligible
   * tenant is asked for up to a quantum. Returns whether any task was claimed.
   */
  private boolean turnOverTenants() {
    List<String> tenants = order(follow(directory.served()));
    fileTicks(tenants);
    long now = System.nanoTime();
    List<String> eligible = new ArrayList<>();
    synchronized (signal) {
      for (String t : tenants) {
        Slot s = slots.get(t);
        if (s != null && now - s.nextClaim >= 0 && s.inFlight < perTenant) {
          eligible.add(t);
        }
      }
    }
    boolean claimed = false;
    for (int k = 0; k < eligible.size(); k++) {
      int free = permits.availablePermits();
      if (stopping || free == 0) {
        break;
      }
      String tenant = eligible.get(k);
      // the free threads shared by the tenants still to ask this turn, a quantum at least: a
      // tenant alone with work gets them all, many tenants get a quantum each in turn
      int share = Math.max(quantum, free / (eligible.size() - k));
      int ask;
      boolean dueCheck;
      synchronized (signal) {
        Slot s = slots.get(tenant);
        if (s == null) {
          continue;
        }
        ask = Math.min(Math.min(share, perTenant - s.inFlight), free);
        dueCheck = System.nanoTime() - s.nextDueCheck >= 0;
      }
      if (ask <= 0) {
        continue;
      }
      int got = claim(tenant, ask, dueCheck);
      synchronized (signal) {
        Slot s = slots.get(tenant);
        if (s != null) {
          // a claim can come back empty while work waits (its candidates were locked by
          // transactions finishing other tasks, and skipped): a tenant rests a poll interval
          // only after two empty claims in a row, or one after it was found empty before
          s.empty = got == 0 ? s.empty + 1 : 0;
          if (s.heldUntil != null) {
            s.nextClaim = s.heldUntil; // no loop on a paused or limited domain
          } else if (s.empty >= 2 || (got == 0 && s.idle)) {
            s.nextClaim = System.nanoTime() + pollInterval.toNanos();
            s.idle = true;
          } else if (got > 0) {
            s.idle = false;
          }
        }
      }
      if (got > 0) {
        claimed = true;
        after = tenant;
      }
    }
    return claimed;
  }

  /** Makes the slots match the tenants the directory serves now. */
  private List<String> follow(List<String> served) {
    Set<String> now = new HashSet<>(served);
    synchronized (signal) {
      for (String t : served) {
        slots.computeIfAbsent(t, k -> new Slot());
      }
      slots.entrySet().removeIf(e -> !now.contains(e.getKey()) && e.getValue().inFlight == 0);
    }
    return served;
  }

  /** The tenants (sorted) rotated to start after the one served last. */
  private List<String> order(List<String> sorted) {
    int i = 0;
    while (i < sorted.size() && sorted.get(i).compareTo(after) <= 0) {
      i++;
    }
    List<String> out = new ArrayList<>(sorted.size());
    out.addAll(sorted.subList(i, sorted.size()));
    out.addAll(sorted.subList(0, i));
    return out;
  }

  /**
   * Files the due schedule ticks of each tenant whose check time has come ({@link TickFiler}); a
   * tenant that got tasks is claimed from at once. A tenant the directory refuses is looked at
   * again a second later.
   */
  private void fileTicks(List<String> tenants) {
    for (String tenant : tenants) {
      if (stopping) {
        return;
      }
      synchronized (signal) {
        Slot s = slots.get(tenant);
        if (s == null || System.nanoTime() - s.nextTickCheck < 0) {
          continue;
        }
      }
      TickFiler.Result r;
      try {
        r = TickFiler.fileDue(log, holder, tenant, directory.ledger(tenant), domain);
      } catch (RuntimeException e) {
        // the tenant is unavailable: its claims say so (refused); look again a second later
        r = new TickFiler.Result(0, Instant.now().plus(TickFiler.RECHECK));
      }
      long at =
          System.nanoTime() + Math.max(0, Duration.between(Instant.now(), r.nextCheck()).toNanos());
      synchronized (signal) {
        Slot s = slots.get(tenant);
        if (s != null) {
          s.nextTickCheck = at;
          if (r.filed() > 0) {
            s.nextClaim = System.nanoTime();
            s.empty = 0;
          }
        }
      }
    }
  }

  /** One turn: claims up to {@code ask} tasks of a tenant and hands them to threads. */
  private int claim(String tenant, int ask, boolean dueCheck) {
    turns.incrementAndGet();
    List<RunningTask> claimed;
    try {
      Ledger ledger = directory.ledger(tenant);
      if (dueCheck) {
        admitDue(tenant, ledger);
      }
      claimed = runner.claim(ledger, tenant, domain, ask);
      served(tenant);
      // held back by the domain's controls (paused, a limit reached): claim again at the recheck
      java.util.Optional<java.util.Map.Entry<String, Duration>> held =
          claimed.size() < ask ? ledger.worker().heldBack(domain) : java.util.Optional.empty();
      metrics.heldBack(domain, held.map(java.util.Map.Entry::getKey).orElse(null));
      synchronized (signal) {
        Slot s = slots.get(tenant);
        if (s != null) {
          s.heldUntil =
              held.map(
                      h ->
                          System.nanoTime()
                              + Math.min(h.getValue().toNanos(), pollInterval.toNanos()))
                  .orElse(null);
        }
      }
    } catch (TenantUnavailableException e) {
      refused(tenant, e.reason().wire(), e.getMessage());
      rest(tenant);
      return 0;
    } catch (LedgerException e) {
      refused(tenant, "claim failed", e.getMessage());
      rest(tenant);
      return 0;
    }
    for (RunningTask r : claimed) {
      permits.acquireUninterruptibly();
      synchronized (signal) {
        Slot s = slots.get(tenant);
        if (s != null) {
          s.inFlight++;
        }
      }
      runner.submit(r);
    }
    return claimed.size();
  }

  /** A refused tenant is asked again a poll interval later. */
  private void rest(String tenant) {
    synchronized (signal) {
      Slot s = slots.get(tenant);
      if (s != null) {
        s.idle = true;
        s.empty = 2;
      }
    }
  }

  private void admitDue(String tenant, Ledger ledger) {
    List<String> ids;
    do {
      ids = ledger.worker().admitDue(domain, 1000);
    } while (ids.size() == 1000 && !stopping);
    Instant next = ledger.worker().nextDue(domain).orElse(null);
    long recheck = System.nanoTime() + pollInterval.toNanos() * 5;
    if (next != null) {
      long untilDue = Duration.between(Instant.now(), next).toNanos();
      recheck = Math.min(recheck, System.nanoTime() + Math.max(0, untilDue));
    }
    synchronized (signal) {
      Slot s = slots.get(tenant);
      if (s != null) {
        s.nextDueCheck = recheck;
      }
    }
  }

  /** Logs a tenant skipped, once per reason until it is served again. */
  private void refused(String tenant, String reason, String message) {
    synchronized (signal) {
      Slot s = slots.get(tenant);
      if (s == null || reason.equals(s.refusal)) {
        return;
      }
      s.refusal = reason;
    }
    log.warn(
        "ledger tenant worker {}: tenant {} skipped ({}), tried again every {}: {}",
        holder,
        tenant,
        reason,
        pollInterval,
        message);
  }

  private void served(String tenant) {
    String was;
    synchronized (signal) {
      Slot s = slots.get(tenant);
      was = s == null ? null : s.refusal;
      if (s != null) {
        s.refusal = null;
      }
    }
    if (was != null) {
      log.info("ledger tenant worker {}: tenant {} served again", holder, tenant);
    }
  }

  /** Waits until a thread frees, or the next tenant is due a claim (at most a poll interval). */
  private void awaitWork() {
    synchronized (signal) {
      long now = System.nanoTime();
      long wait = pollInterval.toNanos();
      for (Slot s : slots.values()) {
        wait = Math.min(wait, Math.max(0, s.nextTickCheck - now));
      }
      if (permits.availablePermits() > 0) {
        for (Slot s : slots.values()) {
          if (s.inFlight < perTenant) {
            wait = Math.min(wait, Math.max(0, Math.min(s.nextClaim, s.nextDueCheck) - now));
          }
        }
      }
      if (wait <= 0 || stopping) {
        return;
      }
      try {
        TimeUnit.NANOSECONDS.timedWait(signal, wait);
      } catch (InterruptedException e) {
        // close() interrupts to stop
      }
    }
  }

  /**
   * A retry of {@code tenant} was filed for {@code at}: look for its delayed tasks by then.
   *
   * @param tenant the tenant
   * @param at when the retry is due
   */
  void retryAt(String tenant, Instant at) {
    long in = Math.max(0, Duration.between(Instant.now(), at).toNanos());
    synchronized (signal) {
      Slot s = slots.get(tenant);
      if (s != null && System.nanoTime() + in - s.nextDueCheck < 0) {
        s.nextDueCheck = System.nanoTime() + in;
      }
      signal.notifyAll();
    }
  }
}
