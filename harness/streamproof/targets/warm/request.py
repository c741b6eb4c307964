"""What the harness asks a zygote for, and which commands can be started warm (pure)."""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = [
    "HEADER",
    "WARM_START_FORM",
    "WarmCommand",
    "check_warm_start",
    "decode_length",
    "encode",
    "interpreter_env",
    "warm_command",
    "zygote_env",
]

HEADER: Final = struct.Struct("!I")
"""A message is its JSON's length (4 bytes, network order), then the JSON."""

_SHAPING: Final = frozenset({"LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TZ"})
"""Variables the interpreter reads once as it starts (besides every ``PYTHON*`` one): a child
forked from a zygote started with other values would not be what a fresh start makes."""


@dataclass(frozen=True)
class WarmCommand:
    """A command of the one form a zygote can become: ``[python, "-m", module, *args]``, and
    the modules its zygote imports besides ``module`` (``preload``: what the command imports
    later anyway, such as a command line's subcommands)."""

    python: str
    module: str
    args: tuple[str, ...]
    preload: tuple[str, ...] = ()


def warm_command(argv: Sequence[str], preload: Sequence[str] = ()) -> WarmCommand | None:
    """``argv`` as a :class:`WarmCommand`, or None when it is not ``python -m MODULE ...``
    (an interpreter option, a script, another program: nothing a zygote can be)."""
    if len(argv) < 3 or argv[1] != "-m" or not argv[2] or argv[2].startswith("-"):
        return None
    return WarmCommand(python=argv[0], module=argv[2], args=tuple(argv[3:]), preload=tuple(preload))


def interpreter_env(env: Mapping[str, str]) -> dict[str, str]:
    """The part of ``env`` that shapes an interpreter as it starts (so zygote and start must
    agree on it exactly)."""
    return {k: v for k, v in env.items() if k.startswith("PYTHON") or k in _SHAPING}


_KEPT: Final = ("PATH", "HOME", "TMPDIR", "USER", "LOGNAME")


def zygote_env(env: Mapping[str, str]) -> dict[str, str]:
    """What a zygote is started with: the interpreter-shaping part of a start's environment and
    where programs, home and temporary files are; nothing of one start (its port, its mutant,
    its proxy) that another start could inherit through an import."""
    return {**{k: env[k] for k in _KEPT if k in env}, **interpreter_env(env)}


def encode(message: Mapping[str, object]) -> bytes:
    """One message on the wire."""
    body = json.dumps(message, separators=(",", ":")).encode()
    return HEADER.pack(len(body)) + body


def decode_length(header: bytes) -> int:
    """The length of the JSON that follows ``header``."""
    (length,) = HEADER.unpack(header)
    return int(length)


WARM_START_FORM: Final = 'warm_start needs a command of the form ["{python}", "-m", MODULE, ...]'


def check_warm_start(warm_start: bool, command: Sequence[str] | None) -> None:
    """A target file's ``warm_start`` against its command (raises ``ValueError`` for pydantic)."""
    if not warm_start:
        return
    if command is None or warm_command(command) is None or command[0] != "{python}":
        raise ValueError(f"{WARM_START_FORM}; this one is {list(command or [])!r}")
