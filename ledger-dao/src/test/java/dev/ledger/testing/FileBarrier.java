package dev.ledger.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.function.BooleanSupplier;

/**
 * A start line shared by a test and the worker processes it launched, made of files in one
 * directory: each party creates {@code <name>.ready} once it is connected and warmed up, then waits
 * for {@code go}; the test creates {@code go} once every party is ready. So the parties start their
 * race together, however long each JVM took to start.
 */
public final class FileBarrier {

  private static final String GO = "go";

  private FileBarrier() {}

  /**
   * Announces that a party is ready, then waits for the start signal.
   *
   * @param dir the barrier directory
   * @param name the party's name, a valid file name
   * @param timeout how long to wait for the signal
   * @throws IllegalStateException when the signal does not come in time
   */
  public static void arriveAndAwait(Path dir, String name, Duration timeout) {
    touch(dir.resolve(name + ".ready"));
    await(() -> Files.exists(dir.resolve(GO)), timeout, "the start signal in " + dir);
  }

  /**
   * Waits until every named party is ready, then gives the start signal.
   *
   * @param dir the barrier directory
   * @param names the parties
   * @param timeout how long to wait for them
   * @param stillRunning false once a party can no longer arrive (its process died), to fail fast
   * @throws IllegalStateException when a party does not arrive in time or cannot arrive
   */
  public static void awaitAllThenGo(
      Path dir, Collection<String> names, Duration timeout, BooleanSupplier stillRunning) {
    await(
        () -> {
          if (!stillRunning.getAsBoolean()) {
            throw new IllegalStateException("a party exited before reaching the barrier");
          }
          return names.stream().allMatch(n -> Files.exists(dir.resolve(n + ".ready")));
        },
        timeout,
        "parties " + names + " in " + dir);
    touch(dir.resolve(GO));
  }

  /**
   * Polls a condition every 10 ms.
   *
   * @param condition what to wait for
   * @param timeout how long at most
   * @param what what is awaited, for the error message
   * @throws IllegalStateException when the condition does not hold in time
   */
  public static void await(BooleanSupplier condition, Duration timeout, String what) {
    Instant deadline = Instant.now().plus(timeout);
    while (!condition.getAsBoolean()) {
      if (Instant.now().isAfter(deadline)) {
        throw new IllegalStateException("waited " + timeout + " for " + what);
      }
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for " + what, e);
      }
    }
  }

  private static void touch(Path file) {
    try {
      Files.createDirectories(file.getParent());
      Path tmp = Files.createTempFile(file.getParent(), file.getFileName().toString(), ".tmp");
      Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
