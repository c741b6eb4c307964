"""The differential as Markdown: per stream, the oracles' verdicts beside ours, then every
disagreement with its reason; and the two tables it rests on (finding -> requirement, the known
differences), which the README shows as generated here."""

from __future__ import annotations

from collections.abc import Sequence

from streamproof.suites.gateway.oracles.differences import ANY, KNOWN_DIFFERENCES
from streamproof.suites.gateway.oracles.differential import StreamDifferential
from streamproof.suites.gateway.oracles.mapping import ORACLES, READINGS

__all__ = ["differential_table", "known_differences_table", "mapping_table"]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _agreement(diff: StreamDifferential) -> str:
    if not diff.oracles:
        return "nothing to compare (no events)"
    if not diff.disagreements:
        return "agree"
    if diff.holds:
        return f"{len(diff.disagreements)} known difference(s)"
    return f"**{len(diff.unexplained)} unexplained**"


def _ours(diff: StreamDifferential) -> str:
    cell = ", ".join(diff.flagged) or "accepts"
    if diff.beyond:
        cell += f" (beyond the comparison, fails {', '.join(diff.beyond)})"
    return cell


def differential_table(diffs: Sequence[StreamDifferential]) -> str:
    """One table per profile (stream, events, our structural failures, each oracle's reading,
    whether they agree), then the disagreements, each with its reason or flagged as having
    none."""
    out: list[str] = []
    for profile, oracles in ORACLES.items():
        rows = [d for d in diffs if d.profile == profile]
        if not rows:
            continue
        header = ["stream", "events", "ours (structural)", *(f"`{o}`" for o in oracles), "agree"]
        out += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for d in rows:
            by_oracle = {c.oracle: c.verdict() for c in d.oracles}
            cells = [
                f"`{d.stream}`",
                str(d.events),
                _ours(d),
                *(by_oracle.get(o, "-") for o in oracles),
                _agreement(d),
            ]
            out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
        out.append("")
    lines: list[str] = []
    seen: dict[str, str] = {}
    for d in diffs:
        for x in d.disagreements:
            if x.known is not None and x.reason is not None:
                seen.setdefault(x.known, x.reason)
                lines.append(f"- `{d.stream}`: {x.what()}: *{x.known}*")
            else:
                lines.append(f"- `{d.stream}`: {x.what()}: **no listed reason** ({x.detail})")
    out += ["Disagreements:", "", *(lines or ["- none"])]
    if seen:
        out += ["", "The known differences seen, and why:", ""]
        out += [f"- *{name}*: {reason}" for name, reason in seen.items()]
    return "\n".join(out)


def mapping_table() -> str:
    """Each kind of finding and the requirement of ours that judges the same fact."""
    rows = [
        "| library | finding | the structural fact | our requirement |",
        "|---|---|---|---|",
    ]
    for r in READINGS:
        finding = f"`{r.rule}`"
        if r.message is not None:
            finding += f" `{r.message}`"
        if r.at == "end":
            finding += " (about the whole stream)"
        elif r.at == "event":
            finding += " (at an event)"
        rows.append(f"| `{r.oracle}` | {_cell(finding)} | {r.fact} | {r.requirement} |")
    return "\n".join(rows)


def known_differences_table() -> str:
    """Every known difference: which oracle, which side, which requirement, and why."""
    rows = [
        "| difference | libraries | who flags it | ours | why |",
        "|---|---|---|---|---|",
    ]
    for k in KNOWN_DIFFERENCES:
        side = "the library only" if k.side == "oracle only" else "we only"
        if k.rules:
            side += f" ({', '.join(sorted(k.rules))})"
        ours = "any" if k.requirement == ANY else (k.requirement or "(none of ours)")
        libraries = ", ".join(f"`{name}`" for name in k.libraries)
        rows.append(f"| {k.name} | {libraries} | {side} | {ours} | {_cell(k.reason)} |")
    return "\n".join(rows)
