package dev.ledger.console;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.InvalidInputException;
import dev.ledger.Label;
import dev.ledger.Ledger;
import dev.ledger.Status;
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
  private final OverviewReads overview;
  private final TaskPages tasks;

  Pages(
      Ledger ledger,
      ReadModel reads,
      Label handling,
      boolean readOnly,
      Clock clock,
      FleetView fleet) {
    this.fleet = fleet;
    this.deadLetters = new DeadLetterReads(reads);
    this.settings = new SettingsView(ledger, reads);
    this.overview = new OverviewReads(reads.dataSource(), reads, clock);
    this.tasks = new TaskPages(this, ledger, handling, readOnly, clock, deadLetters, settings);
    this.api =
        new Api(this, ledger, reads, deadLetters, overview, fleet, settings, handling, clock);
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
      template = tasks.task(seg.get(1), req, m);
    } else if (seg.get(0).equals("tasks") && seg.size() == 3 && seg.get(2).equals("confirm")) {
      template = tasks.confirm(seg.get(1), req, m);
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
    List<OverviewReads.Summary> summaries = overview.summaries(domains);
    List<SettingsView.Settings> set = settings.settings(summaries);
    for (int i = 0; i < domains.size(); i++) {
      ReadModel.Domain d = domains.get(i);
      OverviewReads.Summary sum = summaries.get(i);
      OverviewReads.Counts c = sum.counts();
      Map<String, Object> r = new LinkedHashMap<>();
      r.put("domain", d.name());
      r.put("path", enc(d.name()));
      for (Status s : Status.values()) {
        r.put(s.wire(), c.show(s));
      }
      OverviewReads.Oldest oldest = sum.oldest();
      r.put(
          "oldestAdmitted",
          oldest.at() == null
              ? ""
              : (oldest.bounded() ? "≥" : "") + Format.age(Duration.between(oldest.at(), now)));
      int dead = sum.deadLetters();
      r.put("deadLetters", dead > OverviewReads.CAP ? ">" + OverviewReads.CAP : "" + dead);
      OverviewReads.Throughput t = sum.lastHour();
      r.put("completedLastHour", (t.estimated() ? "≈" : "") + t.completed());
      r.put("eventsLastHour", (t.estimated() ? "≈" : "") + t.events());
      r.put("badges", settings.badges(set.get(i)));
      rows.add(r);
    }
    m.put("domains", rows);
    m.put("empty", rows.isEmpty());
    m.put("now", Format.time(now));
    m.put("cap", OverviewReads.CAP);
    m.put("window", OverviewReads.EVENT_WINDOW);
    return "overview";
  }

  ReadModel.QueueFilter filter(Request req) {
    Set<Status> statuses = EnumSet.noneOf(Status.class);
    for (String s : req.params("status")) {
      if (s.equalsIgnoreCase("all")) {
        statuses.addAll(Arrays.asList(Status.values()));
      } else {
        statuses.add(parameter("status", () -> Status.parse(s)));
      }
    }
    if (statuses.isEmpty()) {
      statuses.addAll(OPEN);
    }
    String label = req.param("label");
    return new ReadModel.QueueFilter(
        statuses,
        label == null ? null : parameter("label", () -> Label.parse(label)),
        req.param("requires"),
        req.param("origin"),
        req.param("text"));
  }

  /**
   * A query parameter parsed by the ledger's own parser, its error naming the parameter the page
   * was given (the parser names its own field, e.g. {@code classification} for {@code label}).
   *
   * @throws IllegalArgumentException (400) when the parser refuses the value
   */
  static <T> T parameter(String name, java.util.function.Supplier<T> parse) {
    try {
      return parse.get();
    } catch (InvalidInputException e) {
      String rule =
          e.getMessage().substring(Math.min(e.getMessage().length(), e.field().length() + 2));
      throw new IllegalArgumentException(name + ": " + rule, e);
    }
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
    return hiddenNote(handling, label);
  }

  /** What a task above the handling label shows instead of its title. */
  static String hiddenNote(Label handling, Label label) {
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

  /** An action (a POST): see {@link TaskPages#act}. */
  Response act(List<String> seg, Request req, Map<String, Object> m, Views views, String basePath) {
    return tasks.act(seg, req, m, views, basePath);
  }

  // ---------------------------------------------------------------------------------------------
  // JSON API

  Response api(List<String> seg, Request req) {
    return api.answer(seg, req);
  }

  static String nz(String s) {
    return s == null ? "" : s;
  }

  static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }
}
