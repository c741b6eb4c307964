// Server-Sent Events, decoded by hand from a fetch() body.
//
// The parser is a small state machine fed one character at a time, so a chunk boundary can fall
// anywhere (inside a field name, between a CR and its LF, in the middle of a multi-byte
// character: the TextDecoder holds those back). It follows the WHATWG event-stream rules:
// a line ends at CRLF, LF or a lone CR; a line that starts with ":" is a comment; a field
// without a colon has an empty value; one space after the colon is dropped; `data` lines are
// joined with "\n"; `id` sets the last event id (unless it holds a NUL); `retry` takes only
// ASCII digits; a blank line dispatches the event, which is dropped when it carries no data;
// an event still open when the stream ends is never dispatched.

const AT_LINE_START = 0; // nothing of the current line read yet
const IN_NAME = 1; // reading the field name
const AFTER_COLON = 2; // just read the colon: one space may follow and is not part of the value
const IN_VALUE = 3; // reading the field value
const IN_COMMENT = 4; // skipping a comment line

export class EventStreamParser {
  /** @param {(event: {type: string, data: string, id: string}) => void} onEvent */
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.lastEventId = "";
    this.retryMs = null;
    this.state = AT_LINE_START;
    this.swallowLF = false; // the previous character was a CR: an LF right after it is the same line end
    this.name = "";
    this.value = "";
    this.dataLines = null; // null: no `data` field in this event yet
    this.eventType = "";
  }

  /** Feed decoded text; events are dispatched synchronously, in order. */
  push(text) {
    for (const ch of text) {
      if (this.swallowLF) {
        this.swallowLF = false;
        if (ch === "\n") continue;
      }
      if (ch === "\r" || ch === "\n") {
        this.swallowLF = ch === "\r";
        this.endLine();
        continue;
      }
      switch (this.state) {
        case AT_LINE_START:
          if (ch === ":") {
            this.state = IN_COMMENT;
          } else {
            this.name = ch;
            this.state = IN_NAME;
          }
          break;
        case IN_NAME:
          if (ch === ":") this.state = AFTER_COLON;
          else this.name += ch;
          break;
        case AFTER_COLON:
          this.state = IN_VALUE;
          if (ch !== " ") this.value += ch;
          break;
        case IN_VALUE:
          this.value += ch;
          break;
        case IN_COMMENT:
          break;
      }
    }
  }

  endLine() {
    const state = this.state;
    this.state = AT_LINE_START;
    if (state === AT_LINE_START) {
      this.dispatch();
      return;
    }
    if (state !== IN_COMMENT) this.applyField(this.name, this.value);
    this.name = "";
    this.value = "";
  }

  applyField(name, value) {
    switch (name) {
      case "event":
        this.eventType = value;
        break;
      case "data":
        if (this.dataLines === null) this.dataLines = [];
        this.dataLines.push(value);
        break;
      case "id":
        if (!value.includes("\u0000")) this.lastEventId = value;
        break;
      case "retry":
        if (/^[0-9]+$/.test(value)) this.retryMs = Number.parseInt(value, 10);
        break;
      default:
        break; // unknown fields are ignored
    }
  }

  dispatch() {
    const lines = this.dataLines;
    const type = this.eventType || "message";
    this.dataLines = null;
    this.eventType = "";
    if (lines === null) return;
    this.onEvent({ type, data: lines.join("\n"), id: this.lastEventId });
  }
}

/**
 * Read a fetch() Response body as an event stream until it ends.
 * Resolves when the body ends cleanly; rejects when reading it fails (the connection broke).
 * `shouldStop()` is asked after every chunk: true cancels the body and resolves.
 */
export async function readEventStream(response, onEvent, shouldStop = () => false) {
  const parser = new EventStreamParser(onEvent);
  const decoder = new TextDecoder("utf-8");
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        parser.push(decoder.decode());
        return parser;
      }
      parser.push(decoder.decode(value, { stream: true }));
      if (shouldStop()) {
        await reader.cancel().catch(() => {});
        return parser;
      }
    }
  } finally {
    reader.releaseLock();
  }
}
