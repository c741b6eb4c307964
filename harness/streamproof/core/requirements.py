"""The requirement registry: every rule streamproof checks, with its id, level and seed source.

Ids are stable: reports, mutants and users' CI configuration refer to them. A check never
invents a requirement; it looks one up here and builds its verdict with :func:`judge`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from streamproof.core.verdicts import Kind, Level, Outcome, Verdict

GATEWAY_SEED = "000_08c89244bc50b181"
CLIENT_SEED = "001_a4aab3267c38e4f0"
RULE_PAGES = {
    "gateway": "docs/explanation/gateway-rules.md",
    "a2a-client": "docs/explanation/a2a-client-rules.md",
    "browser-client": "docs/explanation/browser-client-rules.md",
}
"""Where a user reads each suite's rules: the docs page that states them in the project's words,
each section there a heading named as the rules' ``section`` (the seed id is a label on it). By
suite, not by seed: the gateway and the browser-client rules both come from seed 000."""


class Requirement(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    level: Level
    statement: str
    seed: str
    section: str
    kind: Literal["gateway", "a2a-client", "browser-client"]
    concurrent: bool = False
    """Judged only when scenarios run as several sessions at once (``--concurrency K``), and
    then on every scenario that runs: no scenario is built for it alone."""
    profile: str | None = None
    """A rule of one wire's own protocol (AG-UI, the AI SDK UI stream): judged on every
    scenario run against a target of that profile, and only there."""

    def source(self) -> str:
        """Where the rule comes from, as lists and reports name it: the docs page stating the
        suite's rules (:data:`RULE_PAGES`) or a protocol's own name."""
        if self.profile is not None:
            return self.seed
        return RULE_PAGES.get(self.kind, f"seed {self.seed}")

    def everywhere(self) -> str | None:
        """Where a rule that no scenario names is judged, or ``None`` for a rule that needs a
        scenario of its own."""
        if self.concurrent:
            return "every scenario run with --concurrency K"
        if self.profile is not None:
            return f"every scenario run against a target of profile {self.profile}"
        return None


class Registry(Mapping[str, Requirement]):
    """Every requirement of every suite, by id, loaded on first use.

    A suite's ``requirements`` module registers its rules when it is imported; the suites'
    registry (:mod:`streamproof.suites`) adds a loader that imports them all, and the first lookup
    (an id, ``in``, iterating) runs it. So a process that never judges (the reference A2A
    client booted per turn, ``streamproof --help``) never builds the rules."""

    def __init__(self) -> None:
        self._rules: dict[str, Requirement] = {}
        self._loaders: list[Callable[[], None]] = []

    def add_loader(self, load: Callable[[], None]) -> None:
        """Run ``load`` before the next lookup (once): it imports the modules that register
        rules, and may reorder them (:meth:`put_first`)."""
        self._loaders.append(load)

    def _load(self) -> None:
        while self._loaders:
            self._loaders.pop(0)()

    def add(self, rule: Requirement) -> None:
        """Register ``rule`` (without loading the others: a loader's imports call this)."""
        known = self._rules.get(rule.id)
        if known is not None and known != rule:
            raise ValueError(f"requirement id {rule.id!r} is registered twice")
        self._rules[rule.id] = rule

    def put_first(self, rules: Iterable[Requirement]) -> None:
        """List ``rules`` first, in their order, then every other rule as registered."""
        ordered = {rule.id: rule for rule in [*rules, *self._rules.values()]}
        self._rules.clear()
        self._rules.update(ordered)

    def __getitem__(self, id: str) -> Requirement:
        self._load()
        return self._rules[id]

    def __contains__(self, id: object) -> bool:
        self._load()
        return id in self._rules

    def __iter__(self) -> Iterator[str]:
        self._load()
        return iter(self._rules)

    def __len__(self) -> int:
        self._load()
        return len(self._rules)


REGISTRY = Registry()
"""Every requirement of every suite, by id. Each suite's ``requirements`` module registers its
own rules when it is imported (the loader :mod:`streamproof.suites` adds imports them all on the
first lookup), so the core names no suite."""


def register(rules: Iterable[Requirement]) -> None:
    """Add a suite's rules to the registry; an id taken by another rule is an error."""
    for rule in rules:
        REGISTRY.add(rule)


def requirement(id: str) -> Requirement:
    try:
        return REGISTRY[id]
    except KeyError:
        raise KeyError(f"unknown requirement id {id!r}") from None


def judge(
    id: str,
    ok: bool,
    message: str,
    *,
    expected: Any = None,
    observed: Any = None,
    at: float | None = None,
) -> Verdict:
    """A verdict for requirement ``id``: pass, or fail / non-strict depending on its level.
    ``at`` (real seconds since the scenario's epoch) is kept only on a verdict that is not a
    pass: when the broken rule showed."""
    req = requirement(id)
    if ok:
        outcome = Outcome.PASS
    else:
        outcome = Outcome.FAIL if req.level is Level.MUST else Outcome.NON_STRICT
    return Verdict(
        requirement=id,
        level=req.level,
        outcome=outcome,
        message=message,
        expected=expected,
        observed=observed,
        at=None if ok else at,
    )


MAX_LISTED = 3
"""A failing verdict lists this many violations, then counts the rest."""


def from_violations(
    requirement_id: str,
    violations: Sequence[str],
    *,
    rule: str,
    ok: str,
    expected: Any = None,
    observed: Any = None,
    at: float | None = None,
) -> Verdict:
    """One verdict: PASS with ``ok``, or FAIL / NON-STRICT listing the first violations.

    A failing message starts with the requirement id, then what was seen, then the rule;
    ``at`` says when the first violation showed (see :func:`judge`).
    """
    if not violations:
        return judge(requirement_id, True, ok, expected=expected, observed=observed)
    listed = "; ".join(violations[:MAX_LISTED])
    more = len(violations) - MAX_LISTED
    if more > 0:
        listed += f"; and {more} more"
    return judge(
        requirement_id,
        False,
        f"{requirement_id}: {listed}. Rule: {rule}",
        expected=expected,
        observed=observed,
        at=at,
    )


def not_applicable(id: str, message: str) -> Verdict:
    """A requirement this run gave nothing to judge (no tool call, no resubscribe, ...).

    Never a pass: a rule that was not exercised is reported as such, with the reason."""
    req = requirement(id)
    return Verdict(requirement=id, level=req.level, outcome=Outcome.NOT_APPLICABLE, message=message)


def expectation(
    name: str,
    ok: bool,
    message: str,
    *,
    expected: Any = None,
    observed: Any = None,
    at: float | None = None,
) -> Verdict:
    """A verdict on one of the scenario's own expectations (``expect.frames``, ...).

    A scenario's expectations are what its author wrote down about this one run; a mismatch
    fails the scenario under the expectation's name, never under a requirement whose rule it
    does not break."""
    return Verdict(
        requirement=name,
        level=Level.MUST,
        outcome=Outcome.PASS if ok else Outcome.FAIL,
        message=message if ok else f"{name}: {message}",
        expected=expected,
        observed=observed,
        kind=Kind.EXPECTATION,
        at=None if ok else at,
    )


def skip(id: str, message: str) -> Verdict:
    """A requirement that could not be judged because the target did not declare what it needs."""
    req = requirement(id)
    return Verdict(requirement=id, level=req.level, outcome=Outcome.SKIP, message=message)


def info(id: str, message: str) -> Verdict:
    """A requirement this observation cannot judge (e.g. the browser left before the end)."""
    req = requirement(id)
    return Verdict(requirement=id, level=req.level, outcome=Outcome.INFO, message=message)


def _known_ids(ids: tuple[str, ...]) -> tuple[str, ...]:
    unknown = [r for r in ids if r not in REGISTRY]
    if unknown:
        raise ValueError(f"unknown requirement id(s): {', '.join(unknown)}")
    return ids


RequirementIds = Annotated[tuple[str, ...], Field(min_length=1), AfterValidator(_known_ids)]
"""A scenario's ``requirements:``: at least one id, every one in the registry."""
