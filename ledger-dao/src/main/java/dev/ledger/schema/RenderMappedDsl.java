package dev.ledger.schema;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.ExecuteListener;
import org.jooq.SQLDialect;
import org.jooq.conf.MappedSchema;
import org.jooq.conf.RenderMapping;
import org.jooq.conf.RenderQuotedNames;
import org.jooq.conf.Settings;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultConfiguration;
import org.jooq.impl.DefaultExecuteListenerProvider;

/**
 * Hands out jOOQ {@link DSLContext}s whose render mapping retargets the generated template schemas
 * to real ones (jOOQ's {@code Settings.withRenderMapping}, {@code MappedSchema}): {@value
 * #DOMAIN_TEMPLATE} to a domain's schema, {@value #DIRECTORY_TEMPLATE} to the directory schema
 * ({@code public} by default). The generated classes name only the template schemas; no statement
 * rendered through this class does.
 *
 * <p>Contexts are cached per schema (one {@link Settings} object each) and are thread-safe, as jOOQ
 * contexts over a {@link DataSource} are.
 *
 * <pre>{@code
 * RenderMappedDsl dsl = new RenderMappedDsl(dataSource, "public", List.of());
 * dsl.forDomain("acme").selectFrom(Tables.TASKS).fetch();   // FROM "ledger_acme_822b33ad"."tasks"
 * }</pre>
 */
public final class RenderMappedDsl {

  static {
    quietJooq();
  }

  /** The schema the domain tables are generated from. */
  public static final String DOMAIN_TEMPLATE = "ledger_template";

  /** The schema the routing tables are generated from. */
  public static final String DIRECTORY_TEMPLATE = "ledger_directory";

  /**
   * Turns off jOOQ's banner and "tip of the day", which it logs at INFO on its first statement, in
   * every service the ledger runs in (a 20-line logo reads like an error in a service's log),
   * unless the user chose otherwise: a system property already set ({@code
   * -Dorg.jooq.no-logo=false}) is kept. Runs once, before this class makes any jOOQ context.
   */
  public static void quietJooq() {
    for (String property : new String[] {"org.jooq.no-logo", "org.jooq.no-tips"}) {
      if (System.getProperty(property) == null) {
        System.setProperty(property, "true");
      }
    }
  }

  private final DataSource dataSource;
  private final String directorySchema;
  private final List<ExecuteListener> listeners;
  private final Map<String, DSLContext> bySchema = new ConcurrentHashMap<>();

  /**
   * Creates the factory.
   *
   * @param dataSource where connections come from, not null
   * @param directorySchema the schema of the routing tables, unquoted, e.g. {@code public}
   * @param listeners jOOQ execute listeners added to every context (e.g. a test's SQL guard); may
   *     be empty, not null
   */
  public RenderMappedDsl(
      DataSource dataSource, String directorySchema, List<ExecuteListener> listeners) {
    this.dataSource = dataSource;
    this.directorySchema = directorySchema;
    this.listeners = List.copyOf(listeners);
  }

  /**
   * A context for one domain's tables (and the directory's).
   *
   * @param domain the domain, not null
   * @return a context rendering the domain template as the domain's schema
   * @throws IllegalArgumentException when the domain name is not valid ({@link
   *     DomainSchemas#checkDomain(String)})
   */
  public DSLContext forDomain(String domain) {
    return forSchema(DomainSchemas.schemaName(domain));
  }

  /**
   * A context for the tables of a given domain schema (and the directory's).
   *
   * @param schema a domain schema name, unquoted, e.g. {@code ledger_acme_822b33ad}
   * @return the context
   * @throws IllegalArgumentException when {@code schema} is not a domain schema name
   */
  public DSLContext forSchema(String schema) {
    if (!DomainSchemas.isDomainSchemaName(schema)) {
      throw new IllegalArgumentException("schema: not a domain schema name: " + schema);
    }
    return bySchema.computeIfAbsent(schema, this::create);
  }

  /**
   * A context for the directory's routing tables only.
   *
   * @return the context; domain tables rendered through it keep the template name, so use {@link
   *     #forSchema(String)} for them
   */
  public DSLContext directory() {
    return bySchema.computeIfAbsent("", this::create);
  }

  /**
   * The directory schema, unquoted.
   *
   * @return e.g. {@code public}
   */
  public String directorySchema() {
    return directorySchema;
  }

  private DSLContext create(String domainSchema) {
    RenderMapping mapping =
        new RenderMapping()
            .withSchemata(
                new MappedSchema().withInput(DIRECTORY_TEMPLATE).withOutput(directorySchema));
    if (!domainSchema.isEmpty()) {
      mapping =
          mapping.withSchemata(
              new MappedSchema().withInput(DOMAIN_TEMPLATE).withOutput(domainSchema));
    }
    Settings settings =
        new Settings()
            .withRenderMapping(mapping)
            .withRenderQuotedNames(RenderQuotedNames.ALWAYS)
            .withExecuteLogging(false);
    DefaultConfiguration configuration = new DefaultConfiguration();
    configuration.set(dataSource);
    configuration.set(SQLDialect.POSTGRES);
    configuration.set(settings);
    if (!listeners.isEmpty()) {
      configuration.set(
          listeners.stream()
              .map(DefaultExecuteListenerProvider::new)
              .toArray(DefaultExecuteListenerProvider[]::new));
    }
    return DSL.using(configuration);
  }
}
