// The browser-client suite's reference reducer: the client rule "append deltas to a draft, then
// replace the draft with the message" as a pure function (docs/reference/browser-client-contract.md,
// "A reducer module").
//
// state: {messages: [{author, text}], draft: {author, text} | null, status: string | null}
// frame: {type, data, id}, with data the frame's JSON text.
//
// A mutant is chosen by globalThis.STREAMPROOF_BUG, read on every call (unset: the correct
// reducer). Each one breaks a single rule, so the suite can show it catches that break:
//   append-both              a message is added but the draft stays: the answer shows twice
//   one-draft                a delta joins the current draft whoever wrote it (the draft keeps
//                            its first author)
//   keep-draft-on-error      an error sets the status but leaves the half sentence on screen
//   transient-double-render  a message is added and its draft goes only when the next frame
//                            arrives: for one frame the answer shows twice
//   error-not-shown          an error clears the draft and the status: the failed run looks
//                            like one still waiting
//   final-only               only a final message is kept: a multi-agent run's other answers
//                            vanish
//   silent-tool-call         a tool call clears the draft but says nothing in the status

export const initialState = Object.freeze({ messages: [], draft: null, status: null });

const BUGS = new Set([
  "append-both",
  "one-draft",
  "keep-draft-on-error",
  "transient-double-render",
  "error-not-shown",
  "final-only",
  "silent-tool-call",
]);

function bug() {
  const name = globalThis.STREAMPROOF_BUG;
  return BUGS.has(name) ? name : null;
}

// The frame's payload, or undefined when its data is not JSON: a frame the reducer cannot read
// leaves the state as it was rather than breaking the screen.
function payload(frame) {
  try {
    return JSON.parse(frame.data);
  } catch {
    return undefined;
  }
}

function text(value) {
  return typeof value === "string" ? value : "";
}

export function reduce(state, frame) {
  const mutant = bug();
  let current = state;
  // transient-double-render: the draft a message left behind goes with the frame after it.
  if (current.staleDraft) {
    const { staleDraft, ...rest } = current;
    current = { ...rest, draft: null };
  }
  const d = payload(frame);
  switch (frame.type) {
    case "delta": {
      if (!d || typeof d !== "object") return current;
      const draft = current.draft;
      const sameAuthor = draft && (draft.author === d.author || mutant === "one-draft");
      if (!sameAuthor) {
        return { ...current, draft: { author: d.author, text: text(d.text) } };
      }
      return { ...current, draft: { ...draft, text: draft.text + text(d.text) } };
    }
    case "message": {
      if (!d || typeof d !== "object") return current;
      // The message is the record: it replaces the draft, never joins it.
      if (mutant === "final-only" && d.final === false) return { ...current, draft: null };
      const messages = [...current.messages, { author: d.author, text: text(d.text) }];
      if (mutant === "append-both") return { ...current, messages };
      if (mutant === "transient-double-render" && current.draft) {
        return { ...current, messages, staleDraft: true };
      }
      return { ...current, messages, draft: null };
    }
    case "tool_call": {
      if (mutant === "silent-tool-call") return { ...current, draft: null };
      const names = d && Array.isArray(d.names) ? d.names : [];
      return { ...current, draft: null, status: `Calling ${names.join(", ")}` };
    }
    case "error":
      if (mutant === "keep-draft-on-error") return { ...current, status: "error" };
      if (mutant === "error-not-shown") return { ...current, draft: null, status: null };
      return { ...current, draft: null, status: "error" };
    case "done":
      return { ...current, draft: null, status: "done" };
    default:
      return current;
  }
}
