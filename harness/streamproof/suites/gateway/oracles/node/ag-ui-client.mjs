// The official AG-UI client's own reading of a captured AG-UI stream (@ag-ui/client).
//
// stdin: the stream as the gateway sent it (SSE, `data: {...}` blocks). stdout: one JSON document
//   {library, version, events, findings: [{kind, rule, message, index}], messages: [...]}
// where index is the 0-based position of the event among the stream's events.
//
// The stream is run through HttpAgent.runAgent, the client an application uses, with a fetch that
// answers with the capture: its SSE parsing, the event schema (enforceEvents), chunk expansion,
// the verify middleware's ordering rules and the default reducer all apply, exactly as for a live
// endpoint. The capture is handed over one event at a time, and the next only after everything
// the previous one set off has run, so whatever the client says is known to be about that event:
// - kind "error": the run failed there (rule: the error's name, e.g. AGUIError from verify,
//   ZodError from the event schema, SyntaxError for data that is not JSON); the client stops.
// - kind "warning": the client logged a deviation there and went on (an unknown event dropped,
//   an unknown key stripped, content for a message it does not know).
// messages: what agent.messages holds at the end (what an app would render).
import { HttpAgent } from "@ag-ui/client";
import { emit, installedVersion, quietConsole, readStdin, settle } from "./lib.mjs";

/** The capture cut into SSE blocks the way the client's parser cuts it (at a blank line). */
function blocks(text) {
  const parts = text.split(/\n\n/);
  const tail = parts.pop();
  const out = parts.map((p) => `${p}\n\n`);
  if (tail !== "") out.push(tail);
  return out;
}

/** Whether the client would dispatch this block as an event (it has a `data:` line). */
function isEvent(block) {
  return block.split("\n").some((line) => line.startsWith("data:"));
}

/** The error's class (AGUIError, ZodError, SyntaxError): the client's errors carry no code. */
function nameOf(error) {
  const name = error?.constructor?.name;
  return typeof name === "string" && name !== "Object" ? name : String(error?.name ?? "Error");
}

/** The error's message; a ZodError's issues as "path: message" (its message is their JSON). */
function messageOfError(error) {
  if (Array.isArray(error?.issues)) {
    return error.issues
      .map((i) => `${(i.path ?? []).join(".") || "(event)"}: ${i.message}`)
      .join("; ");
  }
  return String(error?.message ?? error);
}

function messageOf(m) {
  const out = { id: m.id, role: m.role };
  if (typeof m.content === "string") out.content = m.content;
  else if (m.content != null) out.content = JSON.stringify(m.content);
  if (Array.isArray(m.toolCalls)) {
    out.tool_calls = m.toolCalls.map((c) => ({
      id: c.id,
      name: c.function?.name,
      arguments: c.function?.arguments,
    }));
  }
  if (typeof m.toolCallId === "string") out.tool_call_id = m.toolCallId;
  return out;
}

async function main() {
  delete process.env.SUPPRESS_TRANSFORMATION_WARNINGS;
  const text = new TextDecoder().decode(await readStdin());
  const parts = blocks(text);
  const encoder = new TextEncoder();

  const findings = [];
  let current = -1; // the index of the event being handed to the client
  let events = 0;
  quietConsole();
  console.warn = (...args) => {
    const message = args.map(String).join(" ");
    // The client tags most of its warnings with the stage that logged them: [ag-ui][enforce].
    const tag = /^\[ag-ui\]\[([\w-]+)\]/.exec(message);
    findings.push({ kind: "warning", rule: tag ? tag[1] : "warn", message, index: current });
  };

  let next = 0;
  const body = new ReadableStream(
    {
      async pull(controller) {
        await settle();
        await settle();
        if (next >= parts.length) {
          controller.close();
          return;
        }
        const block = parts[next++];
        if (isEvent(block)) current = events++;
        controller.enqueue(encoder.encode(block));
      },
    },
    { highWaterMark: 0 },
  );
  const agent = new HttpAgent({
    url: "http://127.0.0.1/captured-stream",
    fetch: async () =>
      new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } }),
  });
  try {
    await agent.runAgent();
  } catch (error) {
    findings.push({ kind: "error", rule: nameOf(error), message: messageOfError(error), index: current });
  }
  // Count the events the client never read (it stops at an error), so `events` is the stream's.
  for (; next < parts.length; next++) if (isEvent(parts[next])) events++;
  emit({
    library: "@ag-ui/client",
    version: installedVersion("@ag-ui/client"),
    events,
    findings,
    messages: agent.messages.map(messageOf),
  });
}

main().catch((error) => {
  process.stderr.write(`ag-ui-client oracle: ${error?.stack ?? error}\n`);
  process.exit(2);
});
