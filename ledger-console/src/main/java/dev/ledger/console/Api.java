package dev.ledger.console;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.Label;
import dev.ledger.Ledger;
import dev.ledger.LoggedEvent;
import dev.ledger.Status;
import dev.ledger.Task;
import java.time.Clock;
import java.util.List;

/**
 * The console's JSON API under {@code /api/}, behind {@link Console}'s security: the same reads as
 * the pages ({@link Pages}, {@link ReadModel}, {@link OverviewReads}, {@link DeadLetterReads},
 * {@link FleetView}), the same hiding of task text above the handling label. Read only.
 * Thread-safe.
 */
final class Api {

  private final Pages pages;
  private final Ledger ledger;
  private final ReadModel reads;
  private final DeadLetterReads deadLetters;
  private final OverviewReads overview;
  private final FleetView fleet;
  private final SettingsView settings;
  private final Label handling;
  private final Clock clock;

  Api(
      Pages pages,
      Ledger ledger,
      ReadModel reads,
      DeadLetterReads deadLetters,
      OverviewReads overview,
      FleetView fleet,
      SettingsView settings,
      Label handling,
      Clock clock) {
    this.pages = pages;
    this.ledger = ledger;
    this.reads = reads;
    this.deadLetters = deadLetters;
    this.overview = overview;
    this.fleet = fleet;
    this.settings = settings;
    this.handling = handling;
    this.clock = clock;
  }

  Response answer(List<String> seg, Request req) {
    if (seg.size() == 2 && seg.get(1).equals("tenants")) {
      return Response.json(200, fleet.tenantsJson());
    }
    if (seg.size() == 2 && seg.get(1).equals("schemas")) {
      return Response.json(200, fleet.schemasJson());
    }
    if (seg.size() == 2 && seg.get(1).equals("schedules")) {
      return Response.json(200, settings.schedulesJson());
    }
    if (seg.size() == 2 && seg.get(1).equals("domains")) {
      ArrayNode out = Pages.JSON.createArrayNode();
      List<ReadModel.Domain> domains = reads.domains();
      List<OverviewReads.Summary> summaries = overview.summaries(domains);
      List<SettingsView.Settings> set = settings.settings(summaries);
      for (int i = 0; i < domains.size(); i++) {
        ReadModel.Domain d = domains.get(i);
        OverviewReads.Counts c = summaries.get(i).counts();
        ObjectNode o = out.addObject();
        o.put("domain", d.name());
        o.put("schema", d.schema());
        ObjectNode counts = o.putObject("counts");
        for (Status s : Status.values()) {
          counts.put(s.wire(), c.counts().get(s));
        }
        ArrayNode capped = o.putArray("countsCapped");
        c.capped().forEach(s -> capped.add(s.wire()));
        ObjectNode estimates = o.putObject("countsEstimated");
        c.estimates().forEach((s, n) -> estimates.put(s.wire(), n));
        o.put("countCap", OverviewReads.CAP);
        o.put("estimatedTasks", c.estimatedRows());
        int dead = summaries.get(i).deadLetters();
        o.put("deadLetters", Math.min(dead, OverviewReads.CAP));
        o.put("deadLettersCapped", dead > OverviewReads.CAP);
        settings.json(set.get(i), o);
      }
      return Response.json(200, out.toString());
    }
    if (seg.size() == 4 && seg.get(1).equals("domains") && seg.get(3).equals("queue")) {
      ReadModel.Domain d = pages.domain(seg.get(2));
      ReadModel.Page page =
          reads.queue(
              d,
              pages.filter(req),
              ReadModel.Cursor.parse(req.param("after")),
              pages.limit(req),
              handling);
      ObjectNode o = Pages.JSON.createObjectNode();
      o.put("domain", d.name());
      ArrayNode tasks = o.putArray("tasks");
      for (ReadModel.QueueRow r : page.rows()) {
        boolean visible = handling.canHandle(r.label());
        ObjectNode t = tasks.addObject();
        t.put("id", r.id());
        t.put("title", visible ? r.title() : null);
        t.put("hidden", !visible);
        t.put("status", r.status().wire());
        t.put("label", r.label().wire());
        t.put("priority", r.priority());
        t.put("created", r.created().toString());
        ArrayNode req2 = t.putArray("requirements");
        r.requirements().forEach(req2::add);
        t.put("origin", r.origin());
        t.put("holder", r.holder());
        t.put("leaseUntil", r.leaseUntil() == null ? null : r.leaseUntil().toString());
        t.put("attempts", r.attempts());
      }
      o.put("next", page.next() == null ? null : page.next().token());
      return Response.json(200, o.toString());
    }
    if (seg.size() == 4 && seg.get(1).equals("domains") && seg.get(3).equals("dead")) {
      ReadModel.Domain d = pages.domain(seg.get(2));
      DeadLetterReads.Groups groups = deadLetters.groups(d, handling);
      ObjectNode o = Pages.JSON.createObjectNode();
      o.put("domain", d.name());
      o.put("capped", groups.capped());
      ArrayNode out = o.putArray("groups");
      for (DeadLetterReads.Group g : groups.groups()) {
        ObjectNode n = out.addObject();
        n.put("error", g.error());
        n.put("count", g.count());
        ArrayNode ids = n.putArray("tasks");
        g.samples().forEach(t -> ids.add(t.id()));
      }
      return Response.json(200, o.toString());
    }
    if (seg.size() == 3 && seg.get(1).equals("tasks")) {
      Task t = ledger.get(seg.get(2));
      boolean visible = handling.canHandle(t.spec().classification());
      ObjectNode o = Pages.JSON.createObjectNode();
      o.put("id", t.id());
      o.put("domain", t.spec().domain());
      o.put("hidden", !visible);
      o.put("title", visible ? t.spec().title() : null);
      o.put("body", visible ? t.spec().body() : null);
      o.put("status", t.status().wire());
      o.put("label", t.spec().classification().wire());
      o.put("priority", t.spec().priority());
      o.put("created", t.created().toString());
      o.put("createdBy", t.spec().createdBy());
      ArrayNode rq = o.putArray("requirements");
      t.spec().requirements().forEach(rq::add);
      ArrayNode deps = o.putArray("dependsOn");
      t.spec().dependsOn().forEach(deps::add);
      o.put("origin", t.spec().origin());
      o.put("upstreamEvent", t.spec().upstreamEvent());
      o.put("holder", t.holder());
      o.put("attempts", t.attempts());
      o.put("leaseUntil", t.leaseUntil() == null ? null : t.leaseUntil().toString());
      o.put("handoff", visible ? t.handoff() : null);
      o.put("reason", visible ? t.reason() : null);
      o.put("supersededBy", t.supersededBy());
      ArrayNode why = o.putArray("notClaimableBecause");
      Why.reasons(ledger, t, t.spec().requirements(), handling, clock.instant()).forEach(why::add);
      ArrayNode events = o.putArray("events");
      for (LoggedEvent e : ledger.history(t.id())) {
        ObjectNode ev = events.addObject();
        ev.put("seq", e.seq());
        ev.put("kind", e.kind());
        ev.put("at", e.at().toString());
        if (visible || Pages.PLAIN_KINDS.contains(e.kind())) {
          try {
            ev.set("payload", Pages.JSON.readTree(e.payload()));
          } catch (java.io.IOException x) {
            ev.put("payload", e.payload());
          }
        } else {
          ev.putNull("payload");
        }
      }
      return Response.json(200, o.toString());
    }
    throw new Console.Refusal(404, "no such API route");
  }
}
