package dev.streamproof.gateway;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.adk.agents.LlmAgent;
import com.google.adk.tools.Annotations.Schema;
import com.google.adk.tools.FunctionTool;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The contract's agent: {@code support} on gemini-2.5-flash (google-genai reads
 * GOOGLE_GEMINI_BASE_URL and GOOGLE_API_KEY itself) with one tool, {@code lookupOrder}, that POSTs
 * its arguments as JSON to {@code $STREAMPROOF_TOOL_URL/lookupOrder} and returns the JSON answer.
 */
public final class SupportAgent {
  static final String APP_NAME = "streamproof";
  static final String AGENT_NAME = "support";
  static final String MODEL_NAME = "gemini-2.5-flash";
  static final String TOOL_NAME = "lookupOrder";
  static final String INSTRUCTION =
      "You are a customer-support agent for an online shop. When the user asks about an order, "
          + "call lookupOrder with the order id and answer from its result. Be brief and factual.";

  private static final Duration TOOL_TIMEOUT = Duration.ofSeconds(10);
  private static final ObjectMapper JSON = new ObjectMapper();
  // No proxy: the tool service is plain http on loopback and stays off the model's proxy path.
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(TOOL_TIMEOUT).version(HttpClient.Version.HTTP_1_1)
          .build();
  // ADK's FunctionTool calls a static method; the tool service's URL is fixed at start-up.
  private static volatile String toolUrl = "";

  private SupportAgent() {}

  /** Where lookupOrder POSTs: set once at start-up, before any run. */
  static void useToolService(String toolServiceUrl) {
    toolUrl = toolServiceUrl.replaceAll("/+$", "");
  }

  /** The agent on one run's model link (see {@link ModelLink}); building it is cheap. */
  static LlmAgent build(ModelLink model) {
    return LlmAgent.builder()
        .name(AGENT_NAME)
        .model(model.gemini())
        .instruction(INSTRUCTION)
        .tools(FunctionTool.create(SupportAgent.class, TOOL_NAME))
        .build();
  }

  /**
   * Looks up an order by its id. A failure goes back to the model as {@code {"error": ...}}
   * instead of aborting the run, so the agent can tell the user.
   */
  @Schema(description = "Look up an order by its id and return its status and delivery estimate.")
  public static Map<String, Object> lookupOrder(
      @Schema(name = "orderId", description = "The order number, e.g. \"1042\".") String orderId) {
    Map<String, Object> args = new LinkedHashMap<>();
    args.put("orderId", orderId);
    HttpResponse<String> response;
    try {
      HttpRequest request = HttpRequest.newBuilder(URI.create(toolUrl + "/" + TOOL_NAME))
          .timeout(TOOL_TIMEOUT)
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(args)))
          .build();
      response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      return Map.of("error", "tool service unreachable: " + e.getClass().getSimpleName());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // the run was disposed
      return Map.of("error", "tool call interrupted");
    }
    if (response.statusCode() >= 400) {
      return Map.of("error", "tool service answered HTTP " + response.statusCode());
    }
    try {
      JsonNode answer = JSON.readTree(response.body());
      if (answer != null && answer.isObject()) {
        return JSON.convertValue(answer, new TypeReference<Map<String, Object>>() {});
      }
      Map<String, Object> wrapped = new LinkedHashMap<>();
      wrapped.put("result", answer == null ? null : JSON.treeToValue(answer, Object.class));
      return wrapped;
    } catch (IOException e) {
      return Map.of("error", "tool service answered with invalid JSON");
    }
  }
}
