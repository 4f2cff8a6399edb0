package dev.ledger.console;

import dev.ledger.FailureRecord;
import dev.ledger.InvalidInputException;
import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.LoggedEvent;
import dev.ledger.Status;
import dev.ledger.Task;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A task's page (spec, lease, dependencies both ways, continuation, retry chain, its event
 * timeline, why it is not claimable), the confirm page of an action, and the actions themselves (on
 * a task, a domain's claims, a schedule, a dead-letter group), each followed by the events it
 * wrote. Writes through the ledger's API only. Thread-safe.
 */
final class TaskPages {

  private final Pages pages;
  private final Ledger ledger;
  private final Label handling;
  private final boolean readOnly;
  private final Clock clock;
  private final DeadLetterReads deadLetters;
  private final SettingsView settings;

  TaskPages(
      Pages pages,
      Ledger ledger,
      Label handling,
      boolean readOnly,
      Clock clock,
      DeadLetterReads deadLetters,
      SettingsView settings) {
    this.pages = pages;
    this.ledger = ledger;
    this.handling = handling;
    this.readOnly = readOnly;
    this.clock = clock;
    this.deadLetters = deadLetters;
    this.settings = settings;
  }

  String titleOf(Task t) {
    return handling.canHandle(t.spec().classification())
        ? t.spec().title()
        : Pages.hiddenNote(handling, t.spec().classification());
  }

  String task(String id, Request req, Map<String, Object> m) {
    Task t = ledger.get(id);
    m.putAll(taskModel(t));
    m.put("title", "Task " + t.id());
    List<String> can = new ArrayList<>();
    for (String c : req.params("can")) {
      can.addAll(Arrays.stream(c.split(",")).map(String::strip).filter(s -> !s.isEmpty()).toList());
    }
    String asHandling = req.param("as");
    Label claimer =
        asHandling == null ? handling : Pages.parameter("as", () -> Label.parse(asHandling));
    boolean asked = !req.params("can").isEmpty() || asHandling != null;
    List<String> why =
        Why.reasons(ledger, t, asked ? can : t.spec().requirements(), claimer, clock.instant());
    m.put("why", why);
    m.put("claimable", why.isEmpty());
    m.put("whyCan", String.join(",", asked ? can : t.spec().requirements()));
    m.put("whyAs", claimer.wire());
    m.put("whyAsked", asked);
    List<Map<String, Object>> labels = new ArrayList<>();
    for (Label l : Label.values()) {
      labels.add(Map.of("name", l.wire(), "selected", l == claimer));
    }
    m.put("whyLabels", labels);
    List<Map<String, Object>> actions = actions(t);
    m.put("actions", actions);
    m.put("hasActions", !actions.isEmpty());
    return "task";
  }

  /** The actions a task offers now, each a link to its confirm page. */
  private List<Map<String, Object>> actions(Task t) {
    List<Map<String, Object>> out = new ArrayList<>();
    if (readOnly) {
      return out;
    }
    if (t.status() == Status.PROPOSED) {
      out.add(Map.of("action", "admit", "label", "Admit"));
    }
    if (t.status() == Status.CLAIMED) {
      out.add(Map.of("action", "release", "label", "Release"));
    }
    if (!t.status().terminal()) {
      out.add(Map.of("action", "rescore", "label", "Rescore"));
      out.add(Map.of("action", "invalidate", "label", "Invalidate"));
    }
    if (isDeadLetter(t)) {
      out.add(Map.of("action", "refile", "label", "Re-file"));
    }
    return out;
  }

  private static boolean isDeadLetter(Task t) {
    return t.status() == Status.INVALIDATED
        && t.reason() != null
        && t.reason().startsWith(FailureRecord.DEAD_LETTER);
  }

  Map<String, Object> taskModel(Task t) {
    Map<String, Object> m = new LinkedHashMap<>();
    boolean visible = handling.canHandle(t.spec().classification());
    Instant now = clock.instant();
    m.put("id", t.id());
    m.put("path", Pages.enc(t.id()));
    m.put("domain", t.spec().domain());
    m.put("domainPath", Pages.enc(t.spec().domain()));
    m.put("hidden", !visible);
    m.put("hiddenNote", Pages.hiddenNote(handling, t.spec().classification()));
    m.put(
        "taskTitle",
        visible ? t.spec().title() : Pages.hiddenNote(handling, t.spec().classification()));
    m.put("body", visible ? t.spec().body() : "");
    m.put("status", t.status().wire());
    m.put("label", t.spec().classification().wire());
    m.put("priority", t.spec().priority());
    m.put("created", Format.time(t.created()));
    m.put("createdBy", t.spec().createdBy());
    m.put("requirements", String.join(", ", t.spec().requirements()));
    m.put("origin", Pages.nz(t.spec().origin()));
    m.put("upstreamEvent", Pages.nz(t.spec().upstreamEvent()));
    m.put("notBefore", Format.time(t.spec().notBefore()));
    m.put("maxAttempts", t.spec().maxAttempts() > 0 ? t.spec().maxAttempts() : null);
    m.put("holder", Pages.nz(t.holder()));
    m.put("attempts", t.attempts());
    m.put("leaseUntil", Format.time(t.leaseUntil()));
    m.put(
        "leaseLeft",
        t.status() == Status.CLAIMED && t.leaseUntil() != null
            ? Format.age(Duration.between(now, t.leaseUntil()))
            : "");
    m.put("claimed", t.status() == Status.CLAIMED);
    m.put("handoff", visible ? Pages.nz(t.handoff()) : "");
    m.put("reason", visible ? Pages.nz(t.reason()) : "");
    m.put("supersededBy", Pages.nz(t.supersededBy()));
    m.put("postedTo", visible ? Pages.nz(t.postedTo()) : "");
    m.put("deadLetter", isDeadLetter(t));
    List<Map<String, Object>> deps = new ArrayList<>();
    for (String dep : t.spec().dependsOn()) {
      deps.add(
          Map.of("id", dep, "path", Pages.enc(dep), "status", Why.dependencyStatus(ledger, dep)));
    }
    m.put("dependsOn", deps);
    m.put("dependents", links(ledger.dependents(t.id())));
    List<Task> filed = ledger.filedFrom(t.id());
    m.put(
        "children",
        links(filed.stream().filter(c -> ("task:" + t.id()).equals(c.spec().origin())).toList()));
    m.put(
        "continuation",
        links(
            filed.stream()
                .filter(c -> ("continues:" + t.id()).equals(c.spec().origin()))
                .toList()));
    m.put("retryChain", links(retryChain(t)));
    List<Map<String, Object>> events = new ArrayList<>();
    for (LoggedEvent e : ledger.history(t.id())) {
      events.add(event(e, visible));
    }
    m.put("events", events);
    return m;
  }

  private List<Task> retryChain(Task t) {
    String origin = t.spec().origin();
    String root = origin != null && origin.startsWith("retries:") ? origin.substring(8) : t.id();
    List<Task> chain = new ArrayList<>();
    if (!root.equals(t.id())) {
      try {
        chain.add(ledger.get(root));
      } catch (dev.ledger.TaskNotFoundException e) {
        // the root was retired; the chain starts at its first retry
      }
    } else {
      chain.add(t);
    }
    chain.addAll(ledger.withOrigin(t.spec().domain(), "retries:" + root));
    return chain.size() > 1 ? chain : List.of();
  }

  private List<Map<String, Object>> links(List<Task> tasks) {
    return tasks.stream()
        .map(
            x ->
                Map.<String, Object>of(
                    "id", x.id(),
                    "path", Pages.enc(x.id()),
                    "status", x.status().wire(),
                    "title", titleOf(x)))
        .toList();
  }

  private Map<String, Object> event(LoggedEvent e, boolean visible) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("seq", e.seq());
    m.put("kind", e.kind());
    m.put("at", Format.time(e.at()));
    m.put("atExact", e.at().toString());
    boolean shown = visible || Pages.PLAIN_KINDS.contains(e.kind());
    m.put("payload", shown ? e.payload() : "(hidden: above handling " + handling.wire() + ")");
    return m;
  }

  String confirm(String id, Request req, Map<String, Object> m) {
    Task t = ledger.get(id);
    String action = req.param("action");
    if (action == null || actions(t).stream().noneMatch(a -> a.get("action").equals(action))) {
      throw new Console.Refusal(
          readOnly ? 403 : 409,
          readOnly
              ? "refused: this console is read-only (--read-only)"
              : "task "
                  + t.id()
                  + " ("
                  + t.status().wire()
                  + ") offers no action '"
                  + action
                  + "'");
    }
    m.put("title", "Confirm: " + action + " " + t.id() + "?");
    m.put("question", "Really " + action + " task " + t.id() + " (" + t.status().wire() + ")?");
    m.put("subject", titleOf(t));
    m.put("action", m.get("base") + "/tasks/" + Pages.enc(t.id()) + "/" + action);
    m.put(
        "fields",
        action.equals("release")
            ? List.of(
                Map.of("name", "holder", "value", Pages.nz(t.holder())),
                Map.of("name", "attempt", "value", String.valueOf(t.attempts())))
            : List.of());
    m.put("needsReason", action.equals("invalidate") || action.equals("rescore"));
    m.put("needsPriority", action.equals("rescore"));
    m.put("priority", t.spec().priority());
    m.put("back", m.get("base") + "/tasks/" + Pages.enc(t.id()));
    return "confirm";
  }

  // ---------------------------------------------------------------------------------------------
  // actions

  Response act(List<String> seg, Request req, Map<String, Object> m, Views views, String basePath) {
    List<Map<String, Object>> written = new ArrayList<>();
    String title;
    if (seg.size() == 3 && seg.get(0).equals("tasks")) {
      Task t = ledger.get(seg.get(1));
      String action = seg.get(2);
      long before = lastSeq(t.id());
      String shown = t.id();
      switch (action) {
        case "admit" -> ledger.admit(t.id());
        case "release" -> ledger.release(seenLease(t, req));
        case "invalidate" -> {
          String reason = req.formValue("reason");
          Pages.parameter("reason", () -> requireText("reason", reason));
          ledger.invalidate(t.id(), reason, null);
        }
        case "rescore" -> {
          String p = req.formValue("priority");
          long priority;
          try {
            priority = new java.math.BigInteger(p == null ? "" : p.strip()).longValueExact();
          } catch (NumberFormatException e) {
            throw new IllegalArgumentException("priority: must be a whole number");
          } catch (ArithmeticException e) {
            throw new IllegalArgumentException(
                "priority: must be between " + Long.MIN_VALUE + " and " + Long.MAX_VALUE);
          }
          // the ledger names its field "why"; the form's is "reason"
          String reason = req.formValue("reason");
          Pages.parameter("reason", () -> requireText("why", reason));
          ledger.rescore(t.id(), priority, reason);
        }
        case "refile" -> {
          shown = ledger.refile(t.id());
          before = 0;
        }
        default -> throw new Console.Refusal(404, "no such action");
      }
      title = action + " " + t.id();
      written.add(writtenBy(shown, before));
    } else if (seg.size() == 3 && seg.get(0).equals("domains")) {
      title = settings.actOnDomain(pages.domain(seg.get(1)).name(), seg.get(2), m);
    } else if (seg.size() == 3 && seg.get(0).equals("schedules")) {
      title = settings.actOnSchedule(seg.get(1), seg.get(2), m);
    } else if (seg.size() == 4
        && seg.get(0).equals("domains")
        && seg.get(2).equals("dead")
        && seg.get(3).equals("refile")) {
      ReadModel.Domain d = pages.domain(seg.get(1));
      String error = req.formValue("error");
      if (error == null) {
        throw new IllegalArgumentException("error: which error group to re-file");
      }
      // a page at a time in claim order (keyset), so a large group never loads at once
      ReadModel.Cursor after = null;
      while (true) {
        List<DeadLetterReads.Dead> page = deadLetters.page(d, after, Pages.REFILE_PAGE);
        for (DeadLetterReads.Dead t : page) {
          if (DeadLetterReads.error(t.label(), t.reason(), handling).equals(error)) {
            written.add(writtenBy(ledger.refile(t.id()), 0));
          }
        }
        if (page.size() < Pages.REFILE_PAGE) {
          break;
        }
        after = page.get(page.size() - 1).cursor();
      }
      title = "re-file " + written.size() + " dead letters of " + d.name();
    } else {
      throw new Console.Refusal(404, "no such action");
    }
    m.put("title", "Done: " + title);
    m.put("done", title);
    m.put("tasks", written);
    return Response.html(200, views.render("done", m));
  }

  /**
   * The lease a release names: the holder and attempt the confirm page showed (its hidden fields),
   * so a claim taken in between is refused by the ledger (lease lost) instead of released; a
   * request without them (a script) names the task's current lease.
   */
  private static Lease seenLease(Task t, Request req) {
    String holder = req.formValue("holder");
    String attempt = req.formValue("attempt");
    if (holder == null && attempt == null) {
      return new Lease(t.id(), t.holder(), t.attempts(), t.leaseUntil());
    }
    if (holder == null || attempt == null) {
      throw new IllegalArgumentException("holder and attempt: give both, or neither");
    }
    long n;
    try {
      n = Long.parseLong(attempt.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("attempt: must be a whole number");
    }
    return new Lease(t.id(), holder, n, t.leaseUntil());
  }

  private long lastSeq(String id) {
    List<LoggedEvent> h = ledger.history(id);
    return h.isEmpty() ? 0 : h.get(h.size() - 1).seq();
  }

  /** A task and the events it gained after {@code afterSeq}: what an action wrote. */
  private Map<String, Object> writtenBy(String id, long afterSeq) {
    Task t = ledger.get(id);
    boolean visible = handling.canHandle(t.spec().classification());
    List<Map<String, Object>> events = new ArrayList<>();
    for (LoggedEvent e : ledger.history(id)) {
      if (e.seq() > afterSeq) {
        events.add(event(e, visible));
      }
    }
    return Map.of(
        "id",
        id,
        "path",
        Pages.enc(id),
        "status",
        t.status().wire(),
        "title",
        titleOf(t),
        "events",
        events);
  }

  /** A form's required text, refused as the ledger refuses it when blank. */
  private static String requireText(String field, String value) {
    if (value == null || value.isBlank()) {
      throw new InvalidInputException(field, "must not be empty");
    }
    return value;
  }
}
