package dev.ledger.console;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.DomainControls;
import dev.ledger.Ledger;
import dev.ledger.retention.RetentionSetting;
import dev.ledger.schedule.Schedule;
import dev.ledger.schedule.Timing;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What operators set on a domain and on the ledger, as the console shows it: a domain's queue
 * controls ({@link Ledger#controls(String)}: paused, concurrency and rate limits) and its retention
 * ({@link Ledger#retention()}), and every schedule ({@link Ledger#schedules()}). Reads through the
 * ledger's API only; read only. Thread-safe.
 */
final class SettingsView {

  private final Ledger ledger;
  private final ReadModel reads;

  SettingsView(Ledger ledger, ReadModel reads) {
    this.reads = reads;
    this.ledger = ledger;
  }

  /** A domain's controls and retention, read once for a page or an API answer. */
  record Settings(DomainControls controls, Optional<RetentionSetting> retention) {

    /** The retention when one is set, else null. */
    Duration keep() {
      return retention.flatMap(RetentionSetting::retention).orElse(null);
    }
  }

  Settings settings(String domain) {
    return new Settings(ledger.controls(domain), ledger.retention().get(domain));
  }

  /**
   * Several domains' settings for one page: their controls as the overview's statement read them
   * ({@link OverviewReads.Summary#controls()}), the retention rows in one read ({@link
   * dev.ledger.retention.Retention#list()}) rather than one per domain.
   *
   * @param summaries the domains' summaries
   * @return their settings, in the summaries' order
   */
  List<Settings> settings(List<OverviewReads.Summary> summaries) {
    if (summaries.isEmpty()) {
      return List.of();
    }
    Map<String, RetentionSetting> retention = new HashMap<>();
    for (RetentionSetting r : ledger.retention().list()) {
      retention.put(r.domain(), r);
    }
    List<Settings> out = new ArrayList<>(summaries.size());
    for (OverviewReads.Summary s : summaries) {
      DomainControls c = s.controls();
      out.add(new Settings(c, Optional.ofNullable(retention.get(c.domain()))));
    }
    return out;
  }

  /**
   * The short badges of an overview row: {@code paused}, {@code max 5 claimed}, {@code rate 10/1s},
   * {@code keep 30d}; empty when nothing is set.
   */
  List<Map<String, Object>> badges(Settings s) {
    List<Map<String, Object>> out = new ArrayList<>();
    DomainControls c = s.controls();
    if (c.paused()) {
      out.add(Map.of("kind", "paused", "text", "paused"));
    }
    if (c.maxClaimed() != null) {
      out.add(Map.of("kind", "limit", "text", "max " + c.maxClaimed() + " claimed"));
    }
    if (c.rateClaims() != null) {
      out.add(Map.of("kind", "limit", "text", "rate " + c.rateText()));
    }
    if (s.keep() != null) {
      out.add(Map.of("kind", "retention", "text", "keep " + duration(s.keep())));
    }
    return out;
  }

  /** The model of a domain page's settings card ({@code settings.mustache}). */
  Map<String, Object> card(Settings s) {
    DomainControls c = s.controls();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("paused", c.paused());
    m.put("toggle", c.paused() ? "resume" : "pause");
    m.put("toggleLabel", c.paused() ? "Resume claims" : "Pause claims");
    m.put("claims", c.paused() ? "paused: claims return nothing" : "running");
    m.put("maxClaimed", c.maxClaimed() == null ? "none" : c.maxClaimed() + " claimed at once");
    m.put(
        "rate",
        c.rateClaims() == null
            ? "none"
            : c.rateClaims()
                + " claims per "
                + duration(c.ratePeriod())
                + " ("
                + c.rateText()
                + ")");
    m.put("claimedNow", c.claimedNow());
    m.put(
        "retention",
        s.keep() == null
            ? "none (nothing of the domain is purged)"
            : "completed and invalidated tasks kept " + duration(s.keep()) + " after they end");
    RetentionSetting r = s.retention().orElse(null);
    m.put("tasksRemoved", r == null ? 0 : r.tasksRemoved());
    m.put("eventsRemoved", r == null ? 0 : r.eventsRemoved());
    m.put(
        "lastPurge", r == null || r.lastPurgeAt() == null ? "never" : Format.time(r.lastPurgeAt()));
    return m;
  }

  /** A domain's {@code controls} and {@code retention} in {@code /api/domains}. */
  void json(Settings s, ObjectNode o) {
    DomainControls c = s.controls();
    ObjectNode ctl = o.putObject("controls");
    ctl.put("paused", c.paused());
    ctl.put("maxClaimed", c.maxClaimed());
    ctl.put("rateClaims", c.rateClaims());
    ctl.put("ratePeriodMillis", c.ratePeriod() == null ? null : c.ratePeriod().toMillis());
    ctl.put("rate", c.rateText());
    ctl.put("claimedNow", c.claimedNow());
    RetentionSetting r = s.retention().orElse(null);
    if (r == null) {
      o.putNull("retention");
      return;
    }
    ObjectNode ret = o.putObject("retention");
    ret.put("keepSeconds", s.keep() == null ? null : s.keep().getSeconds());
    ret.put("keep", s.keep() == null ? null : duration(s.keep()));
    ret.put("tasksRemoved", r.tasksRemoved());
    ret.put("eventsRemoved", r.eventsRemoved());
    ret.put("removedThroughSeq", r.removedThroughSeq());
    ret.put("lastPurgeAt", r.lastPurgeAt() == null ? null : r.lastPurgeAt().toString());
  }

  /** The schedules page's model. */
  String schedulesPage(Map<String, Object> m) {
    m.put("title", "Schedules");
    List<Map<String, Object>> rows = new ArrayList<>();
    // a schedule's domain has a page once its first task was filed (the directory's domain row);
    // before, its name is shown without a link (the domain page would be a 404)
    java.util.Set<String> filed = new java.util.HashSet<>();
    reads.domains().forEach(d -> filed.add(d.name()));
    for (Schedule s : ledger.schedules().list()) {
      Map<String, Object> r = new LinkedHashMap<>();
      r.put("name", s.name());
      r.put("domain", s.spec().domain());
      r.put("domainPath", enc(s.spec().domain()));
      r.put("domainFiled", filed.contains(s.spec().domain()));
      r.put("path", enc(s.name()));
      r.put("timing", timing(s.spec().timing()));
      r.put("paused", s.paused());
      r.put("toggle", s.paused() ? "resume" : "pause");
      r.put("toggleLabel", s.paused() ? "Resume" : "Pause");
      r.put("nextTick", s.paused() ? "(paused)" : tick(s.nextTick(), "none"));
      r.put("lastTick", tick(s.lastTick(), "never"));
      rows.add(r);
    }
    m.put("schedules", rows);
    m.put("none", rows.isEmpty());
    return "schedules";
  }

  /** {@code GET /api/schedules}. */
  String schedulesJson() {
    ArrayNode out = Pages.JSON.createArrayNode();
    for (Schedule s : ledger.schedules().list()) {
      ObjectNode o = out.addObject();
      Timing t = s.spec().timing();
      o.put("name", s.name());
      o.put("domain", s.spec().domain());
      o.put("cron", t.cronExpression());
      o.put("zone", t.zone() == null ? null : t.zone().getId());
      o.put("intervalMillis", t.interval() == null ? null : t.interval().toMillis());
      o.put("timing", timing(t));
      o.put("paused", s.paused());
      // a paused schedule files no tick: none is next (as `schedule list --json` says)
      o.put("nextTick", s.paused() || s.nextTick() == null ? null : s.nextTick().toString());
      o.put("lastTick", s.lastTick() == null ? null : s.lastTick().toString());
      o.put("origin", s.origin());
    }
    return out.toString();
  }

  // ---------------------------------------------------------------------------------------------
  // pause and resume: a confirm page (GET .../confirm?action=), then a POST through the ledger

  /** The confirm page of pausing or resuming a domain's claims. */
  String confirmDomain(String domain, Request req, Map<String, Object> m) {
    String action = pauseOrResume(req.param("action"));
    String base = (String) m.get("base");
    m.put("title", (action.equals("pause") ? "Pause" : "Resume") + " claims of " + domain + "?");
    m.put(
        "question",
        action.equals("pause")
            ? "Pause the domain's claims: every claim returns nothing until it is resumed; claimed"
                + " tasks keep their leases."
            : "Resume the domain's claims.");
    m.put("subject", domain);
    m.put("action", base + "/domains/" + enc(domain) + "/" + action);
    m.put("fields", List.of());
    m.put("back", base + "/domains/" + enc(domain));
    return "confirm";
  }

  /** The confirm page of pausing or resuming a schedule. */
  String confirmSchedule(String name, Request req, Map<String, Object> m) {
    String action = pauseOrResume(req.param("action"));
    schedule(name);
    String base = (String) m.get("base");
    m.put("title", (action.equals("pause") ? "Pause" : "Resume") + " schedule " + name + "?");
    m.put(
        "question",
        action.equals("pause")
            ? "Pause the schedule: it files no tick, and the ticks of the pause are never filed."
            : "Resume the schedule: it files its next tick from now on.");
    m.put("subject", name);
    m.put("action", base + "/schedules/" + enc(name) + "/" + action);
    m.put("fields", List.of());
    m.put("back", base + "/schedules");
    return "confirm";
  }

  /**
   * Pauses or resumes a domain's claims ({@code POST /domains/{d}/pause} or {@code resume}) and
   * puts what was written in the done page's model; the caller checked CSRF and read-only.
   */
  String actOnDomain(String domain, String action, Map<String, Object> m) {
    DomainControls c =
        switch (action) {
          case "pause" -> ledger.pause(domain);
          case "resume" -> ledger.resume(domain);
          default -> throw new Console.Refusal(404, "no such action");
        };
    m.put(
        "settingsWritten",
        List.of(
            Map.of("name", "domain", "value", domain),
            Map.of("name", "paused", "value", String.valueOf(c.paused()))));
    return action + " " + domain;
  }

  /** Pauses or resumes a schedule and puts what was written in the done page's model. */
  String actOnSchedule(String name, String action, Map<String, Object> m) {
    schedule(name);
    Schedule s =
        switch (action) {
          case "pause" -> ledger.schedules().pause(name);
          case "resume" -> ledger.schedules().resume(name);
          default -> throw new Console.Refusal(404, "no such action");
        };
    m.put(
        "settingsWritten",
        List.of(
            Map.of("name", "schedule", "value", s.name()),
            Map.of("name", "paused", "value", String.valueOf(s.paused())),
            Map.of(
                "name",
                "next tick",
                "value",
                s.paused() ? "(paused)" : tick(s.nextTick(), "none"))));
    return action + " schedule " + name;
  }

  private Schedule schedule(String name) {
    if (name.isEmpty() || name.length() > dev.ledger.schedule.Schedules.MAX_NAME) {
      throw new Console.Refusal(404, "no such schedule");
    }
    return ledger
        .schedules()
        .get(name)
        .orElseThrow(() -> new Console.Refusal(404, "no such schedule"));
  }

  private static String pauseOrResume(String action) {
    if (!"pause".equals(action) && !"resume".equals(action)) {
      throw new IllegalArgumentException("action: must be pause or resume");
    }
    return action;
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  private static String tick(Instant t, String none) {
    return t == null ? none : Format.time(t);
  }

  /** {@code cron 30 2 * * * (Europe/Berlin)} or {@code every 1h}. */
  static String timing(Timing t) {
    return t.cronExpression() != null
        ? "cron " + t.cronExpression() + " (" + t.zone().getId() + ")"
        : "every " + duration(t.interval());
  }

  /** Whole days, hours, minutes or seconds ({@code 30d}, {@code 90m}), else milliseconds. */
  static String duration(Duration d) {
    long ms = d.toMillis();
    if (ms % 86_400_000 == 0) {
      return ms / 86_400_000 + "d";
    }
    if (ms % 3_600_000 == 0) {
      return ms / 3_600_000 + "h";
    }
    if (ms % 60_000 == 0) {
      return ms / 60_000 + "m";
    }
    if (ms % 1000 == 0) {
      return ms / 1000 + "s";
    }
    return ms + "ms";
  }
}
