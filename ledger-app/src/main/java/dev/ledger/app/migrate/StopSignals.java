package dev.ledger.app.migrate;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Which signal stopped the JVM, for the report a shutdown hook prints: a hook alone cannot tell
 * SIGTERM (exit 143) from SIGINT (130) or SIGHUP (129). Installed once per JVM, each handler notes
 * its signal and hands it on to the JVM's own handler, which starts the shutdown as before (the
 * exit status stays the JVM's). Where the JVM handles no signals ({@code -Xrs}) nothing is noted
 * and {@link #received()} is null.
 */
final class StopSignals {

  private static final AtomicBoolean INSTALLED = new AtomicBoolean();
  private static volatile String received;

  private StopSignals() {}

  /** Installs the handlers, once per JVM; later calls do nothing. */
  static void install() {
    if (!INSTALLED.compareAndSet(false, true)) {
      return;
    }
    for (String name : List.of("TERM", "INT", "HUP")) {
      try {
        sun.misc.Signal signal = new sun.misc.Signal(name);
        sun.misc.SignalHandler[] previous = new sun.misc.SignalHandler[1];
        previous[0] =
            sun.misc.Signal.handle(
                signal,
                s -> {
                  received = "SIG" + s.getName();
                  if (previous[0] != null) {
                    previous[0].handle(s);
                  } else {
                    // arrived while installing: end as the JVM's own handler would
                    System.exit(exitCode(received));
                  }
                });
      } catch (IllegalArgumentException notHandledHere) {
        // -Xrs, or a signal this platform does not have: the report names no signal
      }
    }
  }

  /**
   * The signal that arrived, e.g. {@code SIGTERM}.
   *
   * @return its name, or null when none was noted
   */
  static String received() {
    return received;
  }

  /**
   * The exit status the JVM ends with after a signal: 128 plus its number.
   *
   * @param signal e.g. {@code SIGTERM}, or null
   * @return 143 for SIGTERM, 130 for SIGINT, 129 for SIGHUP; 143 when unknown (what a container
   *     runtime or systemd sends)
   */
  static int exitCode(String signal) {
    if ("SIGINT".equals(signal)) {
      return 130;
    }
    if ("SIGHUP".equals(signal)) {
      return 129;
    }
    return 143;
  }
}
