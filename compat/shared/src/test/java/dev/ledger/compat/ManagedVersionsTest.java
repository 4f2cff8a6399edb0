package dev.ledger.compat;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The libraries the ledger shares with the service run at the versions this module's Spring Boot
 * line manages (passed in by the pom from the Boot BOM's own properties, e.g. {@code
 * ${flyway.version}}): the ledger pins none of them on the service's class path.
 */
class ManagedVersionsTest {

  @ParameterizedTest(name = "{0}:{1}")
  @CsvSource({
    "org.flywaydb, flyway-core, flyway",
    "org.flywaydb, flyway-database-postgresql, flyway",
    "org.jooq, jooq, jooq",
    "org.postgresql, postgresql, postgresql",
    "com.zaxxer, HikariCP, hikaricp",
    "com.fasterxml.jackson.core, jackson-databind, jackson2",
    "com.fasterxml.jackson.core, jackson-core, jackson2"
  })
  void onTheClassPathAtTheManagedVersion(String group, String artifact, String managed) {
    String expected = System.getProperty("boot.managed." + managed);
    assertThat(expected).as("boot.managed." + managed + " from the pom").isNotBlank();
    assertThat(versionOnClassPath(group, artifact)).isEqualTo(expected);
  }

  private static String versionOnClassPath(String group, String artifact) {
    if (artifact.equals("postgresql")) {
      // pgjdbc's jar has no pom.properties; the driver states its version itself
      try {
        return (String)
            Class.forName("org.postgresql.util.DriverInfo").getField("DRIVER_VERSION").get(null);
      } catch (ReflectiveOperationException e) {
        throw new AssertionError("pgjdbc's DriverInfo.DRIVER_VERSION", e);
      }
    }
    String path = "META-INF/maven/" + group + "/" + artifact + "/pom.properties";
    try (InputStream in = ManagedVersionsTest.class.getClassLoader().getResourceAsStream(path)) {
      assertThat(in).as(path).isNotNull();
      Properties p = new Properties();
      p.load(in);
      return p.getProperty("version");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
