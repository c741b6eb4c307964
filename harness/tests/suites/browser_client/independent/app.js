// The page's wiring: the composer, the one chat POST per user message, the stream, the history.
//
// Query parameters (docs/reference/browser-client-contract.md): `gateway` is the gateway's base
// URL (default: this page's origin) and `session` the session id (default: one made up for this
// tab). The chat is `POST {gateway}/chat/{session}` with the user's text as the body and is
// never sent twice for one message: no retry after a failure, nothing on tab visibility. When
// its stream stops before `done` or `error`, the drafts go, the messages are reloaded from
// `GET {gateway}/history/{session}` and the run is shown interrupted. A reload of the tab
// after a message was sent shows that history too (sessionStorage remembers the send).

import {
  applyFrame,
  emptyConversation,
  historyLoaded,
  messagesFromHistory,
  runEnded,
  sendRefused,
  streamClosed,
  streamOpened,
  userSent,
} from "./conversation.js";
import { readEventStream } from "./sse-reader.js";
import { ChatView } from "./view.js";

const params = new URLSearchParams(location.search);
const gateway = (params.get("gateway") || location.origin).replace(/\/+$/, "");
const session = params.get("session") || tabSession();
const runKey = `independent-page:run:${session}`;

const view = new ChatView(document.querySelector(".chat"));
const form = document.querySelector(".composer");
const prompt = form.querySelector("textarea");
const sendButton = form.querySelector(".send-button");

let conv = emptyConversation();
let busy = false;

function update(next) {
  conv = next;
  view.render(conv);
  document.documentElement.dataset.phase = conv.phase;
}

function tabSession() {
  const key = "independent-page:session";
  let id = sessionStorage.getItem(key);
  if (!id) {
    id = globalThis.crypto && crypto.randomUUID ? crypto.randomUUID() : `s-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    sessionStorage.setItem(key, id);
  }
  return id;
}

function setBusy(value) {
  busy = value;
  sendButton.disabled = value;
}

const chatUrl = () => `${gateway}/chat/${encodeURIComponent(session)}`;
const historyUrl = () => `${gateway}/history/${encodeURIComponent(session)}`;

/** Replace the messages with the session's stored events; false when they could not be read. */
async function reloadHistory() {
  try {
    const response = await fetch(historyUrl(), { cache: "no-store", headers: { Accept: "application/json" } });
    if (!response.ok) return false;
    const events = await response.json();
    if (!Array.isArray(events)) return false; // not a history: keep what is shown
    update(historyLoaded(conv, messagesFromHistory(events)));
    return true;
  } catch {
    return false;
  }
}

async function send(text) {
  setBusy(true);
  update(userSent(conv, text));
  sessionStorage.setItem(runKey, "open");
  try {
    let response;
    try {
      response = await fetch(chatUrl(), {
        method: "POST",
        headers: { "Content-Type": "text/plain;charset=UTF-8", Accept: "text/event-stream" },
        body: text,
        cache: "no-store",
      });
    } catch {
      // The request may have reached the gateway before the connection failed: it is not sent
      // again; what the session holds is what was said.
      update(streamClosed(conv, "The gateway could not be reached, or the connection broke before any answer"));
      await reloadHistory();
      return;
    }
    if (!response.ok || !response.body) {
      if (response.body) response.body.cancel().catch(() => {});
      update(sendRefused(conv, `The gateway did not take the message (HTTP ${response.status}).`));
      return;
    }
    update(streamOpened(conv));
    try {
      await readEventStream(response, (frame) => update(applyFrame(conv, frame)), () => conv.phase === "done");
    } catch {
      // The connection broke mid-stream: handled below like any stream that stops early.
    }
    const ended = runEnded(conv);
    update(streamClosed(conv));
    if (!ended) await reloadHistory();
  } finally {
    sessionStorage.setItem(runKey, "ended");
    setBusy(false);
  }
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  const text = prompt.value.trim();
  if (busy || text === "") return;
  prompt.value = "";
  send(text);
});

prompt.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    form.requestSubmit();
  }
});

async function restore() {
  const previous = sessionStorage.getItem(runKey);
  if (previous === null) return; // nothing was sent from this tab: a fresh conversation
  setBusy(true);
  if (previous === "open") {
    // The tab was reloaded while a run streamed: its drafts are gone and it never finished here.
    update(streamClosed({ ...conv, phase: "streaming" }, "The page was reloaded before the answer was complete"));
  }
  try {
    await reloadHistory();
  } finally {
    sessionStorage.setItem(runKey, "ended");
    setBusy(false);
  }
}

update(conv);
restore();
