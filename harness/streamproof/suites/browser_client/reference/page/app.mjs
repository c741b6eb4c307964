// The reference page's transport: one chat POST read with fetch's stream reader and our own
// SSE parser; each event goes through the reducer and is drawn. The run ends at a done or
// error frame. A stream that ends before one (cleanly or not) is followed the seed's way: drop
// the draft, reload the saved messages from the history, show the run as interrupted, never
// POST the chat again (docs/reference/browser-client-contract.md).
//
// Transport mutants, from ?bug= (the reducer's own mutants are read by the reducer):
//   replay-deltas-on-reconnect  the draft stays on screen under the reloaded history
//   re-post-on-reconnect        the chat is POSTed again and that stream read instead
//   truncated-as-final          a stream that ends cleanly without done or error is taken as
//                               finished: its draft becomes a message and the status "done"

import { Chat, onSend, readParams } from "./screen.mjs";
import { SseParser } from "./sse.mjs";

const { chatUrl, historyUrl, bug } = readParams();
const chat = new Chat();
const REPOSTS = 3; // re-post-on-reconnect stops after this many, so it cannot loop for ever

function post(text) {
  return fetch(chatUrl, {
    method: "POST",
    headers: { "Content-Type": "text/plain", Accept: "text/event-stream" },
    body: text,
  });
}

// Reads one chat answer: "final" when a done or error frame came, "clean" when the body ended
// before one, "cut" when the network failed first.
async function read(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let final = false;
  const parser = new SseParser((event) => {
    if (final) return;
    chat.apply({ type: event.type, data: event.data, id: event.id });
    final = event.type === "done" || event.type === "error";
  });
  try {
    while (!final) {
      const { value, done } = await reader.read();
      if (done) {
        parser.push(decoder.decode());
        parser.end();
        break;
      }
      parser.push(decoder.decode(value, { stream: true }));
    }
  } catch {
    if (!final) return "cut";
  }
  if (!final) return "clean";
  reader.cancel().catch(() => {});
  return "final";
}

// One exchange with the gateway: "final", "refused" (a non-2xx answer), "clean" or "cut".
async function exchange(text) {
  let response;
  try {
    response = await post(text);
  } catch {
    return "cut";
  }
  if (!response.ok) {
    response.body?.cancel().catch(() => {});
    chat.fail();
    return "refused";
  }
  return read(response);
}

async function run(text) {
  for (let attempt = 0; ; attempt++) {
    const outcome = await exchange(text);
    if (outcome === "final" || outcome === "refused") return;
    if (bug === "truncated-as-final" && outcome === "clean") {
      chat.promoteDraft();
      return;
    }
    if (bug === "re-post-on-reconnect" && attempt < REPOSTS) continue;
    await chat.reconnect(historyUrl, { keepDraft: bug === "replay-deltas-on-reconnect" });
    return;
  }
}

onSend(chat, run);
chat.show(chat.state);
