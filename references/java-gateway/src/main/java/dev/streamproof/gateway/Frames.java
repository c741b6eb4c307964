package dev.streamproof.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.adk.events.Event;
import com.google.genai.types.Content;
import com.google.genai.types.FunctionCall;
import com.google.genai.types.FunctionResponse;
import com.google.genai.types.Part;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The seed's {@code send}: one ADK event to the typed frames the browser gets for it, in order
 * (maybe none). Pure: no I/O, so each branch can be read against the seed line by line.
 */
final class Frames {
  static final ObjectMapper JSON = new ObjectMapper();

  /** One typed frame before numbering: its SSE event name and its JSON payload. */
  record Frame(String type, ObjectNode data) {}

  private Frames() {}

  static String text(Event ev) {
    return ev.content().flatMap(Content::parts).orElse(List.of()).stream()
        .map(part -> part.text().orElse(""))
        .collect(Collectors.joining());
  }

  static List<Frame> of(Event ev, Settings settings) {
    String text = text(ev);
    List<Frame> frames = new ArrayList<>();
    if (ev.errorCode().isPresent() && !settings.has(Bug.SWALLOW_ERROR_EVENT)) {
      frames.add(new Frame("error", obj().put("code", ev.errorCode().get().toString())));
    } else if (ev.partial().orElse(false)) {
      // A function call seen in a partial is never shown nor acted on: ADK runs it once,
      // later, from the aggregate.
      if (!text.isEmpty()) {
        frames.add(new Frame("delta", obj().put("author", ev.author()).put("text", text)));
      }
    } else if (!ev.functionCalls().isEmpty()) {
      if (!text.isEmpty()) {
        frames.add(new Frame("message",
            obj().put("author", ev.author()).put("text", text).put("final", false)));
      }
      ArrayNode names = JSON.createArrayNode();
      for (FunctionCall call : ev.functionCalls()) {
        names.add(call.name().orElse("?"));
      }
      ObjectNode payload = obj();
      payload.set("names", names);
      frames.add(new Frame("tool_call", payload));
    } else if (!ev.functionResponses().isEmpty()) {
      ObjectNode payload = obj().put("count", ev.functionResponses().size());
      if (settings.has(Bug.LEAK_TOOL_PAYLOAD)) {
        ArrayNode raw = JSON.createArrayNode();
        for (FunctionResponse response : ev.functionResponses()) {
          raw.add(JSON.valueToTree(response.response().orElse(java.util.Map.of())));
        }
        payload.set("responses", raw);
      }
      frames.add(new Frame("tool_result", payload));
    } else if (!text.isEmpty()) {
      if (settings.has(Bug.AGGREGATE_AS_DELTA)) {
        frames.add(new Frame("delta", obj().put("author", ev.author()).put("text", text)));
      } else {
        frames.add(new Frame("message", obj().put("author", ev.author()).put("id", ev.id())
            .put("text", text).put("final", ev.finalResponse())));
      }
    }
    return frames;
  }

  static ObjectNode obj() {
    return JSON.createObjectNode();
  }

  /** The text parts of a content, for a user message built from the request body. */
  static Content userMessage(String text) {
    return Content.builder().role("user").parts(List.of(Part.fromText(text))).build();
  }
}
