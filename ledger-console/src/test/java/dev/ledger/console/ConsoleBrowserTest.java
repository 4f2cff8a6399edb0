package dev.ledger.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import dev.ledger.Ledger;
import dev.ledger.Status;
import dev.ledger.TaskSpec;
import dev.ledger.migrate.Fleet;
import dev.ledger.schedule.ScheduleSpec;
import dev.ledger.schedule.Timing;
import dev.ledger.testing.PostgresExtension;
import dev.ledger.testing.TestServer;
import dev.ledger.testing.Tools;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * The console in a real browser: Selenium WebDriver over Debian's headless Chromium and
 * chromedriver, on real PostgreSQL. Skipped with one line where Chromium or chromedriver is not
 * installed; failed instead when {@code -Dledger.test.require} names them (as {@code .ci/run}
 * does). Never lets Selenium download a driver or a browser: both paths are given explicitly.
 *
 * <p>Takes screenshots of the main pages into {@code target/console-screenshots}, and into the
 * directory {@code -Dledger.console.screenshots=DIR} names (the docs' {@code docs/console}).
 */
class ConsoleBrowserTest {

  @RegisterExtension static final PostgresExtension PG = new PostgresExtension();

  static final String PASSWORD = "correct horse battery";

  static Ledger ledger;
  static ConsoleFixture fx;
  static ConsoleServer server;
  static ConsoleServer readOnlyServer;
  static WebDriver browser;

  @BeforeAll
  static void start() {
    Path chromium = Tools.require(Tools.CHROMIUM);
    Path driver = Tools.require(Tools.CHROMEDRIVER);
    ledger = Ledger.open(PG.dataSource());
    fx = new ConsoleFixture(ledger);
    server =
        ConsoleServer.start(
            Console.builder(ledger, PG.dataSource()).password(PASSWORD.toCharArray()).build(),
            new InetSocketAddress("127.0.0.1", 0));
    readOnlyServer =
        ConsoleServer.start(
            Console.builder(ledger, PG.dataSource())
                .password(PASSWORD.toCharArray())
                .readOnly(true)
                .build(),
            new InetSocketAddress("127.0.0.1", 0));
    System.setProperty("webdriver.chrome.driver", driver.toString());
    ChromeOptions options = new ChromeOptions();
    options.setBinary(chromium.toFile());
    options.addArguments(
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1280,1100",
        "--lang=en-US");
    ChromeDriverService service =
        new ChromeDriverService.Builder().usingDriverExecutable(driver.toFile()).build();
    browser = new ChromeDriver(service, options);
    browser.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
    browser.manage().timeouts().scriptTimeout(Duration.ofSeconds(10));
  }

  @AfterAll
  static void stop() {
    if (browser != null) {
      browser.quit();
    }
    if (server != null) {
      server.close();
      readOnlyServer.close();
    }
  }

  static String base(ConsoleServer s) {
    return "http://127.0.0.1:" + s.address().getPort();
  }

  static void login(ConsoleServer s) {
    browser.get(base(s) + "/login");
    browser.manage().deleteAllCookies(); // cookies ignore the port: both consoles share them
    browser.get(base(s) + "/");
    assertThat(browser.getCurrentUrl()).endsWith("/login");
    browser.findElement(By.id("password")).sendKeys(PASSWORD);
    browser.findElement(By.id("login")).click();
    assertThat(awaitH1("Overview")).isEqualTo("Overview");
  }

  /**
   * The page's heading once it reads {@code expected}, or what it read when 10 s ran out: a click
   * that submits a form or follows a link returns before the next page has replaced this one, so
   * the old heading may still be found, or go stale under the test's hands.
   */
  static String awaitH1(String expected) {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    String seen = null;
    while (System.nanoTime() < deadline) {
      try {
        seen = browser.findElement(By.tagName("h1")).getText();
        if (expected.equals(seen)) {
          return seen;
        }
      } catch (org.openqa.selenium.NoSuchElementException
          | org.openqa.selenium.StaleElementReferenceException e) {
        // the page is being replaced
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return seen;
      }
    }
    return seen;
  }

  static void screenshot(String name) throws IOException {
    Path shot = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE).toPath();
    Path local = Path.of("target", "console-screenshots", name + ".png");
    Files.createDirectories(local.getParent());
    Files.copy(shot, local, StandardCopyOption.REPLACE_EXISTING);
    String docs = System.getProperty("ledger.console.screenshots");
    if (docs != null && !docs.isBlank()) {
      Path dir = Path.of(docs);
      Files.createDirectories(dir);
      Files.copy(shot, dir.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
    }
  }

  /** A form POST from the page's own origin, with the session cookie; returns the status. */
  static long postFromPage(String path, Map<String, String> form) {
    Object status =
        ((JavascriptExecutor) browser)
            .executeAsyncScript(
                "var done = arguments[arguments.length - 1];"
                    + "fetch(arguments[0], {method: 'POST', credentials: 'same-origin',"
                    + " redirect: 'manual', body: new URLSearchParams(arguments[1])})"
                    + ".then(function (r) { done(r.status); }, function (e) { done(-1); });",
                path,
                form);
    return ((Number) status).longValue();
  }

  @Test
  void the_header_leads_to_the_schema_versions_and_the_tenants() throws IOException {
    login(server);
    browser.findElement(By.id("nav-schemas")).click();
    assertThat(awaitH1("Schema versions")).isEqualTo("Schema versions");
    assertThat(browser.findElement(By.id("own-schemas")).getText())
        .contains("payments")
        .contains("cards")
        .contains("(directory)");
    browser.findElement(By.id("nav-tenants")).click();
    assertThat(awaitH1("Tenants")).isEqualTo("Tenants");
    assertThat(browser.findElement(By.id("no-control")).getText()).contains("--control");
  }

  @Test
  void a_fleet_console_shows_its_tenants_their_schema_versions_and_the_schedules()
      throws Exception {
    String controlDb = PostgresExtension.newDatabase();
    String acmeDb = PostgresExtension.newDatabase();
    String freshDb = PostgresExtension.newDatabase();
    try (HikariDataSource control = PostgresExtension.pool(TestServer.get().urlFor(controlDb), 3)) {
      Fleet fleet = Fleet.builder().control(control).build();
      fleet.register("acme", TestServer.get().urlFor(acmeDb));
      fleet.register("gone", "jdbc:postgresql://127.0.0.1:1/nowhere?user=ghost&password=s3cr3t");
      fleet.migrate();
      fleet.register("fresh", TestServer.get().urlFor(freshDb));
      if (ledger.schedules().get("nightly-close").isEmpty()) {
        ledger
            .schedules()
            .add(
                ScheduleSpec.builder(
                        "nightly-close",
                        "payments",
                        Timing.cron("30 2 * * *", "Europe/Berlin"),
                        "Close the day")
                    .build());
        ledger
            .schedules()
            .add(
                ScheduleSpec.builder(
                        "card-sweep", "cards", Timing.every(Duration.ofHours(1)), "Sweep cards")
                    .build());
        ledger.schedules().pause("card-sweep");
      }
      try (ConsoleServer fleetServer =
          ConsoleServer.start(
              Console.builder(ledger, PG.dataSource())
                  .password(PASSWORD.toCharArray())
                  .control(control, "public")
                  .build(),
              new InetSocketAddress("127.0.0.1", 0))) {
        login(fleetServer);
        browser.findElement(By.id("nav-tenants")).click();
        assertThat(awaitH1("Tenants")).isEqualTo("Tenants");
        String tenants = browser.findElement(By.id("tenants")).getText();
        assertThat(tenants)
            .contains("acme")
            .contains("active")
            .contains("fresh")
            .contains("provisioning")
            .contains("gone")
            .contains("degraded");
        assertThat(browser.getPageSource()).doesNotContain("s3cr3t").doesNotContain("jdbc:");
        screenshot("tenants");

        browser.findElement(By.id("nav-schemas")).click();
        assertThat(awaitH1("Schema versions")).isEqualTo("Schema versions");
        assertThat(browser.findElement(By.id("own-schemas")).getText())
            .contains("payments")
            .contains("(directory)");
        assertThat(browser.getPageSource()).contains("acme").contains("fresh");
        screenshot("schemas");

        browser.findElement(By.id("nav-schedules")).click();
        assertThat(awaitH1("Schedules")).isEqualTo("Schedules");
        assertThat(browser.findElement(By.id("schedules")).getText())
            .contains("nightly-close")
            .contains("cron 30 2 * * * (Europe/Berlin)")
            .contains("card-sweep")
            .contains("every 1h")
            .contains("paused");
        screenshot("schedules");
      }
    } finally {
      for (String db : List.of(controlDb, acmeDb, freshDb)) {
        PostgresExtension.dropDatabase(db);
      }
    }
  }

  @Test
  void an_operator_walks_from_the_overview_to_a_task_timeline_and_refiles_a_dead_letter()
      throws IOException {
    login(server);
    assertThat(browser.findElement(By.id("domains")).getText())
        .contains("payments")
        .contains("cards");
    screenshot("overview");

    browser.findElement(By.linkText("payments")).click();
    assertThat(awaitH1("payments: queue")).isEqualTo("payments: queue");
    List<String> order =
        browser.findElements(By.cssSelector("#queue a.task")).stream()
            .map(e -> e.getText())
            .toList();
    assertThat(order).startsWith(fx.first, fx.second, fx.claimed);
    screenshot("queue");

    browser.findElement(By.linkText(fx.first)).click();
    assertThat(awaitH1("Task " + fx.first)).isEqualTo("Task " + fx.first);
    assertThat(
            browser.findElements(By.cssSelector("#timeline .kind")).stream().map(e -> e.getText()))
        .containsExactly("created", "admitted");
    screenshot("task");

    browser.get(base(server) + "/tasks/" + fx.claimed);
    assertThat(browser.findElement(By.id("lease")).getText()).contains("worker-7");
    assertThat(browser.findElement(By.id("why")).getText()).contains("it is leased by worker-7");

    browser.get(base(server) + "/domains/cards/dead");
    assertThat(browser.getPageSource()).contains("gateway timeout").contains("card refused");
    screenshot("dead-letters");

    browser.findElement(By.linkText(fx.deadRefused)).click();
    assertThat(awaitH1("Task " + fx.deadRefused)).isEqualTo("Task " + fx.deadRefused);
    browser.findElement(By.id("action-refile")).click();
    String confirm = "Confirm: refile " + fx.deadRefused + "?";
    assertThat(awaitH1(confirm)).isEqualTo(confirm);
    browser.findElement(By.id("confirm")).click();
    String done = "Done: refile " + fx.deadRefused;
    assertThat(awaitH1(done)).isEqualTo(done);
    String successor =
        ledger
            .findOrigin("cards", "retries:" + fx.deadRefused, "refiled:" + fx.deadRefused)
            .orElseThrow();
    assertThat(
            browser.findElements(By.cssSelector(".written .kind")).stream().map(e -> e.getText()))
        .containsExactly("created", "admitted");
    screenshot("refiled");
    browser.findElement(By.linkText(successor)).click();
    assertThat(awaitH1("Task " + successor)).isEqualTo("Task " + successor);
    assertThat(browser.findElement(By.id("status")).getText()).isEqualTo("admitted");
    assertThat(
            browser.findElements(By.cssSelector("#timeline .kind")).stream().map(e -> e.getText()))
        .containsExactly("created", "admitted");
  }

  @Test
  void a_post_without_a_csrf_token_is_refused() {
    login(server);
    String id = ledger.file(TaskSpec.builder("payments", "Admit only with a token").build());
    browser.get(base(server) + "/tasks/" + id);
    assertThat(postFromPage("/tasks/" + id + "/admit", Map.of())).isEqualTo(403);
    assertThat(ledger.get(id).status()).isEqualTo(Status.PROPOSED);
  }

  @Test
  void a_read_only_console_refuses_an_action() throws IOException {
    login(readOnlyServer);
    String id = ledger.file(TaskSpec.builder("payments", "Read-only cannot admit").build());
    browser.get(base(readOnlyServer) + "/tasks/" + id);
    assertThat(browser.findElements(By.cssSelector("a.action"))).isEmpty();
    assertThat(browser.findElement(By.cssSelector("header .ro")).getText()).isEqualTo("read-only");
    String csrf =
        browser.findElement(By.cssSelector("form.inline input[name=csrf]")).getAttribute("value");
    assertThat(postFromPage("/tasks/" + id + "/admit", Map.of("csrf", csrf))).isEqualTo(403);
    browser.get(base(readOnlyServer) + "/tasks/" + id + "/confirm?action=admit");
    assertThat(browser.findElement(By.id("error")).getText()).contains("read-only");
    screenshot("read-only-refusal");
    assertThat(ledger.get(id).status()).isEqualTo(Status.PROPOSED);
  }

  @Test
  void a_task_above_the_handling_label_shows_no_body() throws IOException {
    login(server);
    browser.get(base(server) + "/tasks/" + fx.confidential);
    assertThat(browser.findElement(By.id("task-title")).getText())
        .isEqualTo("(hidden: labelled confidential, above handling internal)");
    assertThat(browser.findElements(By.id("body"))).isEmpty();
    assertThat(browser.getPageSource())
        .doesNotContain(ConsoleFixture.SECRET_BODY)
        .doesNotContain("Payroll for the board");
    screenshot("hidden-task");
  }

  @Test
  void the_json_api_answers_with_basic_auth() {
    browser.get(base(server) + "/login");
    Object answer =
        ((JavascriptExecutor) browser)
            .executeAsyncScript(
                "var done = arguments[arguments.length - 1];"
                    + "fetch('/api/domains', {credentials: 'omit', headers: {Authorization:"
                    + " 'Basic ' + btoa('admin:' + arguments[0])}})"
                    + ".then(function (r) { return r.json().then(function (j) {"
                    + " done([r.status, j.map(function (d) { return d.domain; }).join(',')]); }); })"
                    + ".catch(function (e) { done([-1, String(e)]); });",
                PASSWORD);
    List<?> pair = (List<?>) answer;
    assertThat(((Number) pair.get(0)).longValue()).isEqualTo(200);
    assertThat((String) pair.get(1)).contains("cards").contains("payments");
  }
}
