"""The browser-client suite: the page (or reducer module) that renders a gateway's stream, judged
by the seed's client rules in real Chromium (docs/reference/browser-client-contract.md)."""
