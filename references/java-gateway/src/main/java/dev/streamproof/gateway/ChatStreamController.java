package dev.streamproof.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.adk.agents.RunConfig;
import com.google.adk.artifacts.InMemoryArtifactService;
import com.google.adk.events.Event;
import com.google.adk.runner.Runner;
import com.google.adk.sessions.BaseSessionService;
import com.google.adk.sessions.Session;
import io.reactivex.rxjava3.disposables.CompositeDisposable;
import io.reactivex.rxjava3.disposables.Disposable;
import io.reactivex.rxjava3.schedulers.Schedulers;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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

  /** How long after the run bound the SseEmitter's own timeout fires, as a backstop. */
  private static final long EMITTER_GRACE_MS = 5_000L;
  /** Fires the run bounds; one daemon thread, since a bound only disposes and writes a frame. */
  private static final ScheduledExecutorService BOUNDS =
      Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "run-bounds");
        t.setDaemon(true);
        return t;
      });

  private final BaseSessionService sessions;
  private final InMemoryArtifactService artifacts = new InMemoryArtifactService();
  private final Settings settings;

  ChatStreamController(BaseSessionService sessions, Settings settings) {
    this.sessions = sessions;
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

    // The seed's emitter bound. The gateway ends a run at the bound itself (RunBound below) so
    // it can send an error frame first; the emitter's own timeout, a little later, is the
    // backstop that disposes the run if that ever failed.
    SseEmitter emitter = new SseEmitter(settings.runTimeoutMillis() + EMITTER_GRACE_MS);
    RunConfig.Builder cfg = RunConfig.builder()
        .setStreamingMode(streaming ? RunConfig.StreamingMode.SSE : RunConfig.StreamingMode.NONE);
    if (!settings.has(Bug.NO_LLM_BUDGET)) {
      cfg.setMaxLlmCalls(settings.maxLlmCalls());
    }
    FrameSink sink = new FrameSink(emitter, settings);
    // Not in the seed: an SseEmitter commits the response only with its first frame, so a run
    // that fails slowly (ADK Java retries a model error for up to a minute) would leave the
    // browser without even a status line, and a browser that gives up unnoticed. One SSE
    // comment commits 200 text/event-stream at once; SSE clients ignore comments.
    sink.open();
    // The seed wires one Runner; here each run gets its own, on the shared session store, so
    // that its model calls go through a link it can cancel (ADK's dispose does not; ModelLink).
    ModelLink model = new ModelLink(SupportAgent.MODEL_NAME);
    Runner runner = Runner.builder()
        .agent(SupportAgent.build(model))
        .appName(SupportAgent.APP_NAME)
        .sessionService(sessions)
        .artifactService(artifacts)
        .build();
    Turn turn = new Turn(sessionId, sink, model);
    if (!settings.has(Bug.NO_DISPOSE)) {
      emitter.onCompletion(turn::closed);
      emitter.onError(err -> turn.closed());
    }
    emitter.onTimeout(turn::timedOut);
    turn.run.add(Disposable.fromFuture(
        BOUNDS.schedule(turn::timedOut, settings.runTimeoutMillis(), TimeUnit.MILLISECONDS),
        false));
    turn.run.add(runner
        .runAsync(user.get(), sessionId, Frames.userMessage(text), cfg.build())
        .subscribeOn(Schedulers.io())
        .subscribe(
            sink::event,
            err -> {
              LOG.warn("run for session {} failed: {}", sessionId, err.toString());
              turn.finish("error", Frames.obj().put("retryable", true));
            },
            () -> turn.finish("done", Frames.obj())));
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
    Session session = sessions
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

  private void ensureSession(String user, String sessionId) {
    BaseSessionService service = sessions;
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
   * One run and how it ends: exactly one of its completion, its failure, its bound or the
   * browser going away ends it. Stopping a live run cancels its model calls (see {@link
   * ModelLink}): ADK Java's dispose alone leaves them open.
   */
  static final class Turn {
    final CompositeDisposable run = new CompositeDisposable();
    private final String sessionId;
    private final FrameSink sink;
    private final ModelLink model;
    private final AtomicBoolean ended = new AtomicBoolean();

    Turn(String sessionId, FrameSink sink, ModelLink model) {
      this.sessionId = sessionId;
      this.sink = sink;
      this.model = model;
    }

    /** The run completed or failed: its terminal frame. */
    void finish(String type, ObjectNode data) {
      if (ended.compareAndSet(false, true)) {
        sink.terminal(type, data);
        run.dispose(); // the bound's timer
      }
    }

    /** The run bound: dispose the run, close its model call, then an error frame. */
    void timedOut() {
      if (ended.compareAndSet(false, true)) {
        LOG.warn("run for session {} reached its bound; disposed", sessionId);
        stop();
        sink.terminal("error", Frames.obj().put("code", "TIMEOUT").put("retryable", true));
      }
    }

    /** The emitter completed or failed (the browser went away, or a write failed). */
    void closed() {
      if (ended.compareAndSet(false, true)) {
        LOG.info("stream for session {} closed before the run ended; disposed", sessionId);
        stop();
      } else {
        run.dispose();
      }
    }

    private void stop() {
      run.dispose();
      model.cancel();
    }
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

    synchronized void open() {
      try {
        emitter.send(SseEmitter.event().comment("stream open"));
      } catch (IOException e) {
        closed = true;
        emitter.completeWithError(e);
      }
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
