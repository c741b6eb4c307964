// The AI SDK's own reading of a captured UI message stream (the `ai` package).
//
// stdin: the stream as the gateway sent it (SSE). stdout: one JSON document
//   {library, version, events, findings: [{kind, rule, message, index}],
//    errors_reported: [{index, text}], reduced_through, messages: [{id, role, parts}]}
// where index is the 0-based position of the event among the stream's events ([DONE] counts).
//
// Two steps, each the library's own code:
// 1. parseJsonEventStream with uiMessageChunkSchema: what DefaultChatTransport (useChat's transport)
//    does with a response body. Every event is parsed; each failure is a finding of kind "schema".
//    The library skips `[DONE]` wherever it stands and reads on after it.
// 2. readUIMessageStream over the chunks that parsed, up to the first that did not (the transport
//    throws there, so useChat never reduces past it): the chunks become UI messages. A chunk the
//    reducer rejects (a delta for a part never started, a tool output for an unknown call) is a
//    finding of kind "stream"; the reducer stops there, as useChat does. An `error` chunk is the
//    server reporting a failure, not a broken stream: it is listed under errors_reported.
import { EventSourceParserStream } from "eventsource-parser/stream";
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema } from "ai";
import { emit, installedVersion, quietConsole, readStdin } from "./lib.mjs";

const DONE = "[DONE]";

function streamOf(items) {
  return new ReadableStream({
    start(controller) {
      for (const item of items) controller.enqueue(item);
      controller.close();
    },
  });
}

async function collect(stream) {
  const items = [];
  for await (const item of stream) items.push(item);
  return items;
}

/** The events' data, split by the same SSE parser the library uses. */
async function eventData(bytes) {
  const events = streamOf([bytes])
    .pipeThrough(new TextDecoderStream())
    .pipeThrough(new EventSourceParserStream());
  return (await collect(events)).map((event) => event.data);
}

/** zod's issues, flattened to "path: message" (a union's members each say why they failed). */
function describeIssues(issues, prefix = "") {
  const lines = [];
  for (const issue of issues ?? []) {
    const path = [prefix, ...(issue.path ?? [])].filter((p) => p !== "").join(".");
    if (issue.code === "invalid_union" && Array.isArray(issue.errors)) {
      // Only the member whose `type` literal matched says something about this chunk; when no
      // member's type matched, the type itself is unknown.
      const matching = issue.errors.filter(
        (member) => !member.some((i) => (i.path ?? []).join(".") === "type"),
      );
      if (matching.length === 0) {
        lines.push(`${path ? `${path}: ` : ""}no chunk type of the UI message stream matches`);
      } else {
        for (const member of matching) lines.push(...describeIssues(member, path));
      }
    } else {
      lines.push(`${path ? `${path}: ` : ""}${issue.message}`);
    }
  }
  return lines;
}

function schemaMessage(error) {
  const issues = error?.cause?.issues;
  if (Array.isArray(issues)) return describeIssues(issues).join("; ");
  return String(error?.message ?? error);
}

/** Reduce chunks with readUIMessageStream: the messages, and the error that stopped it, if any. */
async function reduce(chunks) {
  const errorTexts = new Set(chunks.filter((c) => c.type === "error").map((c) => c.errorText));
  let failure = null;
  const onError = (error) => {
    // An `error` chunk arrives as a plain Error carrying its errorText; anything else was thrown
    // by the reducer and ended the stream.
    const reported = error?.constructor === Error && errorTexts.has(error.message);
    if (!reported && failure === null) failure = error;
  };
  const byId = new Map();
  for await (const snapshot of readUIMessageStream({ stream: streamOf(chunks), onError })) {
    byId.set(snapshot.id, snapshot);
  }
  return { messages: [...byId.values()], failure };
}

/** The smallest number of chunks whose reduction fails: the chunk at that count - 1 failed. */
async function failingCount(chunks) {
  let low = 1;
  let high = chunks.length;
  while (low < high) {
    const mid = Math.floor((low + high) / 2);
    if ((await reduce(chunks.slice(0, mid))).failure !== null) high = mid;
    else low = mid + 1;
  }
  return low;
}

function partOf(part) {
  const out = { type: part.type };
  if (typeof part.text === "string") out.text = part.text;
  if (typeof part.state === "string") out.state = part.state;
  if (typeof part.toolCallId === "string") out.tool_call_id = part.toolCallId;
  return out;
}

async function main() {
  quietConsole();
  const bytes = await readStdin();
  const data = await eventData(bytes);
  const results = await collect(
    parseJsonEventStream({ stream: streamOf([bytes]), schema: uiMessageChunkSchema }),
  );
  const indices = data.flatMap((d, i) => (d === DONE ? [] : [i]));
  if (indices.length !== results.length) {
    throw new Error(
      `the SSE parser found ${indices.length} chunk events but parseJsonEventStream gave ${results.length} results`,
    );
  }

  const findings = [];
  const chunks = [];
  const chunkIndex = [];
  let transportStopped = false;
  results.forEach((result, k) => {
    if (!result.success) {
      findings.push({
        kind: "schema",
        rule: result.error?.name ?? "Error",
        message: schemaMessage(result.error),
        index: indices[k],
      });
      transportStopped = true;
    } else if (!transportStopped) {
      chunks.push(result.value);
      chunkIndex.push(indices[k]);
    }
  });

  let { messages, failure } = await reduce(chunks);
  let reducedCount = chunks.length;
  if (failure !== null) {
    const count = await failingCount(chunks);
    reducedCount = count - 1;
    ({ messages } = await reduce(chunks.slice(0, reducedCount)));
    findings.push({
      kind: "stream",
      rule: failure.name ?? "Error",
      message: String(failure.message ?? failure),
      index: chunkIndex[count - 1],
    });
  }
  const errorsReported = chunks
    .slice(0, reducedCount)
    .flatMap((chunk, k) =>
      chunk.type === "error" ? [{ index: chunkIndex[k], text: chunk.errorText }] : [],
    );

  findings.sort((a, b) => a.index - b.index);
  emit({
    library: "ai",
    version: installedVersion("ai"),
    events: data.length,
    findings,
    errors_reported: errorsReported,
    reduced_through: reducedCount > 0 ? chunkIndex[reducedCount - 1] : null,
    messages: messages.map((m) => ({ id: m.id, role: m.role, parts: m.parts.map(partOf) })),
  });
}

main().catch((error) => {
  process.stderr.write(`ai-sdk oracle: ${error?.stack ?? error}\n`);
  process.exit(2);
});
