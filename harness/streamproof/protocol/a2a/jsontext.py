"""JSON text in and out: compact one-line JSON for SSE ``data:`` lines, strict JSON in."""

from __future__ import annotations

import json
from typing import Any, Final

_LINE_BREAKS: Final = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def dumps(payload: Any) -> str:
    """Compact one-line JSON. Java 0.3 and JS clients read one ``data:`` line as one whole
    document (§1.5), so no raw line break may appear, not even U+2028/U+2029/U+0085."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in _LINE_BREAKS.items():
        text = text.replace(raw, escaped)
    return text


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(body: bytes | str) -> Any:
    """Strict JSON (RFC 8259): no ``NaN``/``Infinity``; bytes must be UTF-8. Raises ValueError."""
    if isinstance(body, bytes):
        body = body.decode("utf-8")  # UnicodeDecodeError is a ValueError
    return json.loads(body, parse_constant=_no_constants)
