package dev.ledger.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;

/**
 * The jars a user's build depends on (migrations, codegen, ledger-dao and its test-jar,
 * ledger-schema-diff, ledger-console, as this build packaged them) carry no logging configuration,
 * which would configure the logging of every build and application that has them on its class path;
 * ledger-app's own sources and javadoc jars are there. Runs after {@code package} (failsafe), on
 * the jars themselves.
 */
class PublishedJarsIT {

  private static final Pattern LOGGING_CONFIG =
      Pattern.compile(
          "(^|/)(logback(-test)?\\.(xml|groovy)|log4j2?(-test)?\\.(xml|properties|json|yaml)"
              + "|simplelogger\\.properties|logging\\.properties)$");

  private static final Path MODULE = Path.of("").toAbsolutePath();

  @Test
  void the_library_jars_and_the_dao_test_jar_carry_no_logging_configuration() throws Exception {
    List<Path> jars = new ArrayList<>();
    for (String module :
        List.of("migrations", "codegen", "ledger-dao", "ledger-schema-diff", "ledger-console")) {
      try (Stream<Path> files = Files.list(MODULE.resolveSibling(module).resolve("target"))) {
        files.filter(p -> p.toString().endsWith(".jar")).forEach(jars::add);
      }
    }
    // the jars this test's class path was resolved to are among them
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (entry.matches(
          ".*/(migrations|codegen|ledger-dao|ledger-schema-diff|ledger-console)/target/[^/]+\\.jar")) {
        assertThat(jars).contains(Path.of(entry).toAbsolutePath());
      }
    }
    assertThat(jars.stream().map(p -> p.getFileName().toString()))
        .contains(
            "ledger-dao-" + version() + ".jar",
            "ledger-dao-" + version() + "-tests.jar",
            "ledger-migrations-" + version() + ".jar",
            "ledger-codegen-" + version() + ".jar",
            "ledger-schema-diff-" + version() + ".jar",
            "ledger-console-" + version() + ".jar");
    for (Path jar : jars) {
      try (ZipFile zip = new ZipFile(jar.toFile())) {
        List<String> configs =
            zip.stream()
                .map(ZipEntry::getName)
                .filter(n -> LOGGING_CONFIG.matcher(n).find())
                .toList();
        assertThat(configs).as("logging configuration in %s", jar.getFileName()).isEmpty();
      }
    }
  }

  @Test
  void ledger_app_has_its_sources_and_javadoc_jars() throws Exception {
    for (String kind : List.of("sources", "javadoc")) {
      Path jar = MODULE.resolve("target/ledger-app-" + version() + "-" + kind + ".jar");
      assertThat(jar).exists();
      try (ZipFile zip = new ZipFile(jar.toFile())) {
        String entry =
            kind.equals("sources") ? "dev/ledger/app/Main.java" : "dev/ledger/app/Main.html";
        assertThat(zip.getEntry(entry)).as("%s in %s", entry, jar.getFileName()).isNotNull();
      }
    }
  }

  private static String version() {
    return System.getProperty("project.version");
  }
}
