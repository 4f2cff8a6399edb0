package dev.ledger.diff;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipException;
import java.util.zip.ZipFile;

/**
 * A set of Flyway SQL migrations on disk: a directory, or a directory inside a jar, extracted to a
 * temporary directory that {@link #close()} removes.
 *
 * <pre>{@code
 * try (MigrationSource domain = MigrationSource.open("migrations/src/main/resources/db/ledger/domain");
 *     MigrationSource released = MigrationSource.open("ledger-migrations-0.1.0.jar!/db/ledger/domain")) {
 *   ... domain.flywayLocation() ...
 * }
 * }</pre>
 *
 * <p>A path names one of:
 *
 * <ul>
 *   <li>a directory: Flyway reads it and its subdirectories ({@code filesystem:} location);
 *   <li>{@code JAR!/DIR}: the directory {@code DIR} inside the jar {@code JAR};
 *   <li>{@code JAR}: the one directory of the jar that holds {@code .sql} files; when several do,
 *       the path must name one with {@code !/}.
 * </ul>
 *
 * <p>A jar is extracted rather than put on a class loader so that its scripts never mix with
 * same-named resources of this application's own class path (the ledger's migrations are there).
 */
public final class MigrationSource implements AutoCloseable {

  private final String displayRoot;
  private final Path directory;
  private final Path extracted;

  private MigrationSource(String displayRoot, Path directory, Path extracted) {
    this.displayRoot = displayRoot;
    this.directory = directory;
    this.extracted = extracted;
  }

  /**
   * Opens a migrations directory or jar.
   *
   * @param option the option the path was given with, for messages, e.g. {@code --base}
   * @param path the path as the user wrote it, not null
   * @return the source; the caller closes it
   * @throws SchemaDiffException when the path is neither a directory nor a readable jar, or names a
   *     directory the jar lacks, or the jar holds SQL files in no directory or in several
   */
  public static MigrationSource open(String option, String path) {
    int bang = path.indexOf("!/");
    Path file = Path.of(bang < 0 ? path : path.substring(0, bang));
    if (bang < 0 && Files.isDirectory(file)) {
      return new MigrationSource(trimSlashes(path), file.toAbsolutePath().normalize(), null);
    }
    if (!Files.isRegularFile(file)) {
      throw new SchemaDiffException(
          option + ": " + path + " is neither a migrations directory nor a jar");
    }
    String inner = bang < 0 ? null : trimSlashes(path.substring(bang + 2));
    try (ZipFile jar = new ZipFile(file.toFile())) {
      if (inner == null) {
        inner = onlySqlDirectory(option, path, jar);
      }
      Path temp = Files.createTempDirectory("ledger-schema-diff-");
      try {
        int copied = extract(jar, inner, temp);
        if (copied == 0) {
          throw new SchemaDiffException(
              option + ": " + file + " has no directory " + inner + " with files in it");
        }
      } catch (RuntimeException | IOException e) {
        deleteRecursively(temp);
        throw e;
      }
      String root = bang < 0 ? path + "!/" + inner : trimSlashes(path);
      return new MigrationSource(root, temp, temp);
    } catch (ZipException e) {
      throw new SchemaDiffException(
          option + ": " + file + " is neither a migrations directory nor a jar", e);
    } catch (IOException e) {
      throw new SchemaDiffException(option + ": cannot read " + file + ": " + e.getMessage(), e);
    }
  }

  /**
   * The Flyway location of the scripts.
   *
   * @return e.g. {@code filesystem:/abs/path/db/migration}
   */
  public String flywayLocation() {
    return "filesystem:" + directory;
  }

  /**
   * The directory the scripts are read from.
   *
   * @return an absolute path; a temporary directory for a jar
   */
  public Path directory() {
    return directory;
  }

  /**
   * The path as the user wrote it, for reports; for a jar with its directory, {@code JAR!/DIR}.
   *
   * @return e.g. {@code migrations/src/main/resources/db/ledger/domain}
   */
  public String displayName() {
    return displayRoot;
  }

  /**
   * How a script file is named in messages: under the path the user wrote, not the temporary
   * directory a jar was extracted to.
   *
   * @param fileOnDisk the script's path on disk, as Flyway reports it; may be null
   * @param fileName the script's file name, used when {@code fileOnDisk} is null or outside the
   *     source
   * @return e.g. {@code migrations/V2__add_column.sql} or {@code app.jar!/db/migration/V2__x.sql}
   */
  public String describeScript(String fileOnDisk, String fileName) {
    if (fileOnDisk != null) {
      Path script = Path.of(fileOnDisk).toAbsolutePath().normalize();
      if (script.startsWith(directory)) {
        return displayRoot + "/" + directory.relativize(script).toString().replace('\\', '/');
      }
    }
    return displayRoot + "/" + fileName;
  }

  /** Removes the directory a jar was extracted to; nothing for a directory source. */
  @Override
  public void close() {
    if (extracted != null) {
      deleteRecursively(extracted);
    }
  }

  private static String onlySqlDirectory(String option, String path, ZipFile jar) {
    Set<String> directories = new TreeSet<>();
    for (Enumeration<? extends ZipEntry> e = jar.entries(); e.hasMoreElements(); ) {
      ZipEntry entry = e.nextElement();
      String name = entry.getName();
      if (!entry.isDirectory() && name.toLowerCase(Locale.ROOT).endsWith(".sql")) {
        int slash = name.lastIndexOf('/');
        directories.add(slash < 0 ? "" : name.substring(0, slash));
      }
    }
    if (directories.isEmpty()) {
      throw new SchemaDiffException(option + ": " + path + " holds no .sql migrations");
    }
    if (directories.size() > 1) {
      throw new SchemaDiffException(
          option
              + ": "
              + path
              + " holds .sql files in "
              + String.join(", ", directories)
              + ": name one, e.g. "
              + path
              + "!/"
              + directories.iterator().next());
    }
    return directories.iterator().next();
  }

  private static int extract(ZipFile jar, String inner, Path target) throws IOException {
    String prefix = inner.isEmpty() ? "" : inner + "/";
    int copied = 0;
    for (Enumeration<? extends ZipEntry> e = jar.entries(); e.hasMoreElements(); ) {
      ZipEntry entry = e.nextElement();
      if (entry.isDirectory() || !entry.getName().startsWith(prefix)) {
        continue;
      }
      Path out = target.resolve(entry.getName().substring(prefix.length())).normalize();
      if (!out.startsWith(target)) {
        throw new SchemaDiffException(
            "jar entry " + entry.getName() + " points outside the directory it is extracted to");
      }
      Files.createDirectories(out.getParent());
      try (InputStream in = jar.getInputStream(entry)) {
        Files.copy(in, out, StandardCopyOption.REPLACE_EXISTING);
      }
      copied++;
    }
    return copied;
  }

  private static String trimSlashes(String path) {
    String trimmed = path;
    while (trimmed.length() > 1 && trimmed.endsWith("/")) {
      trimmed = trimmed.substring(0, trimmed.length() - 1);
    }
    return trimmed;
  }

  static void deleteRecursively(Path root) {
    if (!Files.exists(root)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(root)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot remove temporary directory " + root, e);
    }
  }
}
