package dev.streamproof.client;

import java.util.Map;
import java.util.Set;

/**
 * The client contract read from the environment (docs/reference/a2a-client-contract.md):
 * STREAMPROOF_A2A_URL, STREAMPROOF_PROMPT, STREAMPROOF_DEADLINE_S, STREAMPROOF_IDLE_S, on a
 * follow-up STREAMPROOF_TASK_ID and STREAMPROOF_CONTEXT_ID, and the mutant in STREAMPROOF_BUG.
 */
record Settings(
        String url,
        String prompt,
        double deadlineS,
        double idleS,
        String taskId,
        String contextId,
        String bug) {

    /** The seeded defects of this client ("mutants"); each differs in one place. */
    static final Map<String, String> BUGS = Map.of(
            "no-watchdog",
            "no idle watchdog: a quiet drop goes unnoticed until the deadline",
            "resend-on-drop",
            "after a drop the original message is sent again instead of tasks/get + resubscribe",
            "stream-end-as-completed",
            "errorHandler(null), which a2a-java calls at every stream end, is taken for a "
                    + "completed task (its own comment: null means successful completion), so a "
                    + "stream cut cleanly mid-task reports success");

    static final class ConfigError extends Exception {
        private static final long serialVersionUID = 1L;

        ConfigError(String message) {
            super(message);
        }
    }

    static Settings fromEnv(Map<String, String> env) throws ConfigError {
        String bug = blankToNull(env.get("STREAMPROOF_BUG"));
        if (bug != null && !BUGS.containsKey(bug)) {
            throw new ConfigError("unknown bug '" + bug + "'; valid bugs: "
                    + String.join(", ", Set.copyOf(BUGS.keySet()).stream().sorted().toList()));
        }
        String url = env.getOrDefault("STREAMPROOF_A2A_URL", "").strip();
        if (url.isEmpty()) {
            throw new ConfigError("STREAMPROOF_A2A_URL is not set (the agent's base URL)");
        }
        return new Settings(
                url,
                env.getOrDefault("STREAMPROOF_PROMPT", ""),
                seconds(env, "STREAMPROOF_DEADLINE_S"),
                seconds(env, "STREAMPROOF_IDLE_S"),
                blankToNull(env.get("STREAMPROOF_TASK_ID")),
                blankToNull(env.get("STREAMPROOF_CONTEXT_ID")),
                bug);
    }

    boolean bug(String name) {
        return name.equals(bug);
    }

    private static double seconds(Map<String, String> env, String name) throws ConfigError {
        String raw = env.getOrDefault(name, "");
        double value;
        try {
            value = Double.parseDouble(raw.strip());
        } catch (NumberFormatException e) {
            throw new ConfigError(name + " must be a number of seconds, not '" + raw + "'");
        }
        if (!(value > 0) || Double.isInfinite(value)) {
            throw new ConfigError(name + " must be positive, not '" + raw + "'");
        }
        return value;
    }

    private static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value.strip();
    }
}
