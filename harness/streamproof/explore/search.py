"""The search behind ``streamproof explore``: one started environment, hypothesis's ``find``.

The scenario is loaded as ``streamproof run`` loads it and its link faults are removed. The
environment (target and fakes) is started once; every example is that scenario with a drawn
fault plan (:mod:`streamproof.explore.space`) on its links, run through the environment, which
resets per scenario, within the scenario's own scaled ``run_timeout``. An example is a finding
when a MUST requirement fails (with ``--strict`` a SHOULD too, as ``streamproof run --strict``
counts them; a scenario's own ``expect`` verdicts are not requirements and do not count: a
fault the scenario never planned may well change its ledger). The first broken
requirement is the one the search then holds on to while hypothesis shrinks the plan (the
``--bug``'s intended requirement when it is among those broken).

Results are remembered per plan, so hypothesis's final replay of the shrunk plan never runs
the target again and a timing wobble cannot make it report the search itself as flaky; the
found plan is rerun once, for real and on a freshly started environment, before anything is
written (the flakiness guard).

Screening (``--bug``, or ``--screen`` for a user's target): a plan that breaks a requirement is
first run on the correct reference too (the same reference without the bug, or the bundled
reference of the scenario's kind). A requirement the reference breaks under the same plan is
no finding about the target but a suspected harness problem: it is said, remembered, and the
search goes on as if that plan had broken nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import yaml
from hypothesis import HealthCheck, Phase, example, given, seed, settings
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.errors import NoSuchExample, Unsatisfiable

from streamproof.core.capabilities import ScenarioSkipped
from streamproof.core.durations import DEFAULT_TIME_SCALE
from streamproof.core.verdicts import Kind, Level, Outcome, Verdict
from streamproof.explore.reproducer import (
    Provenance,
    has_link_faults,
    reproducer_text,
    turn_data,
    with_plan,
)
from streamproof.explore.reproducer import file_name as reproducer_file_name
from streamproof.explore.space import (
    BROWSER_ACTIONS,
    Space,
    a2a_matches,
    describe_plan,
    plans,
    single_elements,
)
from streamproof.protocol.gemini import TextChunk
from streamproof.runtime.interrupts import Interrupts
from streamproof.runtime.loop import BackgroundLoop
from streamproof.suites import suite
from streamproof.suites.a2a_client.scenario import A2AClientScenario
from streamproof.suites.fixture_files import fixture_context, resolve_fixture
from streamproof.suites.gateway.scenario import GatewayScenario
from streamproof.suites.loading import ScenarioError, load_scenarios
from streamproof.targets.errors import TargetConfigError, TargetError

if TYPE_CHECKING:
    from streamproof.core.suite_interface import Environment

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_FOUND",
    "EXIT_NOTHING",
    "EXIT_TARGET",
    "ExploreError",
    "Options",
    "explore",
    "must_failures",
]

EXIT_NOTHING, EXIT_FOUND, EXIT_BAD_INPUT, EXIT_TARGET = 0, 1, 2, 3

_PREFIX = {"gateway": "GW-", "a2a-client": "A2A-C-"}

RERUN_TRIES = 3
"""How many plans that broke the requirement are rerun on a fresh target, at most, before the
search says it is not reproducible."""

START_BUDGET = 180.0
"""Seconds the environment gets to start, as for ``streamproof run``."""

Plan = dict[str, list[dict[str, Any]]]


class ExploreError(Exception):
    """Bad input: the message names what was wrong and where it came from."""


@dataclass(frozen=True)
class Options:
    scenario: str
    target: str | None = None
    bug: str | None = None
    max_examples: int = 200
    time_budget: float = 600.0
    seed: int | None = None
    out: Path = Path("reports")
    time_scale: float = DEFAULT_TIME_SCALE
    strict: bool = False
    """SHOULD failures are findings too (as ``streamproof run --strict``)."""
    requirement: str | None = None
    """Only this requirement counts (``--requirement``): the search holds out for it."""
    screen: bool = False
    """Screen found plans on the bundled reference of the scenario's kind (implied, on the
    same reference without the bug, by ``bug``)."""


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
class _Scenario:
    file: str
    data: dict[str, Any]
    model: type[Any]
    id: str
    kind: str
    horizon: float
    run_timeout: float
    space: Space
    turns: tuple[dict[str, Any], ...] = ()
    """Every model turn as plain chunks data (gateway), for a plan that changes one."""


def _resolve(name: str) -> tuple[Path, str | None]:
    """The file that holds ``name`` and, when ``name`` is a scenario id, that id."""
    path = Path(name)
    if path.exists():
        return path, None
    holder, sep, wanted = name.rpartition("::")
    if sep and Path(holder).is_file():
        try:
            ids = [entry.scenario.id for entry in load_scenarios(holder)]
        except ScenarioError as exc:
            raise ExploreError(str(exc)) from None
        if wanted not in ids:
            raise ExploreError(f"{holder}: no scenario {wanted!r} (it holds {', '.join(ids)})")
        return Path(holder), wanted
    from streamproof.runtime.bundled import bundled_scenarios

    folder = bundled_scenarios()
    if folder is not None:
        for file in sorted(folder.rglob("*.yaml")):
            try:
                loaded = load_scenarios(file)
            except ScenarioError:
                continue
            if any(entry.scenario.id == name for entry in loaded):
                return file, name
    raise ExploreError(
        f"{name}: no such scenario file, and no bundled scenario has that id (FILE::ID names "
        "one scenario of a file)"
    )


def load_scenario(name: str) -> tuple[_Scenario, bool]:
    """The scenario at ``name`` (a file holding one scenario, or a bundled scenario's id) with
    its link faults removed, and whether it had any."""
    path, wanted = _resolve(name)
    if path.is_dir():
        raise ExploreError(f"{path}: a folder; explore takes one scenario file")
    try:
        loaded = load_scenarios(path)
    except ScenarioError as exc:
        raise ExploreError(str(exc)) from None
    docs = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
    if wanted is not None:
        index = next(i for i, entry in enumerate(loaded) if entry.scenario.id == wanted)
    elif len(loaded) == 1:
        index = 0
    else:
        ids = ", ".join(entry.scenario.id for entry in loaded)
        raise ExploreError(
            f"{path}: holds {len(loaded)} scenarios ({ids}); name one of them by its id"
        )
    scenario = loaded[index].scenario
    # Canned streams (``fixture:``) are found from the scenario's folder up; the reproducer is
    # written elsewhere (reports/explore/), so it names each one by its absolute path.
    data = _absolute_fixtures(docs[index], path)
    had_faults = has_link_faults(data)
    base = with_plan(data, {})
    model = type(scenario)
    try:
        stripped = model.model_validate(base, context=fixture_context(path))
    except ValueError as exc:
        raise ExploreError(
            f"{path}: without its link faults the scenario is invalid: {exc}"
        ) from None
    if isinstance(stripped, A2AClientScenario):
        steps = stripped.task or ()
        times = [float(step.at) for step in steps if getattr(step, "at", None) is not None]
        active = max(times) + 1.0 if times else None
        space = Space(
            ("a2a",),
            stripped.horizon,
            a2a_matches(stripped.server.wire),
            active,
            max(len(steps), 1),
        )
        if isinstance(base.get("task"), list) and len(base["task"]) > 1:
            space = replace(space, steps=len(base["task"]))
    else:
        assert isinstance(stripped, GatewayScenario)
        links = ("browser", "model") if stripped.model_path == "direct" else ("browser",)
        space = Space(links, stripped.horizon, events=15, only={"browser": BROWSER_ACTIONS})
        space = replace(
            space,
            active=_model_active(stripped),
            quiet=max(stripped.horizon, stripped.limits.gateway_run_timeout * QUIET_PAST_BOUND),
            frames=_leave_frames(stripped),
            turns=_turn_shapes(stripped),
        )
        turns = tuple(turn_data(turn) if turn.chunks else {} for turn in stripped.model)
    found = _Scenario(
        file=str(path),
        data=base,
        model=model,
        id=scenario.id,
        kind=scenario.kind,
        horizon=stripped.horizon,
        run_timeout=stripped.limits.run_timeout,
        space=space,
    )
    if isinstance(stripped, GatewayScenario):
        found.turns = turns
    return found, had_faults


MAX_LEAVE_FRAMES = 15
QUIET_PAST_BOUND = 1.5
"""A delay before a model chunk may last up to this many times the gateway's run bound."""


def _leave_frames(scenario: GatewayScenario) -> int | None:
    """How many frames the browser may leave after; ``None`` when the scenario has a drop of
    its own or no stream to leave."""
    request = scenario.request
    if request.disconnect_after_frames is not None or not request.streaming:
        return None
    if scenario.scripted_calls == "forever":
        return MAX_LEAVE_FRAMES
    # About a frame per chunk, two per function call (tool_call, tool_result), a message per
    # turn and the done frame.
    frames = sum(len(turn.chunks) + len(turn.function_calls) + 1 for turn in scenario.model)
    return min(frames + 1, MAX_LEAVE_FRAMES)


def _model_active(scenario: GatewayScenario) -> float | None:
    """Until when (scenario seconds) the fake model's script sends, about: its waits added up,
    plus a second; ``None`` when a turn repeats for ever."""
    if scenario.scripted_calls == "forever":
        return None
    waits = 0.0
    for turn in scenario.model:
        delays = [c.delay if c.delay is not None else turn.chunk_delay for c in turn.chunks]
        waits += (sum(delays) if delays else turn.chunk_delay) * int(turn.times)
    return waits + 1.0


def _turn_shapes(scenario: GatewayScenario) -> tuple[tuple[int, ...], ...]:
    """Per model turn, each chunk's text length (0: a function call); ``()`` for a turn that
    fails already (an HTTP or stream error): it is left alone."""
    shapes: list[tuple[int, ...]] = []
    for turn in scenario.model:
        if turn.is_error or not turn.chunks:
            shapes.append(())
            continue
        shapes.append(tuple(len(c.text) if isinstance(c, TextChunk) else 0 for c in turn.chunks))
    return tuple(shapes)


def _absolute_fixtures(data: Any, scenario_file: Path) -> Any:
    """``data`` with every ``fixture:`` path replaced by the file it names, resolved from
    ``scenario_file``'s folder up (left as written when it names no file: the loader said so
    already)."""
    if isinstance(data, dict):
        out: dict[str, Any] = {}
        for key, value in data.items():
            if key == "fixture" and isinstance(value, str):
                try:
                    out[key] = str(resolve_fixture(value, scenario_file))
                except ValueError:
                    out[key] = value
            else:
                out[key] = _absolute_fixtures(value, scenario_file)
        return out
    if isinstance(data, list):
        return [_absolute_fixtures(item, scenario_file) for item in data]
    return data


@dataclass
class _State:
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


def _fmt_s(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class _Explorer:
    def __init__(
        self, opts: Options, scenario: _Scenario, err: TextIO, loop: BackgroundLoop
    ) -> None:
        self.opts = opts
        self.scenario = scenario
        self.err = err
        self.loop = loop
        self.env: Environment | None = None
        self.reference: Environment | None = None
        """The correct reference that screens found plans (started on first need)."""
        self.screening = opts.bug is not None or opts.screen
        self.state = _State()
        self.deadline = self.state.started + opts.time_budget
        self._last_progress = 0.0
        intended = suite(scenario.kind).INTENDED
        self.intended = intended.get(opts.bug) if opts.bug else None

    # --- output ---

    def say(self, text: str) -> None:
        print(f"explore: {text}", file=self.err, flush=True)

    def progress(self, force: bool = False) -> None:
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
            f"{s.tried} example(s) tried, {_fmt_s(self.deadline - now)} left; "
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


class _Found(Exception):
    """Raised inside the hypothesis test when a plan breaks the requirement searched for."""


def _find(
    explorer: _Explorer,
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
            raise _Found

    for plan in reversed(known):
        inner = example(plan)(inner)
    test = config(given(plans(space))(inner))
    if seed_value is not None:
        test = seed(seed_value)(test)
    try:
        test()
    except _Found:
        return last[0] if last else None
    except BaseExceptionGroup as group:
        if group.subgroup(_Found) is not None and last:
            return last[0]
        raise
    except (NoSuchExample, Unsatisfiable):
        return None
    return None


class _KnownFailures:
    """The plans this search found before, in ``<db>/known/<key>.json``, newest last."""

    def __init__(self, folder: Path, key: bytes) -> None:
        self.path = folder / "known" / f"{key.hex()[:32]}.json"

    def load(self) -> list[Plan]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return [p for p in data if isinstance(p, dict)] if isinstance(data, list) else []

    def add(self, plan: Plan) -> None:
        plans_ = [p for p in self.load() if p != plan][-9:]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps([*plans_, plan], indent=1), encoding="utf-8")


def _database_key(opts: Options, scenario: _Scenario) -> bytes:
    what = [scenario.id, scenario.file, opts.target or "", opts.bug or ""]
    if opts.strict:
        what.append("strict")
    if opts.requirement:
        what.append(opts.requirement)
    return hashlib.sha256("\0".join(what).encode()).digest()


def _rerun_command(opts: Options, path: Path) -> str:
    parts = ["streamproof", "run", str(path)]
    if opts.target:
        parts += ["--target", opts.target]
    if opts.bug:
        parts += ["--bug", opts.bug]
    if opts.time_scale != DEFAULT_TIME_SCALE:
        parts += ["--time-scale", f"{opts.time_scale:g}"]
    if opts.strict:
        parts.append("--strict")
    return " ".join(parts)


def _check_options(opts: Options) -> None:
    if opts.max_examples < 1:
        raise ExploreError("--max-examples must be 1 or more")
    if not opts.time_budget > 0:
        raise ExploreError("--time-budget must be a positive duration")
    if not opts.time_scale > 0:
        raise ExploreError("--time-scale must be a positive number")


def _check_target(opts: Options, kind: str) -> None:
    if opts.requirement is not None:
        from streamproof.core.requirements import REGISTRY

        suite(kind)  # registers the suite's requirements
        known = REGISTRY.get(opts.requirement)
        if known is None or not opts.requirement.startswith(_PREFIX[kind]):
            raise ExploreError(
                f"--requirement {opts.requirement}: no requirement of the {kind} suite has that id"
            )
        if known.level != Level.MUST and not opts.strict:
            raise ExploreError(
                f"--requirement {opts.requirement} is a {known.level}: it counts with --strict"
            )
    if opts.target is not None:
        from streamproof.suites.input_files import check_target_file

        checked = check_target_file(opts.target)
        if checked.problems:
            raise ExploreError("\n".join(map(str, checked.problems)))
        target_kind = checked.target_kind or "gateway"
        if target_kind != kind:
            raise ExploreError(
                f"--target {opts.target} is of kind {target_kind}, the scenario of kind {kind}"
            )
        try:
            suite(kind).load_target(opts.target)
        except TargetConfigError as exc:
            raise ExploreError(str(exc)) from None
    if opts.bug is not None:
        from streamproof.suites import known_bugs

        names = known_bugs(opts.target)
        if opts.bug not in names:
            raise ExploreError(f"--bug {opts.bug}: unknown; choose one of {', '.join(names)}")


def explore(opts: Options, err: TextIO | None = None, out: TextIO | None = None) -> int:
    """Run the search; the exit status (see the module's ``EXIT_*``). Progress goes to ``err``,
    the outcome to ``out`` (default: the process's stderr and stdout)."""
    err = err if err is not None else sys.stderr
    out = out if out is not None else sys.stdout
    try:
        _check_options(opts)
        scenario, had_faults = load_scenario(opts.scenario)
        _check_target(opts, scenario.kind)
    except ExploreError as exc:
        print(f"streamproof explore: {exc}", file=err)
        return EXIT_BAD_INPUT
    interrupts = Interrupts()
    interrupts.install()
    loop = BackgroundLoop()
    explorer = _Explorer(opts, scenario, err, loop)
    try:
        if had_faults:
            explorer.say(f"{scenario.id}: its link faults are removed; the search plans its own")
        try:
            explorer.start()
        except (TargetError, TargetConfigError, TimeoutError, OSError) as exc:
            print(f"streamproof explore: the target could not start: {exc}", file=err)
            return EXIT_TARGET
        try:
            return _search(explorer, opts, scenario, out)
        except ScenarioSkipped as exc:
            print(f"streamproof explore: {scenario.id} cannot run on this target: {exc}", file=err)
            return EXIT_BAD_INPUT
        except TargetError as exc:
            print(f"streamproof explore: the target failed: {exc}", file=err)
            return EXIT_TARGET
        except (TargetConfigError, TimeoutError, OSError) as exc:
            # Only the screening reference starts mid-search.
            print(
                f"streamproof explore: the reference that screens could not start: {exc}", file=err
            )
            return EXIT_TARGET
    except KeyboardInterrupt:
        explorer.say("interrupted; closing the target and the fakes")
        return interrupts.exit_status or 130
    finally:
        interrupts.hold()
        for env in (explorer.env, explorer.reference):
            if env is not None:
                with contextlib.suppress(Exception):
                    loop.run(env.close(), timeout=30)
        loop.close()
        interrupts.restore()


def _search(explorer: _Explorer, opts: Options, scenario: _Scenario, out: TextIO) -> int:
    db_dir = opts.out / "explore" / ".hypothesis"
    config = settings(
        max_examples=opts.max_examples,
        deadline=None,
        database=DirectoryBasedExampleDatabase(str(db_dir)),
        phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
    )
    places = ", ".join(scenario.space.places)
    what = "MUST and SHOULD" if opts.strict else "MUST"
    screening = " (found plans screened on the reference)" if explorer.screening else ""
    explorer.say(
        f"searching fault plans on {places} for {what} failures{screening} of {scenario.id} "
        f"(horizon {scenario.horizon:g}s; at most {opts.max_examples} examples, "
        f"{_fmt_s(opts.time_budget)})"
    )
    state = explorer.state
    known = _KnownFailures(db_dir, _database_key(opts, scenario))
    found = _find(explorer, scenario.space, config, opts.seed, known.load())
    if found is not None:
        # Hypothesis's shrinker may keep an element that plays no part: each alone is tried.
        for alone in single_elements(found):
            if explorer.condition(alone, finishing=True):
                explorer.say(f"one element alone breaks it too: {describe_plan(alone)}")
                found = alone
                break
    wall = time.monotonic() - state.started
    explorer.progress(force=True)
    if state.suspected:
        shown = "; ".join(f"{r} under {p}" for r, p in state.suspected[:5])
        print(
            f"suspected harness problems: the reference broke {len(state.suspected)} "
            f"requirement(s) under plans this search found too, skipped: {shown}",
            file=out,
        )
    if found is None or state.requirement is None:
        why = "the time budget ran out" if state.out_of_time else "the examples ran out"
        level = "MUST or SHOULD" if opts.strict else "MUST"
        print(
            f"nothing broke: {state.tried} fault plan(s) tried on {scenario.id} in "
            f"{wall:.0f}s broke no {level} ({why})",
            file=out,
        )
        return EXIT_NOTHING
    requirement = state.requirement
    # The shrunk plan first; if a timing wobble let a plan that does not break the requirement
    # through the shrinking, the plans that broke it before (the latest first) get their turn.
    candidates = [found, *(p for p in reversed(state.failing) if p != found)][:RERUN_TRIES]
    again: dict[str, str] = {}
    for tried, candidate in enumerate(candidates):
        what = "the shrunk plan" if tried == 0 else "an earlier plan that broke it"
        if tried:  # an earlier plan was not shrunk: one of its elements alone may do
            for alone in single_elements(candidate):
                if explorer.condition(alone, finishing=True):
                    explorer.say(f"one element alone breaks it too: {describe_plan(alone)}")
                    candidate = alone
                    break
        explorer.say(
            f"rerunning {what} once, on a freshly started target: {describe_plan(candidate)}"
        )
        try:
            explorer.restart()
        except (TargetError, TargetConfigError, TimeoutError, OSError) as exc:
            print(f"streamproof explore: the target could not restart: {exc}", file=out)
            return EXIT_TARGET
        again = explorer.run_plan(candidate)
        if requirement in again:
            found = candidate
            break
        print(
            f"not reproducible: {describe_plan(candidate)} broke {requirement} once, but not "
            f"when rerun ({', '.join(sorted(again)) or 'nothing'} broke)",
            file=out,
        )
    else:
        print("nothing written", file=out)
        return EXIT_NOTHING
    folder = opts.out / "explore"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / reproducer_file_name(scenario.id, requirement)
    rerun = _rerun_command(opts, path)
    text = reproducer_text(
        scenario.data,
        found,
        Provenance(
            scenario_file=scenario.file,
            scenario_id=scenario.id,
            requirement=requirement,
            target=opts.target or f"bundled {scenario.kind} reference",
            bug=opts.bug,
            seed=opts.seed,
            examples=state.tried,
            wall_s=wall,
            fault=describe_plan(found),
            rerun=rerun,
            message=again[requirement],
        ),
        scenario.turns,
    )
    path.write_text(text, encoding="utf-8")
    known.add(found)
    print(
        f"{requirement} broken by {describe_plan(found)} after {state.tried} example(s) in "
        f"{wall:.0f}s; reproducer: {path}\nrerun: {rerun}",
        file=out,
    )
    return EXIT_FOUND
