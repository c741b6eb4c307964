// Added to the page under test before its own scripts (docs/reference/browser-client-contract.md#reading-the-screen).
// It records what the page's stream readers receive (so the harness knows which frames reached
// the page) and every distinct screen state, read by the target's selectors; the harness reads
// window.__streamproof. `window.__STREAMPROOF_SCREEN__` holds the selectors.
(() => {
  const cfg = window.__STREAMPROOF_SCREEN__ || {};
  const sp = { text: "", reads: 0, lastRead: 0, lastChange: 0, states: [], last: "" };
  Object.defineProperty(window, "__streamproof", { value: sp });

  const decoders = new WeakMap();
  const read = ReadableStreamDefaultReader.prototype.read;
  ReadableStreamDefaultReader.prototype.read = function (...args) {
    const reader = this;
    return read.apply(this, args).then((result) => {
      if (result && !result.done && result.value != null) {
        let chunk = "";
        if (typeof result.value === "string") {
          chunk = result.value;
        } else if (ArrayBuffer.isView(result.value)) {
          let decoder = decoders.get(reader);
          if (!decoder) {
            decoder = new TextDecoder();
            decoders.set(reader, decoder);
          }
          const v = result.value;
          chunk = decoder.decode(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), { stream: true });
        }
        if (chunk) {
          sp.text += chunk;
          sp.reads += 1;
          sp.lastRead = performance.now();
        }
      }
      return result;
    });
  };

  const visible = (el) =>
    typeof el.checkVisibility === "function" ? el.checkVisibility() : el.getClientRects().length > 0;
  const textOf = (el) => (el.innerText ?? el.textContent ?? "").trim();
  const inside = (el, sel) => (sel ? el.querySelector(sel) : el);

  function items(sel, authorSel, textSel) {
    if (!sel) return [];
    const out = [];
    for (const el of document.querySelectorAll(sel)) {
      if (!visible(el)) continue;
      const holder = inside(el, textSel);
      const text = holder ? textOf(holder) : "";
      if (!text) continue;
      let author = null;
      if (authorSel) {
        const a = el.querySelector(authorSel);
        author = a ? textOf(a) || null : null;
      } else if (el.hasAttribute("data-author")) {
        author = el.getAttribute("data-author");
      }
      out.push({ author, text });
    }
    return out;
  }

  function one(sel) {
    if (!sel) return null;
    const el = document.querySelector(sel);
    return el && visible(el) ? textOf(el) || null : null;
  }

  function screen() {
    const error = cfg.error
      ? [...document.querySelectorAll(cfg.error)].some((el) => visible(el) && textOf(el) !== "")
      : false;
    return {
      messages: items(cfg.message, cfg.message_author, cfg.message_text),
      drafts: items(cfg.draft, cfg.draft_author, cfg.draft_text),
      status: one(cfg.status),
      error_shown: error,
    };
  }

  sp.record = (settled) => {
    const now = screen();
    const key = JSON.stringify(now);
    if (!settled && key === sp.last) return;
    sp.last = key;
    sp.states.push({ t: performance.timeOrigin + performance.now(), recv: sp.text.length, settled, ...now });
  };

  sp.setHidden = (hidden) => {
    Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden });
    Object.defineProperty(document, "visibilityState", {
      configurable: true,
      get: () => (hidden ? "hidden" : "visible"),
    });
    document.dispatchEvent(new Event("visibilitychange"));
  };

  new MutationObserver(() => {
    sp.lastChange = performance.now();
    sp.record(false);
  }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
})();
