package dev.ledger.console;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.FailureRecord;
import dev.ledger.Label;
import dev.ledger.Lease;
import dev.ledger.Ledger;
import dev.ledger.LoggedEvent;
import dev.ledger.Status;
import dev.ledger.Task;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The console's pages, JSON API and actions, behind {@link Console}'s security: reads through the
 * ledger's API and {@link ReadModel}, writes through the ledger's API only. Thread-safe.
 */
final class Pages {

  static final ObjectMapper JSON = new ObjectMapper();

  /** Event kinds whose payload carries no free text: shown even for a task above handling. */
  static final Set<String> PLAIN_KINDS = Set.of("admitted", "released", "claimed", "heartbeat");

  /** The statuses a queue page shows when none is asked for: the open ones. */
  static final Set<Status> OPEN = EnumSet.of(Status.PROPOSED, Status.ADMITTED, Status.CLAIMED);

  static final int PAGE_SIZE = 50;

  /** Dead letters a group re-file reads per query. */
  static final int REFILE_PAGE = 500;

  private final Ledger ledger;
  private final ReadModel reads;
  private final Label handling;
  private final boolean readOnly;
  private final Clock clock;
  private final FleetView fleet;
  private final DeadLetterReads deadLetters;
  private final Api api;
  private final SettingsView settings;

  Pages(
      Ledger ledger,
      ReadModel reads,
      Label handling,
      boolean readOnly,
      Clock clock,
      FleetView fleet) {
    this.fleet = fleet;
    this.deadLetters = new DeadLetterReads(reads);
    this.settings = new SettingsView(ledger);
    this.api = new Api(this, ledger, reads, deadLetters, fleet, settings, handling, clock);
    this.ledger = ledger;
    this.reads = reads;
    this.handling = handling;
    this.readOnly = readOnly;
    this.clock = clock;
  }

  // ---------------------------------------------------------------------------------------------
  // pages

  Response page(List<String> seg, Request req, Map<String, Object> m, Views views) {
    String template;
    if (seg.isEmpty()) {
      template = overview(m);
    } else if (seg.size() == 1 && seg.get(0).equals("tenants")) {
      template = fleet.tenantsPage(m);
    } else if (seg.size() == 1 && seg.get(0).equals("schemas")) {
      template = fleet.schemasPage(m);
    } else if (seg.size() == 1 && seg.get(0).equals("schedules")) {
      template = settings.schedulesPage(m);
    } else if (seg.size() == 3 && seg.get(0).equals("schedules") && seg.get(2).equals("confirm")) {
      refuseIfReadOnly();
      template = settings.confirmSchedule(seg.get(1), req, m);
    } else if (seg.get(0).equals("domains") && seg.size() >= 2) {
      ReadModel.Domain d = domain(seg.get(1));
      m.put("domain", d.name());
      m.put("domainPath", enc(d.name()));
      m.put("settings", settings.card(settings.settings(d.name())));
      String tab = seg.size() == 2 ? "queue" : seg.get(2);
      m.put("tab_" + tab, true);
      template =
          switch (seg.size() == 2 ? "queue" : String.join("/", seg.subList(2, seg.size()))) {
            case "queue" -> queue(d, req, m);
            case "dead" -> dead(d, m);
            case "dead/confirm" -> confirmGroup(d, req, m);
            case "delayed" -> delayed(d, m);
            case "running" -> running(d, m);
            case "confirm" -> {
              refuseIfReadOnly();
              yield settings.confirmDomain(d.name(), req, m);
            }
            default -> throw new Console.Refusal(404, "no such page");
          };
    } else if (seg.get(0).equals("tasks") && seg.size() == 2) {
      template = task(seg.get(1), req, m);
    } else if (seg.get(0).equals("tasks") && seg.size() == 3 && seg.get(2).equals("confirm")) {
      template = confirm(seg.get(1), req, m);
    } else {
      throw new Console.Refusal(404, "no such page");
    }
    return Response.html(200, views.render(template, m));
  }

  private void refuseIfReadOnly() {
    if (readOnly) {
      throw new Console.Refusal(403, "refused: this console is read-only (--read-only)");
    }
  }

  ReadModel.Domain domain(String name) {
    ReadModel.Domain d = reads.domain(name);
    if (d == null) {
      throw new Console.Refusal(404, "no such domain (no task was ever filed in it)");
    }
    return d;
  }

  private String overview(Map<String, Object> m) {
    m.put("title", "Overview");
    List<Map<String, Object>> rows = new ArrayList<>();
    Instant now = clock.instant();
    List<ReadModel.Domain> domains = reads.domains();
    List<ReadModel.Summary> summaries = reads.summaries(domains, deadLetters.countField());
    List<SettingsView.Settings> set =
        settings.settings(domains.stream().map(ReadModel.Domain::name).toList());
    for (int i = 0; i < domains.size(); i++) {
      ReadModel.Domain d = domains.get(i);
      ReadModel.Summary sum = summaries.get(i);
      ReadModel.Counts c = sum.counts();
      Map<String, Object> r = new LinkedHashMap<>();
      r.put("domain", d.name());
      r.put("path", enc(d.name()));
      for (Status s : Status.values()) {
        r.put(s.wire(), c.show(s));
      }
      ReadModel.Oldest oldest = sum.oldest();
      r.put(
          "oldestAdmitted",
          oldest.at() == null
              ? ""
              : (oldest.bounded() ? "≥" : "") + Format.age(Duration.between(oldest.at(), now)));
      int dead = sum.deadLetters();
      r.put("deadLetters", dead > deadLetters.cap() ? ">" + deadLetters.cap() : "" + dead);
      ReadModel.Throughput t = sum.lastHour();
      r.put("completedLastHour", (t.partial() ? "≥" : "") + t.completed());
      r.put("eventsLastHour", (t.partial() ? "≥" : "") + t.events());
      r.put("badges", settings.badges(set.get(i)));
      rows.add(r);
    }
    m.put("domains", rows);
    m.put("empty", rows.isEmpty());
    m.put("now", Format.time(now));
    return "overview";
  }

  ReadModel.QueueFilter filter(Request req) {
    Set<Status> statuses = EnumSet.noneOf(Status.class);
    for (String s : req.params("status")) {
      if (s.equals("all")) {
        statuses.addAll(Arrays.asList(Status.values()));
      } else {
        statuses.add(Status.parse(s));
      }
    }
    if (statuses.isEmpty()) {
      statuses.addAll(OPEN);
    }
    String label = req.param("label");
    return new ReadModel.QueueFilter(
        statuses,
        label == null ? null : Label.parse(label),
        req.param("requires"),
        req.param("origin"),
        req.param("text"));
  }

  int limit(Request req) {
    String l = req.param("limit");
    if (l == null) {
      return PAGE_SIZE;
    }
    try {
      int n = Integer.parseInt(l);
      if (n >= 1 && n <= 500) {
        return n;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new IllegalArgumentException("limit: must be 1 to 500");
  }

  private String queue(ReadModel.Domain d, Request req, Map<String, Object> m) {
    ReadModel.QueueFilter f = filter(req);
    ReadModel.Page page =
        reads.queue(d, f, ReadModel.Cursor.parse(req.param("after")), limit(req), handling);
    m.put("title", d.name() + ": queue");
    List<Map<String, Object>> statuses = new ArrayList<>();
    for (Status s : Status.values()) {
      statuses.add(Map.of("name", s.wire(), "checked", f.statuses().contains(s)));
    }
    m.put("statuses", statuses);
    m.put("label", f.label() == null ? "" : f.label().wire());
    m.put(
        "labels",
        Arrays.stream(Label.values())
            .map(l -> Map.of("name", l.wire(), "selected", l == f.label()))
            .toList());
    m.put("requires", nz(f.requirement()));
    m.put("origin", nz(f.origin()));
    m.put("text", nz(f.text()));
    List<Map<String, Object>> rows = new ArrayList<>();
    for (ReadModel.QueueRow r : page.rows()) {
      rows.add(row(r));
    }
    m.put("rows", rows);
    m.put("none", rows.isEmpty());
    if (page.next() != null) {
      m.put("next", "?" + queryWithout(req, "after") + "after=" + page.next().token());
    }
    if (req.param("after") != null) {
      m.put("first", "?" + queryWithout(req, "after"));
    }
    return "queue";
  }

  private static String queryWithout(Request req, String name) {
    StringBuilder b = new StringBuilder();
    req.query()
        .forEach(
            (k, vs) -> {
              if (!k.equals(name)) {
                for (String v : vs) {
                  b.append(enc(k)).append('=').append(enc(v)).append('&');
                }
              }
            });
    return b.toString();
  }

  private Map<String, Object> row(ReadModel.QueueRow r) {
    Map<String, Object> m = new LinkedHashMap<>();
    boolean visible = handling.canHandle(r.label());
    m.put("id", r.id());
    m.put("path", enc(r.id()));
    m.put("title", visible ? r.title() : hiddenNote(r.label()));
    m.put("hidden", !visible);
    m.put("status", r.status().wire());
    m.put("label", r.label().wire());
    m.put("priority", r.priority());
    m.put("created", Format.time(r.created()));
    m.put("requirements", String.join(", ", r.requirements()));
    m.put("origin", nz(r.origin()));
    m.put("holder", nz(r.holder()));
    m.put("leaseUntil", Format.time(r.leaseUntil()));
    m.put("attempts", r.attempts());
    return m;
  }

  private String hiddenNote(Label label) {
    return "(hidden: labelled " + label.wire() + ", above handling " + handling.wire() + ")";
  }

  private String dead(ReadModel.Domain d, Map<String, Object> m) {
    m.put("title", d.name() + ": dead letters");
    DeadLetterReads.Groups groups = deadLetters.groups(d, handling);
    List<Map<String, Object>> out = new ArrayList<>();
    for (DeadLetterReads.Group g : groups.groups()) {
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("error", g.error());
      row.put("errorParam", enc(g.error()));
      row.put("count", g.count());
      row.put(
          "tasks",
          g.samples().stream()
              .map(
                  t ->
                      Map.of(
                          "id", t.id(),
                          "path", enc(t.id()),
                          "title",
                              handling.canHandle(t.label()) ? nz(t.title()) : hiddenNote(t.label()),
                          "attempts", t.attempts(),
                          "created", Format.time(t.created())))
              .toList());
      row.put("more", Math.max(0, g.count() - g.samples().size()));
      out.add(row);
    }
    m.put("groups", out);
    m.put("none", out.isEmpty());
    m.put("capped", groups.capped());
    m.put("cap", deadLetters.cap());
    return "dead";
  }

  /** A dead letter's last error as grouped: the reason without its prefix, or hidden. */
  private String errorOf(Task t) {
    return DeadLetterReads.error(t.spec().classification(), t.reason(), handling);
  }

  private String titleOf(Task t) {
    return handling.canHandle(t.spec().classification())
        ? t.spec().title()
        : hiddenNote(t.spec().classification());
  }

  private String confirmGroup(ReadModel.Domain d, Request req, Map<String, Object> m) {
    String error = req.param("error");
    if (error == null) {
      throw new IllegalArgumentException("error: which error group to re-file");
    }
    DeadLetterReads.Groups groups = deadLetters.groups(d, handling);
    int count =
        groups.groups().stream()
            .filter(g -> g.error().equals(error))
            .mapToInt(DeadLetterReads.Group::count)
            .sum();
    String shown = groups.capped() ? "at least " + count : String.valueOf(count);
    m.put("title", "Re-file " + shown + " dead letters?");
    m.put("question", "Re-file every dead letter of " + d.name() + " whose last error is:");
    m.put("subject", error);
    m.put("action", m.get("base") + "/domains/" + enc(d.name()) + "/dead/refile");
    m.put("fields", List.of(Map.of("name", "error", "value", error)));
    m.put("count", shown);
    m.put("back", m.get("base") + "/domains/" + enc(d.name()) + "/dead");
    return "confirm";
  }

  private String delayed(ReadModel.Domain d, Map<String, Object> m) {
    m.put("title", d.name() + ": delayed");
    Instant now = clock.instant();
    List<Map<String, Object>> rows = new ArrayList<>();
    for (ReadModel.Delayed t : reads.delayed(d)) {
      Map<String, Object> r = row(t.row());
      r.put("due", Format.time(t.notBefore()));
      r.put("dueIn", Format.age(Duration.between(now, t.notBefore())));
      rows.add(r);
    }
    m.put("rows", rows);
    m.put("none", rows.isEmpty());
    return "delayed";
  }

  private String running(ReadModel.Domain d, Map<String, Object> m) {
    m.put("title", d.name() + ": running");
    Instant now = clock.instant();
    List<ReadModel.QueueRow> running = reads.running(d);
    Map<String, Instant> since =
        reads.claimedAt(d, running.stream().map(ReadModel.QueueRow::id).toList());
    Map<String, List<Map<String, Object>>> byHolder = new TreeMap<>();
    for (ReadModel.QueueRow t : running) {
      Map<String, Object> r = row(t);
      Instant claimed = since.get(t.id());
      r.put("leaseAge", claimed == null ? "" : Format.age(Duration.between(claimed, now)));
      r.put(
          "leaseLeft",
          t.leaseUntil() == null ? "" : Format.age(Duration.between(now, t.leaseUntil())));
      r.put("expired", t.leaseUntil() != null && t.leaseUntil().isBefore(now));
      byHolder.computeIfAbsent(nz(t.holder()), h -> new ArrayList<>()).add(r);
    }
    List<Map<String, Object>> holders = new ArrayList<>();
    byHolder.forEach(
        (h, rows) -> holders.add(Map.of("holder", h, "count", rows.size(), "rows", rows)));
    m.put("holders", holders);
    m.put("none", holders.isEmpty());
    return "running";
  }

  private String task(String id, Request req, Map<String, Object> m) {
    Task t = ledger.get(id);
    m.putAll(taskModel(t));
    m.put("title", "Task " + t.id());
    List<String> can = new ArrayList<>();
    for (String c : req.params("can")) {
      can.addAll(Arrays.stream(c.split(",")).map(String::strip).filter(s -> !s.isEmpty()).toList());
    }
    String asHandling = req.param("as");
    Label claimer = asHandling == null ? handling : Label.parse(asHandling);
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
    m.put("path", enc(t.id()));
    m.put("domain", t.spec().domain());
    m.put("domainPath", enc(t.spec().domain()));
    m.put("hidden", !visible);
    m.put("hiddenNote", hiddenNote(t.spec().classification()));
    m.put("taskTitle", visible ? t.spec().title() : hiddenNote(t.spec().classification()));
    m.put("body", visible ? t.spec().body() : "");
    m.put("status", t.status().wire());
    m.put("label", t.spec().classification().wire());
    m.put("priority", t.spec().priority());
    m.put("created", Format.time(t.created()));
    m.put("createdBy", t.spec().createdBy());
    m.put("requirements", String.join(", ", t.spec().requirements()));
    m.put("origin", nz(t.spec().origin()));
    m.put("upstreamEvent", nz(t.spec().upstreamEvent()));
    m.put("notBefore", Format.time(t.spec().notBefore()));
    m.put("maxAttempts", t.spec().maxAttempts() > 0 ? t.spec().maxAttempts() : null);
    m.put("holder", nz(t.holder()));
    m.put("attempts", t.attempts());
    m.put("leaseUntil", Format.time(t.leaseUntil()));
    m.put(
        "leaseLeft",
        t.status() == Status.CLAIMED && t.leaseUntil() != null
            ? Format.age(Duration.between(now, t.leaseUntil()))
            : "");
    m.put("claimed", t.status() == Status.CLAIMED);
    m.put("handoff", visible ? nz(t.handoff()) : "");
    m.put("reason", visible ? nz(t.reason()) : "");
    m.put("supersededBy", nz(t.supersededBy()));
    m.put("postedTo", visible ? nz(t.postedTo()) : "");
    m.put("deadLetter", isDeadLetter(t));
    List<Map<String, Object>> deps = new ArrayList<>();
    for (String dep : t.spec().dependsOn()) {
      deps.add(Map.of("id", dep, "path", enc(dep), "status", Why.dependencyStatus(ledger, dep)));
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
                    "path", enc(x.id()),
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
    boolean shown = visible || PLAIN_KINDS.contains(e.kind());
    m.put("payload", shown ? e.payload() : "(hidden: above handling " + handling.wire() + ")");
    return m;
  }

  private String confirm(String id, Request req, Map<String, Object> m) {
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
    m.put("action", m.get("base") + "/tasks/" + enc(t.id()) + "/" + action);
    m.put(
        "fields",
        action.equals("release")
            ? List.of(
                Map.of("name", "holder", "value", nz(t.holder())),
                Map.of("name", "attempt", "value", String.valueOf(t.attempts())))
            : List.of());
    m.put("needsReason", action.equals("invalidate") || action.equals("rescore"));
    m.put("needsPriority", action.equals("rescore"));
    m.put("priority", t.spec().priority());
    m.put("back", m.get("base") + "/tasks/" + enc(t.id()));
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
        case "invalidate" -> ledger.invalidate(t.id(), req.formValue("reason"), null);
        case "rescore" -> {
          String p = req.formValue("priority");
          long priority;
          try {
            priority = Long.parseLong(p == null ? "" : p.strip());
          } catch (NumberFormatException e) {
            throw new IllegalArgumentException("priority: must be a whole number");
          }
          ledger.rescore(t.id(), priority, req.formValue("reason"));
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
      title = settings.actOnDomain(domain(seg.get(1)).name(), seg.get(2), m);
    } else if (seg.size() == 3 && seg.get(0).equals("schedules")) {
      title = settings.actOnSchedule(seg.get(1), seg.get(2), m);
    } else if (seg.size() == 4
        && seg.get(0).equals("domains")
        && seg.get(2).equals("dead")
        && seg.get(3).equals("refile")) {
      ReadModel.Domain d = domain(seg.get(1));
      String error = req.formValue("error");
      if (error == null) {
        throw new IllegalArgumentException("error: which error group to re-file");
      }
      // a page at a time in claim order (keyset), so a large group never loads at once
      ReadModel.Cursor after = null;
      while (true) {
        List<DeadLetterReads.Dead> page = deadLetters.page(d, after, REFILE_PAGE);
        for (DeadLetterReads.Dead t : page) {
          if (DeadLetterReads.error(t.label(), t.reason(), handling).equals(error)) {
            written.add(writtenBy(ledger.refile(t.id()), 0));
          }
        }
        if (page.size() < REFILE_PAGE) {
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
        enc(id),
        "status",
        t.status().wire(),
        "title",
        titleOf(t),
        "events",
        events);
  }

  // ---------------------------------------------------------------------------------------------
  // JSON API

  Response api(List<String> seg, Request req) {
    return api.answer(seg, req);
  }

  private static String nz(String s) {
    return s == null ? "" : s;
  }

  static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }
}
