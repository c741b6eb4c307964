// The same screen and reducer as the reference page, with @microsoft/fetch-event-source as the
// transport (the import map in fes-*.html maps its name to the locked copy under /node/).
//
// start("defaults"): the library as its README shows it, {method, body, headers, onmessage}
//   and nothing else. Its defaults then decide what happens on a cut stream (it retries after
//   a second, POSTing the chat again with Last-Event-ID) and when a hidden tab becomes visible
//   again (it aborts the request on hide and POSTs the chat again on show).
// start("configured"): openWhenHidden (no re-POST on show), an onopen that refuses a non-2xx
//   answer, an onclose and an onerror that throw (no retry), and the reference page's way back
//   after a lost stream: reload the history, show the run as interrupted
//   (docs/reference/browser-client-contract.md).

import { fetchEventSource } from "@microsoft/fetch-event-source";
import { Chat, onSend, readParams } from "./screen.mjs";

const { chatUrl, historyUrl } = readParams();
const chat = new Chat();

class Refused extends Error {}
class EndedEarly extends Error {}

function isFinal(type) {
  return type === "done" || type === "error";
}

// The library also calls onmessage for a blank line with nothing before it; that is no event.
function frameOf(event) {
  if (event.event === "" && event.data === "") return null;
  return { type: event.event || "message", data: event.data, id: event.id };
}

async function runWithDefaults(text) {
  let final = false;
  try {
    await fetchEventSource(chatUrl, {
      method: "POST",
      body: text,
      headers: { "Content-Type": "text/plain" },
      onmessage(event) {
        const frame = frameOf(event);
        if (final || frame === null) return;
        chat.apply(frame);
        final = isFinal(frame.type);
      },
    });
  } catch {
    chat.fail();
  }
}

async function runConfigured(text) {
  const stop = new AbortController();
  let final = false;
  try {
    await fetchEventSource(chatUrl, {
      method: "POST",
      body: text,
      headers: { "Content-Type": "text/plain" },
      signal: stop.signal,
      openWhenHidden: true,
      async onopen(response) {
        if (!response.ok) throw new Refused(`the gateway answered ${response.status}`);
      },
      onmessage(event) {
        const frame = frameOf(event);
        if (final || frame === null) return;
        chat.apply(frame);
        final = isFinal(frame.type);
        if (final) stop.abort(); // the run is over: read no further
      },
      onclose() {
        if (!final) throw new EndedEarly("the stream ended before done or error");
      },
      onerror(err) {
        throw err; // no retry: a retry would POST the chat again
      },
    });
  } catch (err) {
    if (err instanceof Refused) chat.fail();
    else await chat.reconnect(historyUrl);
  }
}

export function start(mode) {
  onSend(chat, mode === "configured" ? runConfigured : runWithDefaults);
  chat.show(chat.state);
}
