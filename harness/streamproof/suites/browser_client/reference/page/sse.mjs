// A Server-Sent Events parser for text that arrives in pieces, by the WHATWG rules for
// event streams: a line ends in CRLF, LF or CR; "field: value" (one space after the colon is
// dropped); several data lines join with "\n"; a line starting with ":" is a comment; a blank
// line dispatches the event, unless it has no data; the type defaults to "message"; the id
// carries over to later events until an id line changes it. "retry" is read and ignored: the
// reference page never reconnects by the stream's own timing (docs/reference/browser-client-contract.md).

export class SseParser {
  constructor(onEvent) {
    this.onEvent = onEvent;
    this.buffer = "";
    this.afterCR = false; // the last line ended in CR: an LF first in the next piece belongs to it
    this.started = false;
    this.type = "";
    this.data = [];
    this.lastId = "";
  }

  // Feeds decoded text; dispatches every event completed by it.
  push(text) {
    let chunk = text;
    if (!this.started && chunk.length > 0) {
      this.started = true;
      if (chunk.startsWith("\uFEFF")) chunk = chunk.slice(1);
    }
    if (chunk.length === 0) return;
    if (this.afterCR && chunk.startsWith("\n")) chunk = chunk.slice(1);
    this.afterCR = false;
    this.buffer += chunk;
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer[i];
      if (c !== "\n" && c !== "\r") continue;
      const line = this.buffer.slice(start, i);
      if (c === "\r") {
        if (i + 1 === this.buffer.length) this.afterCR = true;
        else if (this.buffer[i + 1] === "\n") i++;
      }
      start = i + 1;
      this.line(line);
    }
    this.buffer = this.buffer.slice(start);
  }

  // The stream ended: an event not closed by a blank line is dropped, as the rules say.
  end() {
    this.buffer = "";
    this.type = "";
    this.data = [];
  }

  line(line) {
    if (line === "") {
      this.dispatch();
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "event":
        this.type = value;
        break;
      case "data":
        this.data.push(value);
        break;
      case "id":
        if (!value.includes("\0")) this.lastId = value;
        break;
      default: // "retry" and unknown fields
        break;
    }
  }

  dispatch() {
    const type = this.type || "message";
    const data = this.data;
    this.type = "";
    this.data = [];
    if (data.length === 0) return;
    this.onEvent({ type, data: data.join("\n"), id: this.lastId });
  }
}
