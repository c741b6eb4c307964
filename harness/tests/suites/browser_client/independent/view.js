// Puts a conversation (conversation.js) on the page, touching only what changed.
//
// DOM: each message is `li.bubble[data-author]` in `ol.transcript`, its text in `p.bubble-body`
// (the author is only an attribute; the stylesheet shows it); a tool call is `li.note` there.
// Each draft is `article.pending[data-draft-for]` in `section.in-flight`, with
// `h2.pending-who` (the author) and `p.pending-words` (the text so far). The run's status is
// the `[role=status]` paragraph, and a failed or interrupted run shows `output.failure-banner`.
// Text is always set with textContent, never parsed as HTML.

export class ChatView {
  constructor(root) {
    this.transcript = root.querySelector(".transcript");
    this.inFlight = root.querySelector(".in-flight");
    this.status = root.querySelector("[role=status]");
    this.banner = root.querySelector(".failure-banner");
    this.shownMessages = []; // the message objects the transcript shows, in order
    this.shownCalls = [];
    this.draftNodes = new Map(); // author -> {node, words}
  }

  render(conv) {
    this.renderTranscript(conv.messages, conv.calls);
    this.renderDrafts(conv.drafts);
    if (this.status.textContent !== conv.status) this.status.textContent = conv.status;
    const failed = conv.phase === "failed" || conv.phase === "interrupted";
    if (this.banner.textContent !== conv.problem) this.banner.textContent = conv.problem;
    this.banner.hidden = !(failed && conv.problem);
  }

  renderTranscript(messages, calls) {
    const extends_ = (shown, next) => shown.length <= next.length && shown.every((item, i) => item === next[i]);
    if (!extends_(this.shownMessages, messages) || !extends_(this.shownCalls, calls)) {
      this.transcript.replaceChildren();
      this.shownMessages = [];
      this.shownCalls = [];
    }
    // Walk the merged order: calls placed after `index` messages come before message `index`.
    let m = this.shownMessages.length;
    let c = this.shownCalls.length;
    while (m < messages.length || c < calls.length) {
      if (c < calls.length && calls[c].index <= m) {
        this.transcript.append(noteNode(calls[c].names));
        this.shownCalls.push(calls[c]);
        c += 1;
      } else {
        this.transcript.append(bubbleNode(messages[m]));
        this.shownMessages.push(messages[m]);
        m += 1;
      }
    }
  }

  renderDrafts(drafts) {
    for (const [author, entry] of this.draftNodes) {
      if (!drafts.has(author)) {
        entry.node.remove();
        this.draftNodes.delete(author);
      }
    }
    for (const [author, text] of drafts) {
      let entry = this.draftNodes.get(author);
      if (!entry) {
        const node = document.createElement("article");
        node.className = "pending";
        node.dataset.draftFor = author;
        const who = document.createElement("h2");
        who.className = "pending-who";
        who.textContent = author;
        const words = document.createElement("p");
        words.className = "pending-words";
        node.append(who, words);
        this.inFlight.append(node);
        entry = { node, words };
        this.draftNodes.set(author, entry);
      }
      if (entry.words.textContent !== text) entry.words.textContent = text;
    }
  }
}

function bubbleNode(message) {
  const li = document.createElement("li");
  li.className = "bubble";
  li.dataset.author = message.author;
  const body = document.createElement("p");
  body.className = "bubble-body";
  body.textContent = message.text;
  li.append(body);
  return li;
}

function noteNode(names) {
  const li = document.createElement("li");
  li.className = "note";
  li.textContent = `Called ${names.join(", ")}`;
  return li;
}
