package dev.streamproof.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.a2a.client.Client;
import io.a2a.client.ClientEvent;
import io.a2a.client.MessageEvent;
import io.a2a.client.TaskEvent;
import io.a2a.client.TaskUpdateEvent;
import io.a2a.spec.AgentCard;
import io.a2a.spec.Artifact;
import io.a2a.spec.Message;
import io.a2a.spec.Part;
import io.a2a.spec.Task;
import io.a2a.spec.TaskArtifactUpdateEvent;
import io.a2a.spec.TaskIdParams;
import io.a2a.spec.TaskQueryParams;
import io.a2a.spec.TaskState;
import io.a2a.spec.TaskStatus;
import io.a2a.spec.TaskStatusUpdateEvent;
import io.a2a.spec.TextPart;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * All state of one logical call (the client seed's {@code StreamCall}) and its recovery.
 *
 * <p>Per-call state: the artifact buffers keyed by artifact id (reassembled from the update
 * events only: append extends, otherwise replace), the task and context ids captured from the
 * first event that carries them, the last state, the time of the last event and the
 * {@code incomplete} flag. Recovery, one path for loud drops (the streaming error handler)
 * and quiet ones (the idle watchdog): no task id yet means fail, never resend; otherwise a
 * {@code tasks/get} snapshot, then {@code tasks/resubscribe}.
 *
 * <p>a2a-java specifics: the transport calls the error handler with {@code null} at every
 * stream end, after a final update too; a stream that ends after the call is done is ignored,
 * one that ends before it is a drop. Each stream has a generation number and events or ends
 * of an older stream (one the call has given up on) are ignored, because a2a-java offers no
 * way to close a stream it has opened.
 */
final class StreamCall {
    static final Set<String> TERMINAL = Set.of("completed", "failed", "canceled", "rejected", "unknown");
    static final Set<String> INTERRUPTED = Set.of("input-required", "auth-required");
    private static final int MAX_RECOVERIES = 5;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Client client;
    private final Settings settings;
    /** Completes, once, with the status of the result ("completed", "message", "error"...). */
    final CompletableFuture<String> done = new CompletableFuture<>();
    private final Map<String, StringBuilder> buffers = new LinkedHashMap<>();
    private final Map<String, String> names = new LinkedHashMap<>();
    private final Map<String, JsonNode> data = new LinkedHashMap<>();
    private final ExecutorService worker = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "streamproof-recovery");
        t.setDaemon(true);
        return t;
    });

    private String taskId;
    private String contextId;
    private String lastState = "submitted";
    private String statusText;
    private String reply;
    private String error;
    private boolean incomplete;
    private volatile long lastEventNanos = System.nanoTime();
    private int fruitless;
    private boolean recovering;
    /** A resubscribe started without a Task snapshot: chunks may have fallen in between. */
    private boolean unverified;
    /** The stream whose events count; older ones were given up. */
    private int generation;

    StreamCall(Client client, Settings settings) {
        this.client = client;
        this.settings = settings;
        this.taskId = settings.taskId();
        this.contextId = settings.contextId();
    }

    // --- streams ---------------------------------------------------------------------------

    /** Send the call's message (on a follow-up it carries the waiting task's ids). */
    void start() throws Exception {
        int gen;
        synchronized (this) {
            gen = ++generation;
            lastEventNanos = System.nanoTime();
        }
        Message.Builder message = new Message.Builder()
                .role(Message.Role.USER)
                .parts(List.of(new TextPart(settings.prompt())))
                .messageId(UUID.randomUUID().toString());
        if (settings.taskId() != null) {
            message.taskId(settings.taskId());
        }
        if (settings.contextId() != null) {
            message.contextId(settings.contextId());
        }
        client.sendMessage(message.build(), consumers(gen, "message"), ended(gen), null);
    }

    private List<BiConsumer<ClientEvent, AgentCard>> consumers(int gen, String source) {
        return List.of((event, card) -> onEvent(gen, event, source));
    }

    private Consumer<Throwable> ended(int gen) {
        return error -> onStreamEnd(gen, error);
    }

    /** The streaming error handler: an error, or {@code null} for a stream that ended. */
    private synchronized void onStreamEnd(int gen, Throwable error) {
        if (gen != generation || done.isDone()) {
            return; // a2a-java's errorHandler(null) after a final update, or a stale stream
        }
        if (error == null && settings.bug("stream-end-as-completed")) {
            finish("completed"); // the defect: an end without an error taken for success
            return;
        }
        dropped(error == null ? "the stream ended before the task did" : describe(error));
    }

    synchronized void closeStreams() {
        generation++;
    }

    // --- events (the seed's onEvent) -------------------------------------------------------

    private synchronized void onEvent(int gen, ClientEvent event, String source) {
        if (gen != generation || done.isDone()) {
            return;
        }
        lastEventNanos = System.nanoTime();
        fruitless = 0;
        try {
            if (event instanceof MessageEvent m) {
                reply = text(m.getMessage().getParts());
                finish("message");
            } else if (event instanceof TaskEvent t) {
                onTask(t.getTask(), source);
            } else if (event instanceof TaskUpdateEvent u) {
                // The update's own ids: after a resubscribe without a snapshot, u.getTask() is
                // a placeholder a2a-java made up (state UNKNOWN, appends dropped).
                if (u.getUpdateEvent() instanceof TaskArtifactUpdateEvent a) {
                    remember(a.getTaskId(), a.getContextId());
                    onArtifact(a);
                } else if (u.getUpdateEvent() instanceof TaskStatusUpdateEvent s) {
                    remember(s.getTaskId(), s.getContextId());
                    onState(s.getStatus());
                    if (s.isFinal()) {
                        finish(lastState);
                    }
                }
            }
        } catch (RuntimeException e) { // never let the transport's thread see it
            fail("could not handle an event: " + describe(e));
        }
    }

    private void remember(String id, String context) {
        if (id != null && !id.isEmpty()) {
            taskId = id;
        }
        if (context != null && !context.isEmpty()) {
            contextId = context;
        }
    }

    private void onTask(Task task, String source) {
        remember(task.getId(), task.getContextId());
        List<Artifact> artifacts = task.getArtifacts();
        if ("resubscribe".equals(source)) {
            if (artifacts != null && !artifacts.isEmpty()) {
                replaceFrom(artifacts); // as authoritative as tasks/get, and fresher
            }
            unverified = false;
        }
        onState(task.getStatus());
    }

    private void onState(TaskStatus status) {
        String state = status == null || status.state() == null ? "unknown" : status.state().asString();
        lastState = state;
        String message = status == null || status.message() == null ? "" : text(status.message().getParts());
        statusText = message.isEmpty() ? null : message;
        Main.log("task " + taskId + ": " + state + (message.isEmpty() ? "" : " (" + message + ")"));
        if (TERMINAL.contains(state) || INTERRUPTED.contains(state)) {
            finish(state);
        }
    }

    private void onArtifact(TaskArtifactUpdateEvent update) {
        Artifact art = update.getArtifact();
        put(art, Boolean.TRUE.equals(update.isAppend()));
        if (Boolean.TRUE.equals(update.isLastChunk())) {
            Main.log("artifact " + art.artifactId() + " (" + names.getOrDefault(art.artifactId(), "") + ") ready");
            if (structured(art.artifactId())) {
                parse(art.artifactId());
            }
        }
    }

    private void put(Artifact art, boolean append) {
        String chunk = text(art.parts());
        if (art.name() != null && !art.name().isEmpty()) {
            names.put(art.artifactId(), art.name());
        }
        if (append) {
            buffers.computeIfAbsent(art.artifactId(), k -> new StringBuilder()).append(chunk);
        } else {
            buffers.put(art.artifactId(), new StringBuilder(chunk));
        }
    }

    /** A snapshot is authoritative after a gap: the buffers become its artifacts. */
    private void replaceFrom(List<Artifact> artifacts) {
        buffers.clear();
        for (Artifact art : artifacts) {
            put(art, false);
            if (structured(art.artifactId())) {
                parse(art.artifactId());
            }
        }
    }

    private boolean structured(String artifactId) {
        return names.getOrDefault(artifactId, "").endsWith(".json");
    }

    /** Parse a structured artifact once it is whole, never per chunk. */
    private void parse(String artifactId) {
        try {
            data.put(artifactId, JSON.readTree(buffers.getOrDefault(artifactId, new StringBuilder()).toString()));
        } catch (Exception e) {
            data.remove(artifactId);
            Main.log("artifact " + artifactId + " is not valid JSON once whole: " + e.getMessage());
        }
    }

    static String text(List<Part<?>> parts) {
        StringBuilder sb = new StringBuilder();
        if (parts != null) {
            for (Part<?> p : parts) {
                if (p instanceof TextPart t && t.getText() != null) {
                    sb.append(t.getText());
                }
            }
        }
        return sb.toString();
    }

    // --- completion ------------------------------------------------------------------------

    /** Complete the call; idempotent, as CompletableFuture.complete is. */
    private void finish(String status) {
        done.complete(status);
    }

    synchronized void fail(String reason) {
        if (!done.isDone()) {
            Main.log("call failed: " + reason);
            error = reason;
            done.complete("error");
        }
    }

    synchronized void timedOut(String reason) {
        incomplete = true;
        error = reason;
    }

    synchronized boolean unverified() {
        return unverified;
    }

    synchronized Map<String, Object> result(String status) {
        Map<String, Object> out = new LinkedHashMap<>();
        List<Map<String, Object>> artifacts = new ArrayList<>();
        for (Map.Entry<String, StringBuilder> e : buffers.entrySet()) {
            Map<String, Object> item = new LinkedHashMap<>();
            item.put("id", e.getKey());
            item.put("name", names.get(e.getKey()));
            item.put("text", e.getValue().toString());
            if (data.containsKey(e.getKey())) {
                item.put("data", data.get(e.getKey()));
            }
            artifacts.add(item);
        }
        out.put("status", status);
        out.put("taskId", taskId);
        out.put("contextId", contextId);
        out.put("artifacts", artifacts);
        out.put("message", "message".equals(status) ? reply : error != null ? error : statusText);
        out.put("incomplete", incomplete);
        return out;
    }

    // --- recovery --------------------------------------------------------------------------

    /** Both kinds of drop end here (the seed's onError and its watchdog); one at a time. */
    private void dropped(String why) {
        if (done.isDone() || recovering) {
            return;
        }
        recovering = true;
        Main.log("stream dropped: " + why);
        worker.submit(() -> recover(why));
    }

    /** The idle watchdog's check, run every tenth of the idle limit. */
    synchronized void watch() {
        double quiet = (System.nanoTime() - lastEventNanos) / 1e9;
        if (!done.isDone() && !recovering && quiet > settings.idleS()) {
            dropped(String.format("no event for %.2fs (idle limit %ss)", quiet, settings.idleS()));
        }
    }

    private void recover(String firstWhy) {
        String why = firstWhy;
        try {
            synchronized (this) {
                generation++; // the stream that dropped is given up
            }
            while (!done.isDone()) {
                int attempt;
                synchronized (this) {
                    if (taskId == null && !settings.bug("resend-on-drop")) {
                        fail("the stream dropped before the first event (" + why + "); not resending "
                                + "the message, which could start a second task");
                        return;
                    }
                    attempt = ++fruitless;
                }
                if (attempt > MAX_RECOVERIES) {
                    fail("gave up after " + MAX_RECOVERIES + " recoveries without an event (" + why + ")");
                    return;
                }
                if (attempt > 1) { // bounded backoff between fruitless attempts
                    double base = Math.max(settings.idleS() / 20, 0.05);
                    double wait = Math.min(base * Math.pow(2, attempt - 2), settings.idleS());
                    Thread.sleep((long) (wait * 1000));
                }
                try {
                    if (settings.bug("resend-on-drop")) {
                        start(); // the defect: the original message again, a second task
                    } else {
                        snapshotThenResubscribe();
                    }
                    return;
                } catch (Exception e) {
                    why = describe(e);
                    Main.log("recovery attempt " + attempt + " failed: " + why);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            synchronized (this) {
                recovering = false;
            }
        }
    }

    private void snapshotThenResubscribe() throws Exception {
        String id;
        synchronized (this) {
            id = taskId;
        }
        Task snap = client.getTask(new TaskQueryParams(id), null);
        int gen;
        synchronized (this) {
            List<Artifact> artifacts = snap.getArtifacts();
            if (artifacts != null && !artifacts.isEmpty()) {
                replaceFrom(artifacts);
            } else if (!buffers.isEmpty()) {
                incomplete = true; // chunks of the gap are not replayed
            }
            // The buffers are the task's own now: an earlier resubscribe that was refused leaves
            // nothing to verify (the recipe's flow has no second look).
            unverified = false;
            onState(snap.getStatus()); // may already be final
            if (done.isDone()) {
                return;
            }
            Main.log("resubscribing to task " + id);
            gen = ++generation;
            lastEventNanos = System.nanoTime(); // a fresh idle window
            unverified = true;
        }
        client.resubscribe(new TaskIdParams(id), consumers(gen, "resubscribe"), ended(gen), null);
    }

    /**
     * A task that completed after a resubscribe without a snapshot: take the final artifacts
     * from the task itself (chunks of the gap were never streamed to this client).
     */
    void verify() {
        String id;
        synchronized (this) {
            id = taskId;
        }
        if (id == null) {
            return;
        }
        try {
            Task snap = client.getTask(new TaskQueryParams(id), null);
            synchronized (this) {
                if (snap.getArtifacts() != null && !snap.getArtifacts().isEmpty()) {
                    replaceFrom(snap.getArtifacts());
                }
            }
        } catch (Exception e) {
            Main.log("could not verify the artifacts: " + describe(e));
            synchronized (this) {
                incomplete = true;
            }
        }
    }

    /** tasks/cancel on deadline; the server may refuse; logged either way, bounded in time. */
    void cancelQuietly() {
        String id;
        synchronized (this) {
            id = taskId;
        }
        if (id == null) {
            return;
        }
        double wait = Math.min(2.0, Math.max(settings.idleS() / 2, 0.25));
        try {
            Task task = CompletableFuture.supplyAsync(() -> {
                try {
                    return client.cancelTask(new TaskIdParams(id), null);
                } catch (Exception e) {
                    throw new IllegalStateException(describe(e), e);
                }
            }).get((long) (wait * 1000), TimeUnit.MILLISECONDS);
            TaskState state = task.getStatus() == null ? null : task.getStatus().state();
            Main.log("cancel: task " + id + " is " + (state == null ? "?" : state.asString()));
        } catch (Exception e) {
            Main.log("cancel: task " + id + " not cancelled: " + describe(e));
        }
    }

    static String describe(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root && root.getMessage() == null) {
            root = root.getCause();
        }
        String message = root.getMessage();
        return root.getClass().getSimpleName() + (message == null ? "" : ": " + message);
    }
}
