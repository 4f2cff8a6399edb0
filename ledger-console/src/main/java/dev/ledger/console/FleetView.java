package dev.ledger.console;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.ledger.migrate.Fleet;
import dev.ledger.migrate.FleetReport;
import dev.ledger.migrate.MigrationJob;
import dev.ledger.migrate.MigrationReport;
import dev.ledger.migrate.SchemaReport;
import dev.ledger.migrate.TenantInfo;
import dev.ledger.migrate.TenantRegistry;
import dev.ledger.migrate.TenantReport;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.sql.DataSource;

/**
 * The tenants and schema-versions pages and their JSON: the fleet's registry (read from the control
 * database, when the console was given one) and, per schema, the version it is at and the
 * migrations a migrate would apply.
 *
 * <p>The console's own database is described by {@link MigrationJob#status()} (the plan's
 * computation without the job's lock: two statements on the common path). The fleet's tenants are
 * described by {@link Fleet#plan()}, as {@code ledger-app fleet plan} does: under each tenant's
 * advisory lock, waiting at most {@link #TENANT_LOCK_WAIT} for it (a tenant a fleet run holds is
 * shown busy), applying nothing and changing no status, never making a registry. The tenant pages
 * never show a DSN: the registry's rows are read as {@link TenantInfo}. Thread-safe.
 */
final class FleetView {

  /** How long the schema page waits for a tenant's lock before showing it busy. */
  static final Duration TENANT_LOCK_WAIT = Duration.ofSeconds(2);

  /** How many tenants the schema page plans at once. */
  static final int PLAN_PARALLELISM = 4;

  private final DataSource dataSource;
  private final String directorySchema;
  private final DataSource control;
  private final String controlSchema;

  /**
   * A view over the console's database and, optionally, a fleet's control database.
   *
   * @param dataSource the console's database
   * @param directorySchema its directory schema
   * @param control the control database holding the tenant registry, or null for none
   * @param controlSchema the registry's schema in it
   */
  FleetView(
      DataSource dataSource, String directorySchema, DataSource control, String controlSchema) {
    this.dataSource = dataSource;
    this.directorySchema = directorySchema;
    this.control = control;
    this.controlSchema = controlSchema;
  }

  /** What the tenants page and {@code /api/tenants} show. */
  record Tenants(boolean control, boolean registry, List<TenantInfo> tenants) {}

  Tenants tenants() {
    if (control == null) {
      return new Tenants(false, false, List.of());
    }
    TenantRegistry registry = new TenantRegistry(control, controlSchema);
    if (!registry.exists()) {
      return new Tenants(true, false, List.of());
    }
    return new Tenants(true, true, registry.rows().stream().map(TenantRegistry.Row::info).toList());
  }

  /** The console's own database: each schema's version and what a migrate would apply. */
  MigrationReport own() {
    return MigrationJob.builder()
        .dataSource(dataSource)
        .directorySchema(directorySchema)
        .build()
        .status();
  }

  /**
   * Every tenant's plan, as {@code ledger-app fleet plan} computes it.
   *
   * @return the report, or null when the console has no control database or it holds no registry
   */
  FleetReport plan() {
    if (control == null || !new TenantRegistry(control, controlSchema).exists()) {
      return null;
    }
    return Fleet.builder()
        .control(control)
        .controlSchema(controlSchema)
        .createRegistry(false)
        .lockTimeout(TENANT_LOCK_WAIT)
        .parallelism(PLAN_PARALLELISM)
        .build()
        .plan();
  }

  // ---------------------------------------------------------------------------------------------
  // page models

  String tenantsPage(Map<String, Object> m) {
    m.put("title", "Tenants");
    Tenants t = tenants();
    m.put("noControl", !t.control());
    m.put("noRegistry", t.control() && !t.registry());
    List<Map<String, Object>> rows = new ArrayList<>();
    for (TenantInfo i : t.tenants()) {
      Map<String, Object> r = new LinkedHashMap<>();
      r.put("tenant", i.tenant());
      r.put("status", i.status().stored());
      r.put("degraded", i.status() == dev.ledger.migrate.TenantStatus.DEGRADED);
      r.put("reason", nz(i.reason()));
      r.put("updated", nz(i.updated()));
      rows.add(r);
    }
    m.put("tenants", rows);
    m.put("none", t.registry() && rows.isEmpty());
    m.put("hasTenants", !rows.isEmpty());
    return "tenants";
  }

  String schemasPage(Map<String, Object> m) {
    m.put("title", "Schema versions");
    m.put("own", schemaRows(own()));
    FleetReport plan = plan();
    m.put("noControl", control == null);
    List<Map<String, Object>> tenants = new ArrayList<>();
    if (plan != null) {
      for (TenantReport t : plan.tenants()) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("tenant", t.tenant());
        r.put("status", t.status().stored());
        r.put("note", tenantNote(t));
        r.put("pending", t.pending());
        r.put("schemas", t.report() == null ? List.of() : schemaRows(t.report()));
        tenants.add(r);
      }
      m.put("controlError", plan.controlError());
    }
    m.put("tenants", tenants);
    m.put("hasTenants", !tenants.isEmpty());
    m.put("lockWait", TENANT_LOCK_WAIT.toSeconds());
    return "schemas";
  }

  private static String tenantNote(TenantReport t) {
    if (t.locked()) {
      return "busy: a fleet run holds its lock";
    }
    if (t.skipped()) {
      return "not planned" + (t.error() == null ? "" : ": " + t.error());
    }
    return t.error() == null ? "" : t.error();
  }

  private static List<Map<String, Object>> schemaRows(MigrationReport report) {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (SchemaReport s : report.schemas()) {
      Map<String, Object> r = new LinkedHashMap<>();
      r.put("schema", s.schema());
      r.put("domain", s.domain() == null ? "(directory)" : s.domain());
      r.put("kind", lower(s.kind()));
      r.put("state", lower(s.state()));
      r.put("version", nz(s.versionBefore()));
      r.put("target", nz(s.versionAfter()));
      r.put("pending", String.join(", ", s.pending()));
      r.put("hasPending", !s.pending().isEmpty());
      r.put("error", nz(s.error()));
      rows.add(r);
    }
    return rows;
  }

  // ---------------------------------------------------------------------------------------------
  // JSON

  String tenantsJson() {
    Tenants t = tenants();
    ObjectNode o = Pages.JSON.createObjectNode();
    o.put("control", t.control());
    o.put("registry", t.registry());
    ArrayNode out = o.putArray("tenants");
    for (TenantInfo i : t.tenants()) {
      ObjectNode r = out.addObject();
      r.put("tenant", i.tenant());
      r.put("status", i.status().stored());
      r.put("reason", i.reason());
      r.put("updated", i.updated());
    }
    return o.toString();
  }

  String schemasJson() {
    ObjectNode o = Pages.JSON.createObjectNode();
    o.set("schemas", schemasJson(own()));
    FleetReport plan = plan();
    o.put("control", control != null);
    ArrayNode tenants = o.putArray("tenants");
    if (plan != null) {
      o.put("controlError", plan.controlError());
      for (TenantReport t : plan.tenants()) {
        ObjectNode r = tenants.addObject();
        r.put("tenant", t.tenant());
        r.put("status", t.status().stored());
        r.put("locked", t.locked());
        r.put("skipped", t.skipped());
        r.put("pending", t.pending());
        r.put("error", t.error());
        if (t.report() == null) {
          r.putNull("schemas");
        } else {
          r.set("schemas", schemasJson(t.report()));
        }
      }
    }
    return o.toString();
  }

  private static ArrayNode schemasJson(MigrationReport report) {
    ArrayNode out = Pages.JSON.createArrayNode();
    for (SchemaReport s : report.schemas()) {
      ObjectNode r = out.addObject();
      r.put("schema", s.schema());
      r.put("domain", s.domain());
      r.put("kind", lower(s.kind()));
      r.put("state", lower(s.state()));
      r.put("version", s.versionBefore());
      r.put("target", s.versionAfter());
      ArrayNode p = r.putArray("pending");
      s.pending().forEach(p::add);
      r.put("error", s.error());
    }
    return out;
  }

  private static String lower(Enum<?> e) {
    return e == null ? "" : e.name().toLowerCase(Locale.ROOT);
  }

  private static String nz(String s) {
    return s == null ? "" : s;
  }
}
