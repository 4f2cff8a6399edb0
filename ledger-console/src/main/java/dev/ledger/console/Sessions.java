package dev.ledger.console;

import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The console's logins: a random session token (the cookie) with its own CSRF token, kept in
 * memory, ending after {@link #IDLE} without a request. A restart logs everyone out. Thread-safe.
 */
final class Sessions {

  /** A session ends after this long without a request. */
  static final Duration IDLE = Duration.ofHours(8);

  /** At most this many sessions; the oldest is dropped for a new one past it. */
  static final int MAX = 1000;

  private static final SecureRandom RANDOM = new SecureRandom();

  /**
   * One login.
   *
   * @param token the cookie's value
   * @param csrf the token every state-changing request of this session carries
   * @param seen the last request's time
   */
  record Session(String token, String csrf, Instant seen) {}

  private final ConcurrentHashMap<String, Session> sessions = new ConcurrentHashMap<>();
  private final Clock clock;

  Sessions(Clock clock) {
    this.clock = clock;
  }

  static String randomToken() {
    byte[] b = new byte[32];
    RANDOM.nextBytes(b);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }

  Session open() {
    Instant now = clock.instant();
    sessions.values().removeIf(s -> s.seen().plus(IDLE).isBefore(now));
    if (sessions.size() >= MAX) {
      sessions.values().stream()
          .min(java.util.Comparator.comparing(Session::seen))
          .ifPresent(s -> sessions.remove(s.token()));
    }
    Session s = new Session(randomToken(), randomToken(), now);
    sessions.put(s.token(), s);
    return s;
  }

  /** The live session of a cookie value, its time refreshed; null when none. */
  Session find(String token) {
    if (token == null) {
      return null;
    }
    Session s = sessions.get(token);
    if (s == null) {
      return null;
    }
    Instant now = clock.instant();
    if (s.seen().plus(IDLE).isBefore(now)) {
      sessions.remove(token);
      return null;
    }
    Session fresh = new Session(s.token(), s.csrf(), now);
    sessions.put(token, fresh);
    return fresh;
  }

  void close(String token) {
    if (token != null) {
      sessions.remove(token);
    }
  }
}
