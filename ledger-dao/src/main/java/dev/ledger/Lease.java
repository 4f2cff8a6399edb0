package dev.ledger;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;

/**
 * Proof of a claim: the task, the holder and the attempt number the claim made. Heartbeat, release,
 * handoff and complete are accepted only while this is the task's current lease (fencing): once the
 * task is released, finished, or re-claimed after expiry, they throw {@link LeaseLostException}.
 *
 * @param taskId the task claimed
 * @param holder who claimed it
 * @param attempt the task's {@code attempts} after this claim (1 for the first claim)
 * @param until when the lease expires unless extended by a heartbeat
 */
public record Lease(String taskId, String holder, long attempt, Instant until) {

  private static final String VERSION = "l1";

  /**
   * A URL-safe text form of the lease, for a worker to keep between processes (the CLI prints it).
   * {@link #parse(String)} reads it back; {@code until} is not part of it. Opaque to callers, but
   * not a secret: it encodes the task id, the attempt and the holder, which is all a fenced write
   * checks, as in the reference stack (fencing orders writers; it does not authenticate them: a
   * role that may write to the ledger's tables may change any task).
   *
   * @return the token
   */
  public String token() {
    String plain = VERSION + "\n" + taskId + "\n" + attempt + "\n" + holder;
    return Base64.getUrlEncoder()
        .withoutPadding()
        .encodeToString(plain.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Reads a token made by {@link #token()}.
   *
   * @param token the token, not null
   * @return the lease, with {@code until} null
   * @throws InvalidInputException naming the field {@code lease} when the token is malformed
   */
  public static Lease parse(String token) {
    try {
      String plain =
          new String(Base64.getUrlDecoder().decode(token.trim()), StandardCharsets.UTF_8);
      String[] parts = plain.split("\n", 4);
      if (parts.length != 4 || !VERSION.equals(parts[0])) {
        throw new IllegalArgumentException("wrong shape");
      }
      return new Lease(parts[1], parts[3], Long.parseLong(parts[2]), null);
    } catch (IllegalArgumentException e) {
      throw new InvalidInputException(
          "lease", "not a lease token (use the token a claim printed or returned)");
    }
  }
}
