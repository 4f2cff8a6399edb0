package dev.ledger.schema;

import java.io.IOException;
import java.io.InputStream;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Enumeration;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * Every file of a Flyway location, by its path below the location (the name Flyway gives a script,
 * e.g. {@code V2__promotions.sql}): what {@link SchemaInstaller#prepare} reads to know a location
 * holds only the set's scripts, no callback ({@code afterMigrate.sql}), script configuration
 * ({@code V1__x.sql.conf}) or Java migration.
 *
 * <p>{@code classpath:} locations are read from every class-path entry that has the folder
 * (directories and jars); {@code filesystem:} locations from the folder. Source: Flyway's location
 * syntax (a location without a prefix is a class-path one).
 */
final class ScriptLocation {

  private ScriptLocation() {}

  /**
   * The files of a location.
   *
   * @param loader the class loader of {@code classpath:} locations
   * @param location e.g. {@code classpath:db/ledger/domain}, {@code filesystem:/opt/ledger/extra}
   * @return relative path (with {@code /}) to content, sorted; empty when the location has no file
   * @throws SchemaInstaller.NotInstallableException when a location cannot be listed (another URL
   *     scheme, an I/O error)
   */
  static Map<String, byte[]> files(ClassLoader loader, String location)
      throws SchemaInstaller.NotInstallableException {
    Map<String, byte[]> out = new TreeMap<>();
    try {
      if (location.startsWith("filesystem:")) {
        Path root = Path.of(location.substring("filesystem:".length()));
        if (Files.isDirectory(root)) {
          walk(root, out);
        }
        return out;
      }
      String folder =
          (location.startsWith("classpath:") ? location.substring("classpath:".length()) : location)
              .replaceAll("^/+|/+$", "");
      Enumeration<URL> roots = loader.getResources(folder);
      while (roots.hasMoreElements()) {
        URL url = roots.nextElement();
        switch (url.getProtocol()) {
          case "file" -> walk(Path.of(url.toURI()), out);
          case "jar" -> jar(url, folder, out);
          default ->
              throw new SchemaInstaller.NotInstallableException(
                  "location " + location + " is served by " + url.getProtocol() + ":, not listed");
        }
      }
      return out;
    } catch (IOException | URISyntaxException | RuntimeException e) {
      throw new SchemaInstaller.NotInstallableException(
          "location " + location + " could not be listed: " + e.getMessage());
    }
  }

  private static void walk(Path root, Map<String, byte[]> out) throws IOException {
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : (Iterable<Path>) paths.filter(Files::isRegularFile)::iterator) {
        out.putIfAbsent(root.relativize(p).toString().replace('\\', '/'), Files.readAllBytes(p));
      }
    }
  }

  private static void jar(URL url, String folder, Map<String, byte[]> out) throws IOException {
    JarURLConnection connection = (JarURLConnection) url.openConnection();
    connection.setUseCaches(false);
    try (JarFile jar = connection.getJarFile()) {
      String prefix = folder + "/";
      Enumeration<JarEntry> entries = jar.entries();
      while (entries.hasMoreElements()) {
        JarEntry e = entries.nextElement();
        if (!e.isDirectory() && e.getName().startsWith(prefix)) {
          try (InputStream in = jar.getInputStream(e)) {
            out.putIfAbsent(e.getName().substring(prefix.length()), in.readAllBytes());
          }
        }
      }
    }
  }
}
