"""What the user sees after each frame, and GW-NO-DOUBLE-RENDER judged on it.

``docs/explanation/gateway-rules.md``, "The client: append, then replace": "append deltas to a
draft,
then replace the draft with the message when it arrives. Never append both." And "Failure
modes: Double rendering. The client appends deltas and then appends the aggregate." A double
render is something the user *sees*: the same answer twice on one screen. So the rule is judged
on a sequence of screens, one per delivered frame, and never on the wire's own event names:
each wire (the seed's typed frames here; AG-UI or the AI SDK's UI stream in a profile of their
own) turns its frames into screens, and :func:`double_render_problems` judges them all alike.

A screen sequence must hold, for every frame the browser was delivered, in order:

* ``frame``: the frame's 0-based index in the stream, and ``t`` when it arrived (seconds since
  the chat request, the clock of the fake model's records); ``label``: how messages name that
  frame (``frame #3 (event:delta id:4)``), opaque text the judgement only quotes;
* ``messages``: the settled messages on screen after that frame, in screen order, and
  ``drafts``: the texts still being streamed (the seed's reducer has at most one; a wire that
  streams several messages at once has one per message), each a :class:`Shown`: its author when
  the wire names one (else ``None``: then it may be any agent's), its text as displayed, and
  the index of the frame that last changed it;
* ``status``: the status line, if the wire has one (the seed's ``Calling lookupOrder``,
  ``done``), which separates one step's messages from the next.

The judgement compares each screen with what the fake model actually said (its records): after
a frame that changed a draft, the draft must be the beginning of a model text of its author
that is not already settled on screen as often as the model said it; no text may be settled
more often than the model said it, in one message or spread over several. Whitespace is ignored
throughout ("may differ from the concatenated deltas in whitespace or chunk boundaries").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from streamproof.core.texts import short, squash
from streamproof.fakes.records import ModelCall
from streamproof.suites.gateway.checks.reducer import FrameLike, ReducerState, reduce
from streamproof.suites.gateway.checks.stream import label

__all__ = [
    "Problem",
    "Screen",
    "Shown",
    "TypedFrame",
    "double_render_problems",
    "typed_frame_screens",
]


@dataclass(frozen=True)
class Shown:
    """One text on screen: a settled message or a draft."""

    author: str | None
    """Who the wire says wrote it; ``None`` when the wire does not say (it may be anyone's)."""
    text: str
    frame: int
    """The index of the frame that last changed it."""


@dataclass(frozen=True)
class Screen:
    """What the user sees right after one delivered frame."""

    frame: int
    t: float
    label: str
    messages: tuple[Shown, ...] = ()
    drafts: tuple[Shown, ...] = ()
    status: str | None = None


class TypedFrame(FrameLike, Protocol):
    """A seed frame as the screen needs it: the reducer's fields plus index, time and id."""

    @property
    def index(self) -> int: ...

    @property
    def t(self) -> float: ...

    @property
    def id(self) -> str: ...


def typed_frame_screens(frames: Sequence[TypedFrame]) -> tuple[Screen, ...]:
    """The screens of the seed's typed frames, replayed through the seed's reducer
    (:mod:`.reducer`): its settled messages, its one draft (keyed by author) and its status."""
    screens: list[Screen] = []
    state = ReducerState()
    messages: tuple[Shown, ...] = ()
    draft: Shown | None = None
    for frame in frames:
        before = state
        state = reduce(state, frame)
        if len(state.messages) > len(before.messages):
            added = state.messages[len(before.messages) :]
            messages = (*messages, *(Shown(m.author, m.text, frame.index) for m in added))
        if state.draft is None:
            draft = None
        elif state.draft != before.draft:
            draft = Shown(state.draft.author, state.draft.text, frame.index)
        screens.append(
            Screen(
                frame=frame.index,
                t=frame.t,
                label=label(frame),
                messages=messages,
                drafts=() if draft is None else (draft,),
                status=state.status,
            )
        )
    return tuple(screens)


# --- the judgement -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One double render: when it first showed, and what the user saw."""

    t: float
    text: str


def _by(call: ModelCall, author: str | None) -> bool:
    """The call may have produced text for ``author`` (any author when either is unknown)."""
    return author is None or call.agent is None or call.agent == author


def _mine(shown: Shown, author: str | None) -> bool:
    return author is None or shown.author is None or shown.author == author


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _raw_prefix(text: str, squashed_length: int) -> str:
    """The shortest prefix of ``text`` holding ``squashed_length`` non-whitespace characters."""
    seen = 0
    for i, ch in enumerate(text):
        if seen == squashed_length:
            return text[:i]
        if not ch.isspace():
            seen += 1
    return text


def _in_order(part: str, whole: str) -> bool:
    """Whether ``part``'s characters all occur in ``whole`` in the same order."""
    rest = iter(whole)
    return all(ch in rest for ch in part)


def _who(author: str | None) -> str:
    return repr(author) if author is not None else "an unnamed author"


def _unsettled(screen: Screen, calls: Sequence[ModelCall], author: str | None) -> list[ModelCall]:
    """The model calls of ``author`` whose text is not yet settled on ``screen`` as often as
    the model said it: the texts a draft may still be streaming."""
    settled = Counter(squash(m.text) for m in screen.messages if _mine(m, author))
    out: list[ModelCall] = []
    for call in calls:
        text = squash(call.text_sent)
        if not _by(call, author) or not text:
            continue
        if settled[text] > 0:
            settled[text] -= 1  # this call's text is on screen already
            continue
        out.append(call)
    return out


def _draft_problem(label: str, draft: Shown, sent: Sequence[str]) -> str:
    shown = squash(draft.text)
    best = max(sent, key=lambda t: _common_prefix(shown, squash(t)), default="")
    k = _common_prefix(shown, squash(best))
    rest = shown[k:]
    seen = f"after {label} the draft of {_who(draft.author)} reads {short(draft.text, 80)}"
    target = squash(best)
    if k and rest and (target.startswith(rest) or rest.startswith(target)):
        again = draft.text[len(_raw_prefix(draft.text, k)) :]
        return f"{seen}: the draft shows {short(again.strip() or again, 80)} twice"
    if not sent:
        return f"{seen}, but the model sent no text for {_who(draft.author)}"
    return f"{seen}, which is not how any model text for {_who(draft.author)} begins"


def _draft_problems(
    screens: Sequence[Screen], calls: Sequence[ModelCall], faulted: Collection[int]
) -> list[Problem]:
    """After each frame that changed a draft, the draft must be the beginning of a model text
    of its author that is not settled on screen yet (a stall on the model link may have
    swallowed some of it: then the rest of it, in order). One report per growing draft."""
    labels = {s.frame: s.label for s in screens}
    problems: list[Problem] = []
    reported: dict[str | None, str] = {}
    for screen in screens:
        live = {d.author for d in screen.drafts}
        reported = {a: text for a, text in reported.items() if a in live}
        for draft in screen.drafts:
            if draft.frame != screen.frame:
                continue
            earlier = reported.get(draft.author)
            if earlier is not None and draft.text.startswith(earlier):
                continue  # the same draft keeps growing: reported once
            text = squash(draft.text)
            open_ = _unsettled(screen, calls, draft.author)
            if any(squash(c.text_sent).startswith(text) for c in open_):
                reported.pop(draft.author, None)
                continue
            if any(_in_order(text, squash(c.text_sent)) for c in open_ if c.index in faulted):
                # The model link swallowed some of that answer on the way (a stall): the draft
                # is the rest of it, in order, which is all the gateway got.
                reported.pop(draft.author, None)
                continue
            settled = next(
                (
                    m
                    for m in screen.messages
                    if _mine(m, draft.author) and text and squash(m.text).startswith(text)
                ),
                None,
            )
            if settled is not None:
                message = (
                    f"after {screen.label} the draft of {_who(draft.author)} reads "
                    f"{short(draft.text, 80)}, which repeats the answer already settled by "
                    f"{labels.get(settled.frame, f'frame #{settled.frame}')} "
                    f"({short(settled.text, 60)}): the screen shows it twice"
                )
            else:
                sent = [c.text_sent for c in calls if _by(c, draft.author) and c.text_sent]
                message = _draft_problem(screen.label, draft, sent)
            problems.append(Problem(screen.t, message))
            reported[draft.author] = draft.text
    return problems


def _runs(screen: Screen, status_at: dict[int, str | None]) -> list[list[Shown]]:
    """Runs of one author's settled messages in screen order, not separated by another
    author's message or by a change of status (a tool step, the end of the run)."""
    runs: list[list[Shown]] = []
    for message in screen.messages:
        last = runs[-1][-1] if runs else None
        if (
            last is not None
            and last.author == message.author
            and status_at.get(last.frame) == status_at.get(message.frame)
        ):
            runs[-1].append(message)
        else:
            runs.append([message])
    return [r for r in runs if len(r) >= 2]


def _message_problems(screens: Sequence[Screen], calls: Sequence[ModelCall]) -> list[Problem]:
    """A text settled on screen more often than the model said it: whole messages with the
    text, runs of two or more messages that together spell it (each chunk sent as a message,
    then the aggregate), or one message holding a model text several times over (the deltas
    and the aggregate joined)."""
    labels = {s.frame: s.label for s in screens}
    status_at = {s.frame: s.status for s in screens}
    problems: list[Problem] = []
    seen: set[tuple[str | None, str]] = set()
    previous: tuple[Shown, ...] | None = None
    for screen in screens:
        if screen.messages == previous:
            continue
        previous = screen.messages
        for author in sorted({m.author for m in screen.messages}, key=lambda a: a or ""):
            said = Counter(squash(c.text_sent) for c in calls if _by(c, author))
            said.pop("", None)
            completed = {squash(c.text_sent) for c in calls if _by(c, author) and c.completed}
            completed.discard("")
            mine = [m for m in screen.messages if m.author == author]
            shown: dict[str, list[str]] = {}
            for m in mine:
                shown.setdefault(squash(m.text), []).append(f"#{m.frame}")
            for run in _runs(screen, status_at):
                if run[0].author != author:
                    continue
                for i in range(len(run)):
                    for j in range(i + 2, len(run) + 1):
                        joined = squash("".join(m.text for m in run[i:j]))
                        if joined in completed:
                            span = f"#{run[i].frame}-#{run[j - 1].frame}"
                            shown.setdefault(joined, []).append(span)
            for text, where in shown.items():
                key = (author, text)
                if text in completed and len(where) > said[text] and key not in seen:
                    seen.add(key)
                    original = next(
                        c.text_sent for c in calls if _by(c, author) and squash(c.text_sent) == text
                    )
                    problems.append(
                        Problem(
                            screen.t,
                            f"the answer {short(original)} from {_who(author)} is rendered "
                            f"{len(where)} times (message frames {', '.join(where)}) but the "
                            f"model said it {said[text]} time(s)",
                        )
                    )
            for m in mine:
                text = squash(m.text)
                key = (author, f"#{m.frame}")
                if text in said or key in seen:
                    continue
                for t in completed:
                    if (
                        len(text) > len(t)
                        and len(text) % len(t) == 0
                        and text == t * (len(text) // len(t))
                    ):
                        seen.add(key)
                        problems.append(
                            Problem(
                                screen.t,
                                f"{labels.get(m.frame, f'frame #{m.frame}')} shows the answer "
                                f"{short(_raw_prefix(m.text, len(t)))} {len(text) // len(t)} "
                                "times in one message",
                            )
                        )
                        break
    return problems


def double_render_problems(
    screens: Sequence[Screen], calls: Sequence[ModelCall], faulted: Collection[int] = ()
) -> list[Problem]:
    """Every double render on ``screens``, given the fake model's records (``calls``) and the
    calls whose answer a fault on the model link kept from the gateway in part (``faulted``,
    by call index): after a frame, a draft that is not the beginning of an answer still to
    come (it repeats text, or an answer already settled), or an answer settled more often than
    the model said it. The drafts' problems first, then the messages'."""
    return _draft_problems(screens, calls, faulted) + _message_problems(screens, calls)
