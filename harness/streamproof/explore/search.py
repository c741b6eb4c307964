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
from pathlib import Path
from typing import TextIO

from hypothesis import HealthCheck, Phase, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from streamproof.core.capabilities import ScenarioSkipped
from streamproof.core.durations import DEFAULT_TIME_SCALE
from streamproof.explore.explorer import Explorer, Plan, find, fmt_s
from streamproof.explore.options import ExploreError, Options, check_options, check_target
from streamproof.explore.reproducer import Provenance, reproducer_text
from streamproof.explore.reproducer import file_name as reproducer_file_name
from streamproof.explore.scenario import SearchedScenario, load_scenario
from streamproof.explore.space import describe_plan, single_elements
from streamproof.runtime.interrupts import Interrupts
from streamproof.runtime.loop import BackgroundLoop
from streamproof.targets.errors import TargetConfigError, TargetError

__all__ = [
    "EXIT_BAD_INPUT",
    "EXIT_FOUND",
    "EXIT_NOTHING",
    "EXIT_TARGET",
    "Options",
    "explore",
]

EXIT_NOTHING, EXIT_FOUND, EXIT_BAD_INPUT, EXIT_TARGET = 0, 1, 2, 3

RERUN_TRIES = 3
"""How many plans that broke the requirement are rerun on a fresh target, at most, before the
search says it is not reproducible."""


class KnownFailures:
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


def database_key(opts: Options, scenario: SearchedScenario) -> bytes:
    what = [scenario.id, scenario.file, opts.target or "", opts.bug or ""]
    if opts.strict:
        what.append("strict")
    if opts.requirement:
        what.append(opts.requirement)
    return hashlib.sha256("\0".join(what).encode()).digest()


def rerun_command(opts: Options, path: Path) -> str:
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


def explore(opts: Options, err: TextIO | None = None, out: TextIO | None = None) -> int:
    """Run the search; the exit status (see the module's ``EXIT_*``). Progress goes to ``err``,
    the outcome to ``out`` (default: the process's stderr and stdout)."""
    err = err if err is not None else sys.stderr
    out = out if out is not None else sys.stdout
    try:
        check_options(opts)
        scenario, had_faults = load_scenario(opts.scenario)
        check_target(opts, scenario.kind)
    except ExploreError as exc:
        print(f"streamproof explore: {exc}", file=err)
        return EXIT_BAD_INPUT
    interrupts = Interrupts()
    interrupts.install()
    loop = BackgroundLoop()
    explorer = Explorer(opts, scenario, err, loop, interrupts)
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


def _search(explorer: Explorer, opts: Options, scenario: SearchedScenario, out: TextIO) -> int:
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
        f"{fmt_s(opts.time_budget)})"
    )
    state = explorer.state
    known = KnownFailures(db_dir, database_key(opts, scenario))
    found = find(explorer, scenario.space, config, opts.seed, known.load())
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
    rerun = rerun_command(opts, path)
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
