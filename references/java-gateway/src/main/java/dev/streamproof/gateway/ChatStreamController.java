package dev.streamproof.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.adk.agents.RunConfig;
import com.google.adk.events.Event;
import com.google.adk.runner.Runner;
import com.google.adk.sessions.BaseSessionService;
import com.google.adk.sessions.Session;
import io.reactivex.rxjava3.disposables.CompositeDisposable;
import io.reactivex.rxjava3.schedulers.Schedulers;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

/**
 * The seed's ChatStreamController: one ADK run per request, streamed as typed frames through an
 * SseEmitter, numbered by the gateway's own counter, disposed on completion, timeout and error;
 * plus the bearer auth and per-user history the seed says a production gateway usually wants.
 */
@RestController
class ChatStreamController {
  private static final Logger LOG = LoggerFactory.getLogger(ChatStreamController.class);

  private final Runner runner;
  private final Settings settings;

  ChatStreamController(Runner runner, Settings settings) {
    this.runner = runner;
    this.settings = settings;
  }

  @GetMapping("/healthz")
  String healthz() {
    return "ok";
  }

  @PostMapping("/chat/{sessionId}")
  SseEmitter chat(
      @PathVariable String sessionId,
      @RequestBody(required = false) String text,
      @RequestParam(name = "mode", required = false) String mode,
      @RequestHeader(name = "Authorization", required = false) String authorization,
      HttpServletResponse http) throws IOException {
    Optional<String> user = authenticate(authorization, http);
    if (user.isEmpty()) {
      return null; // 401 written; Spring treats a null emitter as a handled request
    }
    if (text == null || text.isBlank()) {
      writeError(http, 400, "empty message: send the user's text as the body");
      return null;
    }
    ensureSession(user.get(), sessionId);
    boolean streaming = mode == null || !mode.equalsIgnoreCase("none");

    SseEmitter emitter = new SseEmitter(settings.runTimeoutMillis());
    RunConfig.Builder cfg = RunConfig.builder()
        .setStreamingMode(streaming ? RunConfig.StreamingMode.SSE : RunConfig.StreamingMode.NONE);
    if (!settings.has(Bug.NO_LLM_BUDGET)) {
      cfg.setMaxLlmCalls(settings.maxLlmCalls());
    }
    FrameSink sink = new FrameSink(emitter, settings);
    CompositeDisposable run = new CompositeDisposable(); // disposing it first cancels what follows
    boolean dispose = !settings.has(Bug.NO_DISPOSE);
    emitter.onCompletion(() -> {
      if (dispose) {
        run.dispose();
      }
    });
    emitter.onError(err -> {
      if (dispose) {
        run.dispose();
      }
    });
    emitter.onTimeout(() -> {
      LOG.warn("run for session {} reached its bound of {} ms; disposed", sessionId,
          settings.runTimeoutMillis());
      if (dispose) {
        run.dispose();
      }
      sink.terminal("error", Frames.obj().put("code", "TIMEOUT").put("retryable", true));
    });
    run.add(runner
        .runAsync(user.get(), sessionId, Frames.userMessage(text), cfg.build())
        .subscribeOn(Schedulers.io())
        .subscribe(
            sink::event,
            err -> {
              LOG.warn("run for session {} failed: {}", sessionId, err.toString());
              sink.terminal("error", Frames.obj().put("retryable", true));
            },
            () -> sink.terminal("done", Frames.obj())));
    return emitter;
  }

  @GetMapping(path = "/history/{sessionId}", produces = MediaType.APPLICATION_JSON_VALUE)
  void history(
      @PathVariable String sessionId,
      @RequestHeader(name = "Authorization", required = false) String authorization,
      HttpServletResponse http) throws IOException {
    Optional<String> user = authenticate(authorization, http);
    if (user.isEmpty()) {
      return;
    }
    Session session = sessions()
        .getSession(SupportAgent.APP_NAME, user.get(), sessionId, Optional.empty())
        .blockingGet();
    if (session == null) {
      writeError(http, 404, "no session '" + sessionId + "' for this user");
      return;
    }
    ArrayNode events = Frames.JSON.createArrayNode();
    for (Event ev : List.copyOf(session.events())) {
      JsonNode node = Frames.JSON.readTree(ev.toJson());
      events.add(node);
    }
    ObjectNode body = Frames.obj();
    body.set("events", events);
    http.setStatus(200);
    http.setContentType(MediaType.APPLICATION_JSON_VALUE);
    http.getOutputStream().write(Frames.JSON.writeValueAsBytes(body));
  }

  private BaseSessionService sessions() {
    return runner.sessionService();
  }

  private void ensureSession(String user, String sessionId) {
    BaseSessionService service = sessions();
    synchronized (this) {
      Session found =
          service.getSession(SupportAgent.APP_NAME, user, sessionId, Optional.empty())
              .blockingGet();
      if (found == null) {
        service.createSession(SupportAgent.APP_NAME, user, new ConcurrentHashMap<>(), sessionId)
            .blockingGet();
      }
    }
  }

  /** The user behind {@code Authorization: Bearer <token>}; otherwise a 401 is written. */
  private Optional<String> authenticate(String header, HttpServletResponse http)
      throws IOException {
    String user = null;
    if (header != null) {
      String[] parts = header.strip().split("\\s+", 2);
      if (parts.length == 2 && parts[0].equalsIgnoreCase("bearer")) {
        user = settings.usersByToken().get(parts[1].strip());
      }
    }
    if (user == null) {
      http.setHeader("WWW-Authenticate", "Bearer realm=\"streamproof\"");
      writeError(http, 401, "missing or unknown bearer token");
      return Optional.empty();
    }
    return Optional.of(user);
  }

  private static void writeError(HttpServletResponse http, int status, String message)
      throws IOException {
    http.setStatus(status);
    http.setContentType(MediaType.APPLICATION_JSON_VALUE);
    byte[] body = Frames.JSON.writeValueAsString(Frames.obj().put("error", message))
        .getBytes(StandardCharsets.UTF_8);
    http.getOutputStream().write(body);
  }

  /**
   * Numbers and writes the frames of one run. Each frame gets a fresh id from the run's own
   * AtomicLong; after the terminal frame (done or error) nothing more is written.
   */
  static final class FrameSink {
    private final SseEmitter emitter;
    private final Settings settings;
    private final java.util.concurrent.atomic.AtomicLong seq =
        new java.util.concurrent.atomic.AtomicLong();
    private boolean closed;

    FrameSink(SseEmitter emitter, Settings settings) {
      this.emitter = emitter;
      this.settings = settings;
    }

    synchronized void event(Event ev) {
      for (Frames.Frame frame : Frames.of(ev, settings)) {
        String id = settings.has(Bug.EVENT_ID_AS_FRAME_ID)
            ? ev.id() : Long.toString(seq.incrementAndGet());
        write(id, frame.type(), frame.data());
      }
    }

    synchronized void terminal(String type, ObjectNode data) {
      write(Long.toString(seq.incrementAndGet()), type, data);
      if (!closed) {
        closed = true;
        emitter.complete();
      }
    }

    private void write(String id, String type, ObjectNode data) {
      if (closed) {
        return;
      }
      try {
        emitter.send(SseEmitter.event().id(id).name(type)
            .data(Frames.JSON.writeValueAsString(data), MediaType.APPLICATION_JSON));
      } catch (IOException | IllegalStateException e) {
        if (settings.has(Bug.NO_DISPOSE)) {
          return; // mutant: a send failure does not stop the run
        }
        closed = true;
        emitter.completeWithError(e); // the client went away; onCompletion disposes the run
      }
    }
  }
}
