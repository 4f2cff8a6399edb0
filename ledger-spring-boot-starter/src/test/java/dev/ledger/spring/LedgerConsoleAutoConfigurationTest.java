package dev.ledger.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ledger.Ledger;
import dev.ledger.Status;
import dev.ledger.TaskSpec;
import dev.ledger.console.Console;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import java.net.CookieManager;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The console inside a Spring Boot service: off unless {@code ledger.console.enabled=true}, a
 * password required where the service has no Spring Security, and, in a running Tomcat, the
 * console's pages, login, CSRF refusal, actions and Basic-auth API under {@code /ledger}.
 */
class LedgerConsoleAutoConfigurationTest {

  private String database;

  @AfterEach
  void dropDatabase() throws SQLException {
    if (database != null) {
      PostgresExtension.dropDatabase(database);
    }
  }

  private WebApplicationContextRunner runner() throws SQLException {
    database = PostgresExtension.newDatabase();
    return new WebApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                DataSourceAutoConfiguration.class,
                LedgerAutoConfiguration.class,
                LedgerConsoleAutoConfiguration.class))
        .withPropertyValues(
            "spring.datasource.url=" + TestServer.get().urlFor(database),
            "spring.datasource.hikari.maximum-pool-size=4");
  }

  @Test
  void the_console_is_off_unless_enabled() throws SQLException {
    runner().run(ctx -> assertThat(ctx).hasNotFailed().doesNotHaveBean(Console.class));
  }

  @Test
  void without_spring_security_the_console_needs_a_password() throws SQLException {
    runner()
        .withPropertyValues("ledger.console.enabled=true")
        .run(
            ctx ->
                assertThat(ctx)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("ledger.console.password"));
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class Service {}

  @Test
  void a_service_serves_the_console_under_its_path() throws Exception {
    database = PostgresExtension.newDatabase();
    try (ConfigurableApplicationContext ctx =
        new SpringApplicationBuilder(Service.class)
            .properties(
                "server.port=0",
                "server.address=127.0.0.1",
                "spring.datasource.url=" + TestServer.get().urlFor(database),
                "spring.datasource.hikari.maximum-pool-size=4",
                "spring.flyway.enabled=false",
                "ledger.console.enabled=true",
                "ledger.console.password=a long secret")
            .run()) {
      Ledger ledger = ctx.getBean(Ledger.class);
      String id = ledger.file(TaskSpec.builder("orders", "Ship order 7").build());
      String base =
          "http://127.0.0.1:" + ctx.getEnvironment().getProperty("local.server.port") + "/ledger";
      HttpClient http =
          HttpClient.newBuilder()
              .cookieHandler(new CookieManager())
              .followRedirects(HttpClient.Redirect.NEVER)
              .build();

      HttpResponse<String> first = get(http, base + "/");
      assertThat(first.statusCode()).isEqualTo(303);
      assertThat(first.headers().firstValue("Location")).hasValue("/ledger/login");

      String basic =
          "Basic "
              + Base64.getEncoder()
                  .encodeToString("admin:a long secret".getBytes(StandardCharsets.UTF_8));
      HttpResponse<String> api =
          http.send(
              HttpRequest.newBuilder(URI.create(base + "/api/tasks/" + id))
                  .header("Authorization", basic)
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(api.statusCode()).isEqualTo(200);
      assertThat(api.body()).contains("\"title\":\"Ship order 7\"");

      String loginCsrf = csrf(get(http, base + "/login").body());
      HttpResponse<String> login =
          post(
              http,
              base + "/login",
              "csrf=" + enc(loginCsrf) + "&user=admin&password=" + enc("a long secret"));
      assertThat(login.statusCode()).isEqualTo(303);
      assertThat(login.headers().allValues("Set-Cookie"))
          .anySatisfy(c -> assertThat(c).startsWith("ledger_console=").contains("Path=/ledger"));
      HttpResponse<String> overview = get(http, base + "/");
      assertThat(overview.statusCode()).isEqualTo(200);
      assertThat(overview.body())
          .contains(">orders</a>")
          .contains("href=\"/ledger/domains/orders\"");
      String csrf = csrf(overview.body());

      assertThat(post(http, base + "/tasks/" + id + "/admit", "").statusCode()).isEqualTo(403);
      assertThat(ledger.get(id).status()).isEqualTo(Status.PROPOSED);
      HttpResponse<String> admitted =
          post(http, base + "/tasks/" + id + "/admit", "csrf=" + enc(csrf));
      assertThat(admitted.statusCode()).isEqualTo(200);
      assertThat(admitted.body()).contains("<b class=\"kind\">admitted</b>");
      assertThat(ledger.get(id).status()).isEqualTo(Status.ADMITTED);
    }
  }

  private static HttpResponse<String> get(HttpClient http, String url) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static HttpResponse<String> post(HttpClient http, String url, String form)
      throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(url))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .POST(HttpRequest.BodyPublishers.ofString(form))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static String csrf(String html) {
    Matcher m = Pattern.compile("name=\"csrf\" value=\"([^\"]+)\"").matcher(html);
    assertThat(m.find()).as("a CSRF token in the page").isTrue();
    return m.group(1);
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
