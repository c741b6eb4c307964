// The AG-UI reference page: the seed's client rules ("append, then replace") on a gateway that
// streams AG-UI events instead of the seed's typed frames. One chat POST (an AG-UI
// RunAgentInput) read with fetch's stream reader and the reference's SSE parser; every event is
// a `data:` line of JSON whose `type` says what it is. The screen's elements are the reference
// page's, so the same selectors read it (docs/reference/browser-client-contract.md).
//
// AG-UI has no aggregate and no author: a message is built from its TEXT_MESSAGE_CONTENT deltas
// and closed by its TEXT_MESSAGE_END, several may be open at once (told apart by messageId),
// and the author shown is the role ("assistant", "user" for the user's own message).
//
//   TEXT_MESSAGE_START    opens a draft keyed by messageId
//   TEXT_MESSAGE_CONTENT  appends to that draft
//   TEXT_MESSAGE_END      the draft becomes a message (and goes: never both on screen)
//   TOOL_CALL_START       status "Calling <name>"; the drafts are cleared from the screen. The
//                         messages stay open (AG-UI may keep one open across a tool call): text
//                         after the call shows the draft again, and END keeps all of it
//   RUN_ERROR             drafts dropped, status "error", #error shown; the run is over
//   RUN_FINISHED          drafts dropped (a message still open was never finished), status
//                         "done"; the run is over
//
// A stream that ends before RUN_FINISHED or RUN_ERROR, cleanly or with a network error, is
// followed the seed's way: drop the drafts, reload the saved messages from the history, show
// the run as interrupted, never POST again (docs/explanation/browser-client-rules.md).
//
// Mutants, from ?bug= (each one change against the rules above):
//   append-both         at TEXT_MESSAGE_END the message is added but its draft stays
//   one-draft           every TEXT_MESSAGE_CONTENT goes into one draft, whatever its messageId
//   truncated-as-final  a stream that ends cleanly without RUN_FINISHED or RUN_ERROR commits
//                       its open drafts as messages and the status reads "done"

import { SseParser } from "../page/sse.mjs";

const BUGS = new Set(["append-both", "one-draft", "truncated-as-final"]);
const LOST = "The connection was lost; showing what was saved";
const FAILED = "The run failed";

function randomId(prefix) {
  if (globalThis.crypto?.randomUUID) return crypto.randomUUID();
  return `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

const query = new URLSearchParams(location.search);
const gateway = (query.get("gateway") ?? "").replace(/\/+$/, "");
const session = query.get("session") || randomId("s");
const bug = BUGS.has(query.get("bug")) ? query.get("bug") : null;
const chatUrl = `${gateway}/chat/${encodeURIComponent(session)}`;
const historyUrl = `${gateway}/history/${encodeURIComponent(session)}`;

// The chat: the messages on screen, the open AG-UI messages (messageId -> {author, text,
// shown}; a shown one with text is a draft on screen), the status and the error's text.
const chat = {
  messages: [],
  open: new Map(),
  status: "",
  error: "",
  calling: [], // the tools named since the last text, so a call of several shows them all
};

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function entry(className, item) {
  const node = element("div", className);
  node.dataset.author = item.author;
  node.append(element("span", "author", item.author), element("span", "text", item.text));
  return node;
}

// Draws the chat; each element is replaced in one go, so an observer sees whole states only.
function render() {
  const drafts = [...chat.open.values()].filter((m) => m.shown && m.text !== "");
  const messages = chat.messages.map((m) => entry("message", m));
  document.getElementById("messages").replaceChildren(...messages);
  document.getElementById("drafts").replaceChildren(...drafts.map((d) => entry("draft", d)));
  document.getElementById("status").textContent = chat.status;
  const error = document.getElementById("error");
  error.hidden = chat.error === "";
  error.textContent = chat.error;
}

function str(value) {
  return typeof value === "string" ? value : "";
}

// The key an open message is kept under: its messageId (one-draft: one key for all).
function key(messageId) {
  return bug === "one-draft" ? "the-draft" : str(messageId);
}

// Applies one AG-UI event; true when it ends the run.
function apply(event) {
  switch (event.type) {
    case "TEXT_MESSAGE_START": {
      chat.calling = [];
      const k = key(event.messageId);
      if (!chat.open.has(k)) {
        chat.open.set(k, { author: str(event.role) || "assistant", text: "", shown: true });
      }
      return false;
    }
    case "TEXT_MESSAGE_CONTENT": {
      chat.calling = [];
      const k = key(event.messageId);
      let message = chat.open.get(k);
      if (message === undefined) {
        // Content without its START: the message is open from here.
        message = { author: "assistant", text: "", shown: true };
        chat.open.set(k, message);
      }
      message.text += str(event.delta);
      message.shown = true;
      return false;
    }
    case "TEXT_MESSAGE_END": {
      const k = key(event.messageId);
      const message = chat.open.get(k);
      if (message === undefined) return false;
      if (message.text !== "") chat.messages.push({ author: message.author, text: message.text });
      if (bug !== "append-both") chat.open.delete(k);
      return false;
    }
    case "TOOL_CALL_START": {
      const name = str(event.toolCallName);
      if (name !== "" && !chat.calling.includes(name)) chat.calling.push(name);
      chat.status = `Calling ${chat.calling.join(", ")}`;
      // The seed's "a tool call clears the draft": off the screen, still open on the wire.
      for (const message of chat.open.values()) message.shown = false;
      return false;
    }
    case "RUN_ERROR": {
      chat.open.clear();
      chat.status = "error";
      const why = str(event.message);
      chat.error = why === "" ? FAILED : `${FAILED}: ${why}`;
      return true;
    }
    case "RUN_FINISHED":
      chat.open.clear();
      chat.status = "done";
      return true;
    default: // RUN_STARTED, TOOL_CALL_ARGS, TOOL_CALL_END, TOOL_CALL_RESULT, and the rest
      return false;
  }
}

// The AG-UI RunAgentInput that starts the run.
function runInput(text) {
  return {
    threadId: session,
    runId: randomId("run"),
    messages: [{ id: randomId("msg"), role: "user", content: text }],
    tools: [],
    context: [],
    state: {},
    forwardedProps: {},
  };
}

// Reads the chat answer: "final" when RUN_FINISHED or RUN_ERROR came, "clean" when the body
// ended before either, "cut" when the network failed first. Draws once per piece read.
async function read(response) {
  if (!response.body) return "clean";
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let final = false;
  const parser = new SseParser((sse) => {
    if (final) return;
    let event;
    try {
      event = JSON.parse(sse.data);
    } catch {
      return; // an event the page cannot read leaves the chat as it was
    }
    if (event && typeof event === "object") final = apply(event);
  });
  try {
    while (!final) {
      const { value, done } = await reader.read();
      if (done) {
        parser.push(decoder.decode());
        parser.end();
        render();
        break;
      }
      parser.push(decoder.decode(value, { stream: true }));
      render();
    }
  } catch {
    render();
    if (!final) return "cut";
  }
  if (!final) return "clean";
  reader.cancel().catch(() => {});
  return "final";
}

// The saved conversation as messages: ADK events (a JSON list, or {events: [...]}); each
// finished event with text becomes a message, its text parts joined. The author shown is the
// role, as in the live run: "user" for the user's event, "assistant" for every other.
function historyMessages(body) {
  const events = Array.isArray(body) ? body : Array.isArray(body?.events) ? body.events : [];
  const messages = [];
  for (const event of events) {
    if (!event || event.partial === true) continue;
    const parts = Array.isArray(event.content?.parts) ? event.content.parts : [];
    const texts = parts.filter((p) => typeof p?.text === "string").map((p) => p.text);
    if (texts.length === 0) continue;
    const user = event.author === "user" || (!event.author && event.content?.role === "user");
    messages.push({ author: user ? "user" : "assistant", text: texts.join("") });
  }
  return messages;
}

// The seed's way back after a lost stream: drop the drafts, show the saved messages (what is
// on screen stays when the history cannot be read), say the run was interrupted.
async function reconnect() {
  chat.open.clear();
  render();
  try {
    const response = await fetch(historyUrl, { headers: { Accept: "application/json" } });
    if (response.ok) chat.messages = historyMessages(await response.json());
  } catch {
    // the history is out of reach too: keep the screen's messages
  }
  chat.open.clear();
  chat.status = "interrupted";
  chat.error = LOST;
  render();
}

// The truncated-as-final mutant: a stream that just stopped is taken for a finished run.
function commitOpen() {
  for (const message of chat.open.values()) {
    if (message.text !== "") chat.messages.push({ author: message.author, text: message.text });
  }
  chat.open.clear();
  chat.status = "done";
  render();
}

async function run(text) {
  let response;
  try {
    response = await fetch(chatUrl, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(runInput(text)),
    });
  } catch {
    await reconnect();
    return;
  }
  if (!response.ok) {
    response.body?.cancel().catch(() => {});
    chat.open.clear();
    chat.status = "error";
    chat.error = `${FAILED}: the gateway answered ${response.status}`;
    render();
    return;
  }
  const outcome = await read(response);
  if (outcome === "final") return;
  if (bug === "truncated-as-final" && outcome === "clean") {
    commitOpen();
    return;
  }
  await reconnect();
}

// The form: a non-empty prompt is shown as the user's message, then sent; send stays disabled
// until the run is over.
const form = document.getElementById("form");
const prompt = document.getElementById("prompt");
const send = document.getElementById("send");
form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = prompt.value;
  if (text.trim() === "" || send.disabled) return;
  prompt.value = "";
  send.disabled = true;
  chat.messages.push({ author: "user", text });
  render();
  try {
    await run(text);
  } finally {
    send.disabled = false;
  }
});
render();
document.body.dataset.ready = "true";
