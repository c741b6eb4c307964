"""Whether an A2A agent card sends clients around the proxy.

An A2A client reads the agent card at ``/.well-known/agent-card.json`` and then sends every
JSON-RPC call to the URL the card advertises (``url`` and ``additionalInterfaces`` in 0.3,
``supportedInterfaces`` in 1.0), not to the URL it read the card from: a2a-sdk's client and the
seed's Java client both do. A staging server advertises its own address, so a client pointed
at the proxy would read the card through it and then talk to the server directly, and no fault
would ever fire. :func:`card_advice` spots that, so the command can say it before the user
wonders why nothing happens.

Pure: the card as parsed JSON in, a sentence (or nothing) out.
"""

from __future__ import annotations

from typing import Any, Final

import yarl

__all__ = ["CARD_PATH", "advertised_urls", "card_advice"]

CARD_PATH: Final = "/.well-known/agent-card.json"
_LOOPBACK: Final = frozenset({"127.0.0.1", "::1", "localhost"})


def advertised_urls(card: Any) -> list[str]:
    """Every interface URL a card names, in the card's order (none if it is no card)."""
    if not isinstance(card, dict):
        return []
    urls: list[str] = []
    if isinstance(card.get("url"), str):
        urls.append(card["url"])
    for key in ("additionalInterfaces", "supportedInterfaces"):
        entries = card.get(key)
        if isinstance(entries, list):
            urls += [
                e["url"] for e in entries if isinstance(e, dict) and isinstance(e.get("url"), str)
            ]
    return list(dict.fromkeys(urls))


def _same_endpoint(url: yarl.URL, proxy: yarl.URL) -> bool:
    if url.scheme != proxy.scheme or url.port != proxy.port:
        return False
    return url.host == proxy.host or (url.host in _LOOPBACK and proxy.host in _LOOPBACK)


def card_advice(card: Any, *, proxy: str) -> str | None:
    """What to do when ``card`` advertises URLs that are not the proxy's (``proxy`` is its base
    URL, ``http://127.0.0.1:PORT``); ``None`` when every advertised URL goes through it."""
    base = yarl.URL(proxy)
    around: list[tuple[str, str]] = []
    for raw in advertised_urls(card):
        try:
            url = yarl.URL(raw)
        except ValueError:
            continue
        if not url.absolute or _same_endpoint(url, base):
            continue
        instead = str(base.with_path(url.path).with_query(url.query_string or None))
        around.append((raw, instead))
    if not around:
        return None
    advertised = ", ".join(raw for raw, _ in around)
    instead = ", ".join(new for _, new in around)
    return (
        f"the upstream's agent card ({CARD_PATH}) advertises {advertised}: an A2A client sends "
        f"its calls where the card says, around this proxy, and no fault will fire on them; "
        f"make the server advertise {instead} (start the proxy on a fixed port with --listen "
        "so that URL stays the same)"
    )
