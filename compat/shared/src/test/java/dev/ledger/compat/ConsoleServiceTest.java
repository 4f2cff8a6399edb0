package dev.ledger.compat;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.ledger.Ledger;
import dev.ledger.TaskSpec;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * The operator console served by the running service on this Spring Boot line, under {@code
 * /ledger}, behind the service's own Spring Security ({@link ConsoleSecurity}): refused without a
 * login (Spring Security's 401, not the console's login page), served with the service's HTTP
 * Basic. Its own context with a server on a random port (the worker pool off, so the shared
 * context's {@link WorkerTest} sees every mail task), on the same database.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "ledger.worker.enabled=false",
      "compat.ops.password=" + ConsoleServiceTest.PASSWORD
    })
class ConsoleServiceTest extends CompatTestBase {

  static final String PASSWORD = "ops secret for the compat test";

  @Value("${local.server.port}")
  int port;

  @Autowired Ledger ledger;

  private final HttpClient http =
      HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();

  private HttpResponse<String> get(String path, String user, String password) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
    if (user != null) {
      b.header(
          "Authorization",
          "Basic "
              + Base64.getEncoder()
                  .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)));
    }
    return http.send(b.GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void theServicesSecurityRefusesTheConsoleWithoutALogin() throws Exception {
    HttpResponse<String> page = get("/ledger/", null, null);
    assertThat(page.statusCode()).isEqualTo(401);
    assertThat(page.headers().firstValue("WWW-Authenticate"))
        .hasValueSatisfying(v -> assertThat(v).startsWith("Basic"));
    assertThat(page.body()).doesNotContain("Ledger console");
    assertThat(get("/ledger/api/domains", null, null).statusCode()).isEqualTo(401);
    assertThat(get("/ledger/api/domains", "ops", "wrong password").statusCode()).isEqualTo(401);
    // the console's own user is no user of the service
    assertThat(get("/ledger/api/domains", "admin", PASSWORD).statusCode()).isEqualTo(401);
  }

  @Test
  void anOperatorSeesTheOverviewAndTheApiThroughTheRunningService() throws Exception {
    String id = ledger.fileAndAdmit(TaskSpec.builder("orders", "Ship order o-console-1").build());
    HttpResponse<String> overview = get("/ledger/", "ops", PASSWORD);
    assertThat(overview.statusCode()).isEqualTo(200);
    assertThat(overview.body())
        .contains("<title>Overview · Ledger console</title>")
        .contains("href=\"/ledger/domains/orders\"")
        // no login of the console's own: no logout form
        .doesNotContain("id=\"logout\"");
    HttpResponse<String> domains = get("/ledger/api/domains", "ops", PASSWORD);
    assertThat(domains.statusCode()).isEqualTo(200);
    JsonNode orders = null;
    for (JsonNode d : new ObjectMapper().readTree(domains.body())) {
      if (d.get("domain").asText().equals("orders")) {
        orders = d;
      }
    }
    assertThat(orders).isNotNull();
    assertThat(orders.get("counts").get("admitted").asLong()).isPositive();
    HttpResponse<String> task = get("/ledger/api/tasks/" + id, "ops", PASSWORD);
    assertThat(task.statusCode()).isEqualTo(200);
    assertThat(new ObjectMapper().readTree(task.body()).get("title").asText())
        .isEqualTo("Ship order o-console-1");
  }
}
