"""How the browser-client suite drives what it judges: a page in Chromium (:mod:`.page`), or a
reducer module in Node (:mod:`.reducer`)."""
