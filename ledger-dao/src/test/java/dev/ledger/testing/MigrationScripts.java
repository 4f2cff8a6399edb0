package dev.ledger.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The versions of a migration set's scripts on the class path ({@code db/ledger/<set>/V<n>__*.sql},
 * from the migrations jar or its build directory), ascending. Tests that list the versions a run
 * applies use it rather than counting from 1 to the latest: the sets may have gaps (a version taken
 * by work not merged yet).
 */
public final class MigrationScripts {

  private static final Pattern SCRIPT = Pattern.compile("V(\\d+)__[^/]*\\.sql");

  private MigrationScripts() {}

  /**
   * The directory set's versions.
   *
   * @return e.g. {@code ["1", "2", ..., "6", "9"]}
   */
  public static List<String> directoryVersions() {
    return versions("directory");
  }

  /**
   * The directory set's versions from {@code from} on.
   *
   * @param from the first version wanted
   * @return the versions at or above it, ascending
   */
  public static List<String> directoryVersionsFrom(int from) {
    return directoryVersions().stream().filter(v -> Integer.parseInt(v) >= from).toList();
  }

  /**
   * A set's versions.
   *
   * @param set {@code directory} or {@code domain}
   * @return its script versions, ascending
   */
  public static List<String> versions(String set) {
    String dir = "db/ledger/" + set;
    URL url = MigrationScripts.class.getClassLoader().getResource(dir);
    if (url == null) {
      throw new IllegalStateException(dir + " is not on the class path");
    }
    List<String> names = new ArrayList<>();
    try {
      if ("jar".equals(url.getProtocol())) {
        JarURLConnection c = (JarURLConnection) url.openConnection();
        c.setUseCaches(false);
        try (JarFile jar = c.getJarFile()) {
          jar.stream()
              .map(e -> e.getName())
              .filter(n -> n.startsWith(dir + "/"))
              .forEach(n -> names.add(n.substring(dir.length() + 1)));
        }
      } else {
        try (Stream<Path> files = Files.list(Path.of(url.toURI()))) {
          files.forEach(p -> names.add(p.getFileName().toString()));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
    List<Integer> versions = new ArrayList<>();
    for (String n : names) {
      Matcher m = SCRIPT.matcher(n);
      if (m.matches()) {
        versions.add(Integer.parseInt(m.group(1)));
      }
    }
    return versions.stream().sorted(Comparator.naturalOrder()).map(String::valueOf).toList();
  }
}
