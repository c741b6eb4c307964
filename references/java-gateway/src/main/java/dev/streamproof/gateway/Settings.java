package dev.streamproof.gateway;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The gateway's environment contract (docs/reference/gateway-contract.md), read and
 * checked once before anything listens. Everything wrong is an {@link IllegalArgumentException}
 * with a one-line message naming the variable.
 */
record Settings(
    int port,
    String toolUrl,
    Map<String, String> usersByToken,
    int maxLlmCalls,
    long runTimeoutMillis,
    Optional<Bug> bug) {

  static final String DEFAULT_TOKENS = "alice=alice-token,bob=bob-token";
  static final int DEFAULT_MAX_LLM_CALLS = 20; // the seed's setMaxLlmCalls(20)
  static final long DEFAULT_RUN_TIMEOUT_MS = 120_000L; // the seed's new SseEmitter(120_000L)

  static Settings fromEnv(Map<String, String> env) {
    Optional<Bug> bug = Bug.parse(env.get("STREAMPROOF_BUG"));
    StringBuilder missing = new StringBuilder();
    for (String name : new String[] {"PORT", "GOOGLE_GEMINI_BASE_URL", "STREAMPROOF_TOOL_URL"}) {
      if (blank(env.get(name))) {
        missing.append(missing.length() == 0 ? "" : ", ").append(name);
      }
    }
    if (blank(env.get("GOOGLE_API_KEY")) && blank(env.get("GEMINI_API_KEY"))) {
      missing.append(missing.length() == 0 ? "" : ", ").append("GOOGLE_API_KEY");
    }
    if (missing.length() > 0) {
      throw new IllegalArgumentException("missing required environment variable(s): " + missing);
    }
    int port = parseInt(env, "PORT", 0, 65535, 0);
    String tokens = blank(env.get("STREAMPROOF_GATEWAY_TOKENS"))
        ? DEFAULT_TOKENS : env.get("STREAMPROOF_GATEWAY_TOKENS");
    return new Settings(
        port,
        env.get("STREAMPROOF_TOOL_URL"),
        parseTokens(tokens),
        parseInt(env, "STREAMPROOF_MAX_LLM_CALLS", 1, Integer.MAX_VALUE, DEFAULT_MAX_LLM_CALLS),
        parseSeconds(env, "STREAMPROOF_RUN_TIMEOUT", DEFAULT_RUN_TIMEOUT_MS),
        bug);
  }

  boolean has(Bug which) {
    return bug.isPresent() && bug.get() == which;
  }

  /** {@code alice=alice-token,bob=bob-token} to token -> user. */
  static Map<String, String> parseTokens(String spec) {
    Map<String, String> byToken = new LinkedHashMap<>();
    for (String item : spec.split(",")) {
      if (item.isBlank()) {
        continue;
      }
      int eq = item.indexOf('=');
      String user = eq < 0 ? "" : item.substring(0, eq).strip();
      String token = eq < 0 ? "" : item.substring(eq + 1).strip();
      if (user.isEmpty() || token.isEmpty()) {
        throw new IllegalArgumentException(
            "STREAMPROOF_GATEWAY_TOKENS: expected user=token, got '" + item + "'");
      }
      if (byToken.putIfAbsent(token, user) != null) {
        throw new IllegalArgumentException(
            "STREAMPROOF_GATEWAY_TOKENS: token for '" + user + "' is not unique");
      }
    }
    if (byToken.isEmpty()) {
      throw new IllegalArgumentException("STREAMPROOF_GATEWAY_TOKENS: no user=token pair");
    }
    return Map.copyOf(byToken);
  }

  private static boolean blank(String s) {
    return s == null || s.isBlank();
  }

  private static int parseInt(Map<String, String> env, String name, int lo, int hi, int dflt) {
    String raw = env.get(name);
    if (blank(raw)) {
      return dflt;
    }
    int value;
    try {
      value = Integer.parseInt(raw.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + ": expected an integer, got '" + raw + "'");
    }
    if (value < lo || value > hi) {
      throw new IllegalArgumentException(
          name + ": must be between " + lo + " and " + hi + ", got " + value);
    }
    return value;
  }

  private static long parseSeconds(Map<String, String> env, String name, long dfltMillis) {
    String raw = env.get(name);
    if (blank(raw)) {
      return dfltMillis;
    }
    double seconds;
    try {
      seconds = Double.parseDouble(raw.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + ": expected a number of seconds, got '" + raw + "'");
    }
    if (!(seconds > 0) || Double.isInfinite(seconds)) {
      throw new IllegalArgumentException(name + ": must be a positive number, got " + raw);
    }
    return Math.max(1L, Math.round(seconds * 1000));
  }
}
