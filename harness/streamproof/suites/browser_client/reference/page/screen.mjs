// What the reference pages share: the query parameters, the chat state and its rendering, the
// send form, and the seed's way back after a lost stream (drop the draft, reload the saved
// messages from the gateway's history). The transports (app.mjs: fetch and our own parser;
// fes.mjs: @microsoft/fetch-event-source) differ; the screen is the same.
// The elements and what the harness reads from them: docs/reference/browser-client-contract.md.

import { initialState, reduce } from "../reducer.mjs";

const LOST = "The connection was lost; showing what was saved";
const FAILED = "The run failed";

function randomId() {
  if (globalThis.crypto?.randomUUID) return crypto.randomUUID();
  return `s-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

// gateway, session and bug from the page's URL. The bug (a mutant's name) is set where the
// reducer reads it; the transport mutants are read by the page from `bug` too.
export function readParams() {
  const query = new URLSearchParams(location.search);
  const gateway = (query.get("gateway") ?? "").replace(/\/+$/, "");
  const session = query.get("session") || randomId();
  const bug = query.get("bug") || null;
  globalThis.STREAMPROOF_BUG = bug;
  const path = encodeURIComponent(session);
  return {
    gateway,
    session,
    bug,
    chatUrl: `${gateway}/chat/${path}`,
    historyUrl: `${gateway}/history/${path}`,
  };
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function entry(className, item) {
  const author = typeof item?.author === "string" ? item.author : "";
  const node = element("div", className);
  node.dataset.author = author;
  node.append(element("span", "author", author), element("span", "text", String(item?.text ?? "")));
  return node;
}

// The draft as a list: null, one {author, text}, or a list of them.
function drafts(draft) {
  if (draft === null || draft === undefined) return [];
  return Array.isArray(draft) ? draft : [draft];
}

export function failed(status) {
  return status === "error" || status === "interrupted";
}

// Draws the state; every element is replaced in one go, so an observer sees whole states only.
export function render(state) {
  document.getElementById("messages").replaceChildren(...state.messages.map((m) => entry("message", m)));
  document.getElementById("drafts").replaceChildren(...drafts(state.draft).map((d) => entry("draft", d)));
  document.getElementById("status").textContent = state.status ?? "";
  const error = document.getElementById("error");
  error.hidden = !failed(state.status);
  error.textContent = state.status === "interrupted" ? LOST : state.status === "error" ? FAILED : "";
}

// The saved conversation as messages: the history is ADK events (a JSON list, or
// {events: [...]}); each finished event with text becomes {author, text}, its text parts joined.
export function historyMessages(body) {
  const events = Array.isArray(body) ? body : Array.isArray(body?.events) ? body.events : [];
  const messages = [];
  for (const event of events) {
    if (!event || event.partial === true) continue;
    const parts = Array.isArray(event.content?.parts) ? event.content.parts : [];
    const texts = parts.filter((p) => typeof p?.text === "string").map((p) => p.text);
    if (texts.length === 0) continue;
    messages.push({ author: event.author ?? event.content?.role ?? "", text: texts.join("") });
  }
  return messages;
}

// The saved messages, or null when the history cannot be read.
export async function loadHistory(url) {
  try {
    const response = await fetch(url, { headers: { Accept: "application/json" } });
    if (!response.ok) return null;
    return historyMessages(await response.json());
  } catch {
    return null;
  }
}

// The chat's state and the one place it changes: every change is drawn at once.
export class Chat {
  constructor() {
    this.state = { ...initialState };
  }

  show(next) {
    this.state = next;
    render(next);
  }

  addUserMessage(text) {
    const s = this.state;
    this.show({ ...s, messages: [...s.messages, { author: "user", text }] });
  }

  apply(frame) {
    this.show(reduce(this.state, frame));
  }

  // The gateway refused the run (a non-2xx answer).
  fail() {
    this.show({ ...this.state, draft: null, status: "error" });
  }

  // The seed's reconnect: discard the draft, replace the messages with the history's, and say
  // the run was interrupted (never done). keepDraft is the replay-deltas-on-reconnect mutant.
  async reconnect(historyUrl, { keepDraft = false } = {}) {
    const saved = await loadHistory(historyUrl);
    const s = this.state;
    const next = { ...s, draft: keepDraft ? s.draft : null, status: "interrupted" };
    delete next.staleDraft;
    if (saved !== null) next.messages = saved;
    this.show(next);
  }

  // The truncated-as-final mutant: a stream that just stopped is taken for a finished answer.
  promoteDraft() {
    const s = this.state;
    const kept = drafts(s.draft);
    this.show({ ...s, messages: [...s.messages, ...kept], draft: null, status: "done" });
  }
}

// Wires the form: a non-empty prompt is added to the chat as the user's message, then
// run(text) sends it; send is disabled until the run is over.
export function onSend(chat, run) {
  const form = document.getElementById("form");
  const prompt = document.getElementById("prompt");
  const send = document.getElementById("send");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = prompt.value;
    if (text.trim() === "" || send.disabled) return;
    prompt.value = "";
    send.disabled = true;
    chat.addUserMessage(text);
    try {
      await run(text);
    } finally {
      send.disabled = false;
    }
  });
  document.body.dataset.ready = "true";
}
