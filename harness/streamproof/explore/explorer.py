"""The explorer: one started environment, every example run through it, and the memory of what
each plan broke (on the target, and when screening on the correct reference); hypothesis's
``find`` around it (see :mod:`streamproof.explore.search`)."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from hypothesis import example, given, seed, settings
from hypothesis.errors import NoSuchExample, Unsatisfiable

from streamproof.core.verdicts import Kind, Level, Outcome, Verdict
from streamproof.explore.options import Options
from streamproof.explore.reproducer import with_plan
from streamproof.explore.scenario import SearchedScenario
from streamproof.explore.space import Space, describe_plan, plans
from streamproof.runtime.interrupts import Interrupts
from streamproof.runtime.loop import BackgroundLoop
from streamproof.suites import suite
from streamproof.suites.fixture_files import fixture_context

if TYPE_CHECKING:
    from streamproof.core.suite_interface import Environment

__all__ = ["Explorer", "Found", "Plan", "SearchState", "find", "fmt_s", "must_failures"]


START_BUDGET = 180.0
"""Seconds the environment gets to start, as for ``streamproof run``."""

Plan = dict[str, list[dict[str, Any]]]


def must_failures(verdicts: Sequence[Verdict], strict: bool = False) -> dict[str, str]:
    """The MUST requirements that failed (with ``strict`` also the SHOULDs not met, as
    ``streamproof run --strict`` counts them), with the first failing verdict's message."""
    counted = (Outcome.FAIL, Outcome.NON_STRICT) if strict else (Outcome.FAIL,)
    out: dict[str, str] = {}
    for v in verdicts:
        if (
            v.kind is Kind.REQUIREMENT
            and v.outcome in counted
            and (strict or v.level == Level.MUST)
        ):
            out.setdefault(v.requirement, v.message.removeprefix(f"{v.requirement}: "))
    return out


@dataclass
class SearchState:
    started: float = field(default_factory=time.monotonic)
    tried: int = 0
    requirement: str | None = None
    best: Plan | None = None
    best_message: str = ""
    errors: int = 0
    out_of_time: bool = False
    memo: dict[str, dict[str, str]] = field(default_factory=dict)
    screened: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per plan, what the correct reference broke under it (screening)."""
    failing: list[Plan] = field(default_factory=list)
    """Every plan that broke the requirement held on to, in the order they did."""
    suspected: list[tuple[str, str]] = field(default_factory=list)
    """(requirement, plan) the reference broke too: suspected harness problems, skipped."""


def _key(plan: Mapping[str, Any]) -> str:
    return json.dumps(plan, sort_keys=True)


def fmt_s(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class Explorer:
    def __init__(
        self,
        opts: Options,
        scenario: SearchedScenario,
        err: TextIO,
        loop: BackgroundLoop,
        interrupts: Interrupts | None = None,
    ) -> None:
        self.opts = opts
        self.interrupts = interrupts
        """Checked at every progress tick: a Ctrl-C whose exception was lost still stops."""
        self.scenario = scenario
        self.err = err
        self.loop = loop
        self.env: Environment | None = None
        self.reference: Environment | None = None
        """The correct reference that screens found plans (started on first need)."""
        self.screening = opts.bug is not None or opts.screen
        self.state = SearchState()
        self.deadline = self.state.started + opts.time_budget
        self._last_progress = 0.0
        intended = suite(scenario.kind).INTENDED
        self.intended = intended.get(opts.bug) if opts.bug else None

    # --- output ---

    def say(self, text: str) -> None:
        print(f"explore: {text}", file=self.err, flush=True)

    def progress(self, force: bool = False) -> None:
        if self.interrupts is not None:
            self.interrupts.check()
        now = time.monotonic()
        if not force and now - self._last_progress < 1.0:
            return
        self._last_progress = now
        s = self.state
        best = (
            f"{s.requirement} with {describe_plan(s.best)}"
            if s.best is not None and s.requirement
            else "none yet"
        )
        self.say(
            f"{s.tried} example(s) tried, {fmt_s(self.deadline - now)} left; "
            f"best failure so far: {best}"
        )

    # --- running ---

    def start(self) -> None:
        described = suite(self.scenario.kind)
        self.env = described.environment(
            self.opts.target, bug=self.opts.bug, time_scale=self.opts.time_scale, engine=None
        )
        self.loop.run(self.env.start(), timeout=START_BUDGET)

    def restart(self) -> None:
        """A fresh environment, as ``streamproof run`` would start (nothing left from the
        search's examples)."""
        if self.env is not None:
            env, self.env = self.env, None
            with contextlib.suppress(Exception):
                self.loop.run(env.close(), timeout=30)
        self.start()

    def start_reference(self) -> Environment:
        """The correct reference of this search: the target without its bug, or (``--screen``
        without a bug) the bundled reference of the scenario's kind."""
        if self.reference is None:
            target = self.opts.target if self.opts.bug is not None else None
            env = suite(self.scenario.kind).environment(
                target, bug=None, time_scale=self.opts.time_scale, engine=None
            )
            self.reference = env
            self.loop.run(env.start(), timeout=START_BUDGET)
        return self.reference

    def run_plan(self, plan: Plan, env: Environment | None = None) -> dict[str, str]:
        """The requirements ``plan`` breaks (requirement -> message) on ``env`` (default: the
        target's); ``{}`` when the run did not end."""
        env = env if env is not None else self.env
        assert env is not None
        scenario = self.scenario.model.model_validate(
            with_plan(self.scenario.data, plan, self.scenario.turns),
            context=fixture_context(self.scenario.file),
        )
        budget = env.scale(self.scenario.run_timeout) + 60.0
        try:
            result: Any = self.loop.run(
                env.run(scenario), timeout=budget, tick=lambda _s: self.progress()
            )
        except TimeoutError:
            self.state.errors += 1
            self.say(f"the run of {describe_plan(plan)} did not end within {budget:.0f}s")
            return {}
        return must_failures(result.verdicts, strict=self.opts.strict)

    def screen(self, plan: Plan, failed: dict[str, str]) -> dict[str, str]:
        """``failed`` less what the correct reference breaks under ``plan`` too; each of those
        is said once and remembered as a suspected harness problem."""
        s = self.state
        key = _key(plan)
        broken = s.screened.get(key)
        if broken is None:
            broken = self.run_plan(plan, self.start_reference())
            s.screened[key] = broken
            for requirement in sorted(set(failed) & set(broken)):
                s.suspected.append((requirement, describe_plan(plan)))
                self.say(
                    f"the reference fails this plan too ({requirement}): a suspected harness "
                    f"problem, skipped: {describe_plan(plan)}"
                )
        return {r: m for r, m in failed.items() if r not in broken}

    def condition(self, plan: Plan, finishing: bool = False) -> bool:
        """Whether ``plan`` breaks the requirement held on to (the first it breaks, if none
        yet). ``finishing``: a try after the search (each element alone), which the time
        budget does not cut short, as it does not cut short the rerun."""
        s = self.state
        key = _key(plan)
        failed = s.memo.get(key)
        if failed is None:
            if time.monotonic() >= self.deadline and not finishing:
                s.out_of_time = True
                return False
            s.tried += 1
            failed = self.run_plan(plan)
            s.memo[key] = failed
            self.progress()
        if self.opts.requirement is not None:
            failed = {r: m for r, m in failed.items() if r == self.opts.requirement}
        if not failed:
            return False
        if self.screening and (s.requirement is None or s.requirement in failed):
            if time.monotonic() >= self.deadline and not finishing:
                s.out_of_time = True
                return False
            failed = self.screen(plan, failed)
            if not failed:
                return False
        if s.requirement is None:
            s.requirement = self.intended if self.intended in failed else sorted(failed)[0]
            self.say(
                f"example {s.tried} breaks {', '.join(sorted(failed))}: "
                f"{describe_plan(plan)}; shrinking on {s.requirement}"
            )
        if s.requirement not in failed:
            return False
        s.best = plan  # hypothesis only accepts a shrink that still fails: the latest is best
        if plan not in s.failing:
            s.failing.append(plan)
        s.best_message = failed[s.requirement]
        return True


class Found(Exception):
    """Raised inside the hypothesis test when a plan breaks the requirement searched for."""


def find(
    explorer: Explorer,
    space: Space,
    config: settings,
    seed_value: int | None,
    known: Sequence[Plan],
) -> Plan | None:
    """Hypothesis's ``find``, with the plans found before tried first as explicit examples:
    hypothesis's own example database is set aside under a seed (``hypothesis.seed``
    disables it), so the known failures are kept beside it as well."""
    last: list[Plan] = []

    def inner(plan: Plan) -> None:
        if explorer.condition(plan):
            last[:] = [plan]
            raise Found

    for plan in reversed(known):
        inner = example(plan)(inner)
    test = config(given(plans(space))(inner))
    if seed_value is not None:
        test = seed(seed_value)(test)
    try:
        test()
    except Found:
        return last[0] if last else None
    except BaseExceptionGroup as group:
        if group.subgroup(Found) is not None and last:
            return last[0]
        raise
    except (NoSuchExample, Unsatisfiable):
        return None
    except AssertionError as exc:
        # A Ctrl-C while hypothesis builds its runner surfaces as hypothesis's own assertion
        # (its runner is missing) with the interrupt as the context: it is the interrupt.
        if isinstance(exc.__context__, KeyboardInterrupt):
            raise exc.__context__ from None
        raise
    return None
