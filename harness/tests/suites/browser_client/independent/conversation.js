// What the page shows, as plain data, and how each gateway frame changes it.
//
// The rules are the client rules of docs/reference/browser-client-contract.md: a `delta`
// appends to its author's draft; a `message` is the record and replaces its author's draft
// (the two are never shown together); `tool_call` clears every draft and says which tools are
// being called; `error` and `done` clear every draft, and an `error` marks the run failed.
// Drafts are keyed by author, so two authors can each have one at the same time.

/**
 * @typedef {{author: string, text: string}} Said
 * @typedef {{
 *   messages: Said[],
 *   drafts: Map<string, string>,
 *   phase: "idle" | "sending" | "streaming" | "done" | "failed" | "interrupted",
 *   status: string,
 *   problem: string,
 *   calls: {index: number, names: string[]}[],
 * }} Conversation
 *
 * `calls` are the tool calls of the conversation, each placed after `index` messages.
 */

/** @returns {Conversation} */
export function emptyConversation() {
  return { messages: [], drafts: new Map(), phase: "idle", status: "", problem: "", calls: [] };
}

function parseData(data) {
  try {
    const value = JSON.parse(data);
    return value !== null && typeof value === "object" ? value : {};
  } catch {
    return null;
  }
}

function asText(value) {
  return typeof value === "string" ? value : value == null ? "" : String(value);
}

/** The user sent `text`: it is shown as their message and a run starts. */
export function userSent(conv, text) {
  return {
    ...conv,
    messages: [...conv.messages, { author: "user", text }],
    drafts: new Map(),
    phase: "sending",
    status: "Sending…",
    problem: "",
  };
}

/** The chat POST answered with a stream. */
export function streamOpened(conv) {
  return { ...conv, phase: "streaming", status: "Waiting for the answer…" };
}

/**
 * One frame of the run: `{type, data}` with `data` the frame's JSON text.
 * Frames after `done` belong to no run and are ignored.
 */
export function applyFrame(conv, frame) {
  if (conv.phase === "done" || conv.phase === "idle") return conv;
  const body = parseData(frame.data);
  if (body === null) return conv; // not JSON: nothing can be read from it
  switch (frame.type) {
    case "delta": {
      const author = asText(body.author);
      const text = asText(body.text);
      if (text === "" && !conv.drafts.has(author)) return conv; // no words yet: no draft to show
      const drafts = new Map(conv.drafts);
      drafts.set(author, (drafts.get(author) ?? "") + text);
      return { ...conv, drafts };
    }
    case "message": {
      const author = asText(body.author);
      const drafts = new Map(conv.drafts);
      drafts.delete(author);
      return { ...conv, drafts, messages: [...conv.messages, { author, text: asText(body.text) }] };
    }
    case "tool_call": {
      const names = Array.isArray(body.names) ? body.names.map(asText) : [];
      return {
        ...conv,
        drafts: new Map(),
        calls: [...conv.calls, { index: conv.messages.length, names }],
        status: conv.phase === "failed" ? conv.status : `Calling ${names.join(", ")}`,
      };
    }
    case "error": {
      const code = body.code !== undefined ? ` (${asText(body.code)})` : "";
      return {
        ...conv,
        drafts: new Map(),
        phase: "failed",
        status: "Failed",
        problem: `The run failed${code}. Nothing more will arrive for this message.`,
      };
    }
    case "done":
      if (conv.phase === "failed") return { ...conv, drafts: new Map() }; // an error stays an error
      return { ...conv, drafts: new Map(), phase: "done", status: "Done" };
    default:
      return conv; // tool_result and unknown frames change nothing on screen
  }
}

/** Whether the run has told its end (`done` or `error`). */
export function runEnded(conv) {
  return conv.phase === "done" || conv.phase === "failed";
}

/**
 * The stream closed, cleanly or not. Drafts never outlive their stream: whatever text was
 * still streaming is dropped. A stream that closed before `done` or `error` is interrupted.
 */
export function streamClosed(conv, why = "The connection closed before the answer was complete") {
  if (runEnded(conv)) return { ...conv, drafts: new Map() };
  return {
    ...conv,
    drafts: new Map(),
    phase: "interrupted",
    status: "Interrupted",
    problem: `${why}; showing the saved conversation.`,
  };
}

/** The chat POST did not give a stream (refused, or the gateway could not be reached). */
export function sendRefused(conv, why) {
  return { ...conv, drafts: new Map(), phase: "failed", status: "Failed", problem: why };
}

/** The session's stored events replace the messages and calls: they are the record. */
export function historyLoaded(conv, { messages, calls }) {
  return { ...conv, messages, calls, drafts: new Map() };
}

/**
 * The session's stored ADK events as messages: one per event with text, in order. Function
 * calls and responses, thoughts and partial events (which a history should not hold) carry no
 * message text.
 * @returns {{messages: Said[], calls: {index: number, names: string[]}[]}}
 */
export function messagesFromHistory(events) {
  const messages = [];
  const calls = [];
  if (!Array.isArray(events)) return { messages, calls };
  for (const event of events) {
    if (event === null || typeof event !== "object" || event.partial === true) continue;
    const parts = event.content && Array.isArray(event.content.parts) ? event.content.parts : [];
    const text = parts
      .filter((p) => p && typeof p.text === "string" && p.thought !== true)
      .map((p) => p.text)
      .join("");
    const names = parts
      .filter((p) => p && p.functionCall && typeof p.functionCall === "object")
      .map((p) => asText(p.functionCall.name));
    const author = asText(event.author || (event.content && event.content.role) || "");
    if (text !== "") messages.push({ author, text });
    if (names.length > 0) calls.push({ index: messages.length, names });
  }
  return { messages, calls };
}
