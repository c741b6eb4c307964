package dev.streamproof.gateway;

import java.util.Arrays;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The Java reference's seeded defects ("mutants"), switched by {@code STREAMPROOF_BUG}. Each is
 * one defect from the seed's failure list and reuses the Python reference's name for the same
 * defect, so {@code streamproof run --bug NAME} and the intended requirement are the same.
 */
enum Bug {
  /** The non-partial text event is sent as a delta, appended to the draft: double rendering. */
  AGGREGATE_AS_DELTA("aggregate-as-delta"),
  /** tool_result carries the raw function responses instead of a count. */
  LEAK_TOOL_PAYLOAD("leak-tool-payload"),
  /** No disposal on completion, timeout or send failure: a closed tab leaves the run going. */
  NO_DISPOSE("no-dispose"),
  /** maxLlmCalls left at ADK's default of 500: a runaway loop runs on. */
  NO_LLM_BUDGET("no-llm-budget"),
  /** The SSE id is the ADK event id instead of the gateway's own counter. */
  EVENT_ID_AS_FRAME_ID("event-id-as-frame-id"),
  /** Events with an error code are handled as if they had none. */
  SWALLOW_ERROR_EVENT("swallow-error-event");

  final String wireName;

  Bug(String wireName) {
    this.wireName = wireName;
  }

  /** The bug named by {@code value}; empty for none; an error naming every valid one. */
  static Optional<Bug> parse(String value) {
    if (value == null || value.isBlank()) {
      return Optional.empty();
    }
    for (Bug bug : values()) {
      if (bug.wireName.equals(value.strip())) {
        return Optional.of(bug);
      }
    }
    throw new IllegalArgumentException(
        "unknown bug '" + value + "'; valid bugs: "
            + Arrays.stream(values()).map(b -> b.wireName).collect(Collectors.joining(", ")));
  }
}
