"""The per-process harness session behind the pytest items, and the JSON report it writes.

One :class:`HarnessSession` per pytest process: it starts the environment (fakes and target)
on first use, runs each scenario item through the runner, renders failures for humans and
records every result for ``results.json``, which a CI gate can read.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from harness.durations import DEFAULT_TIME_SCALE
from harness.loop import BackgroundLoop
from harness.requirements import REGISTRY
from harness.runner import GatewayEnvironment, ScenarioResult, ScenarioSkipped
from harness.targets.errors import TargetConfigError, TargetError
from harness.targets.gateway import load_target
from harness.verdicts import Outcome, Verdict

if TYPE_CHECKING:
    from harness.pytest_plugin import ScenarioItem

REPORT_VERSION = 1
START_BUDGET = 180.0
"""Seconds the harness gives the environment to start (the target's own ready timeout is
shorter and gives the precise message)."""


def session_for(config: pytest.Config, key: pytest.StashKey[HarnessSession]) -> HarnessSession:
    holder = config.stash.get(key, None)
    if holder is None:
        holder = HarnessSession(config)
        config.stash[key] = holder
    return holder


class HarnessSession:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.target_file: str | None = config.getoption("--streamproof-target")
        self.bug: str | None = config.getoption("--streamproof-bug")
        self.time_scale: float = config.getoption("--streamproof-time-scale") or DEFAULT_TIME_SCALE
        self.strict: bool = config.getoption("--streamproof-strict")
        report_dir = config.getoption("--streamproof-report-dir")
        self.report_dir = Path(report_dir) if report_dir else None
        self.records: list[dict[str, Any]] = []
        self.started_at = dt.datetime.now(dt.UTC)
        self._t0 = time.monotonic()
        self._loop: BackgroundLoop | None = None
        self._env: GatewayEnvironment | None = None
        self._start_error: BaseException | None = None

    # --- environment ----------------------------------------------------------------------

    def _environment(self) -> GatewayEnvironment:
        if self._start_error is not None:
            raise self._start_error
        if self._env is None:
            try:
                target = load_target(self.target_file)
                env = GatewayEnvironment(target, bug=self.bug, time_scale=self.time_scale)
                self._loop = BackgroundLoop()
                self._loop.run(env.start(), timeout=START_BUDGET)
            except (TargetError, TargetConfigError, TimeoutError, OSError) as exc:
                self._start_error = exc
                raise
            self._env = env
        return self._env

    def run_item(self, item: ScenarioItem) -> str | None:
        """Run one scenario; the failure report, or None when every enforced rule holds."""
        scenario = item.loaded.scenario
        record: dict[str, Any] = {
            "id": scenario.id,
            "title": scenario.title,
            "file": item.loaded.file,
            "line": item.loaded.line,
            "kind": scenario.kind,
            "requirements": list(scenario.requirements),
        }
        self.records.append(record)
        started = time.monotonic()
        try:
            env = self._environment()
            record["target"] = env.target_label
            assert self._loop is not None
            budget = env.scale(scenario.limits.run_timeout) + 60.0
            result = self._loop.run(env.run(scenario), timeout=budget)
        except ScenarioSkipped as exc:
            record.update(outcome="skipped", error=str(exc))
            pytest.skip(str(exc))
        except BaseException as exc:
            record.update(outcome="failed", error=f"{type(exc).__name__}: {exc}")
            raise
        finally:
            record["duration_s"] = round(time.monotonic() - started, 3)
        record["verdicts"] = [v.model_dump(mode="json") for v in result.verdicts]
        record["observation"] = result.observation.model_dump(mode="json")
        for verdict in result.verdicts:
            item.user_properties.append((verdict.requirement, verdict.outcome.value))
        enforced = [v for v in result.verdicts if self._enforced(v)]
        record["outcome"] = "failed" if enforced else "passed"
        return render_failure(scenario.id, result, enforced) if enforced else None

    def _enforced(self, verdict: Verdict) -> bool:
        return verdict.outcome is Outcome.FAIL or (
            self.strict and verdict.outcome is Outcome.NON_STRICT
        )

    # --- end of session -------------------------------------------------------------------

    def finish(self, exitstatus: int) -> None:
        try:
            if self._env is not None and self._loop is not None:
                try:
                    self._loop.run(self._env.close(), timeout=30)
                except Exception:
                    pass
        finally:
            if self._loop is not None:
                self._loop.close()
            if self.report_dir is not None:
                self.write_report(exitstatus)

    def write_report(self, exitstatus: int) -> Path:
        assert self.report_dir is not None
        self.report_dir.mkdir(parents=True, exist_ok=True)
        path = self.report_dir / "results.json"
        path.write_text(json.dumps(self.report(exitstatus), indent=2) + "\n", encoding="utf-8")
        return path

    def report(self, exitstatus: int) -> dict[str, Any]:
        outcomes = [r.get("outcome", "failed") for r in self.records]
        per_requirement: dict[str, dict[str, Any]] = {}
        for record in self.records:
            for verdict in record.get("verdicts", []):
                entry = per_requirement.setdefault(
                    verdict["requirement"],
                    {"level": verdict["level"], **{o.value: 0 for o in Outcome}, "scenarios": []},
                )
                entry[verdict["outcome"]] += 1
                if verdict["outcome"] in (Outcome.FAIL.value, Outcome.NON_STRICT.value):
                    entry["scenarios"].append(record["id"])
        must_failures = sum(
            1
            for r in self.records
            for v in r.get("verdicts", [])
            if v["outcome"] == Outcome.FAIL.value
        )
        return {
            "tool": "streamproof",
            "report_version": REPORT_VERSION,
            "target_file": self.target_file,
            "bug": self.bug,
            "time_scale": self.time_scale,
            "strict": self.strict,
            "started_at": self.started_at.isoformat(),
            "duration_s": round(time.monotonic() - self._t0, 3),
            "pytest_exit_status": int(exitstatus),
            "summary": {
                "scenarios": len(self.records),
                "passed": outcomes.count("passed"),
                "failed": outcomes.count("failed"),
                "skipped": outcomes.count("skipped"),
                "must_failures": must_failures,
                "ok": "failed" not in outcomes,
            },
            "requirements": {
                rid: {"statement": REGISTRY[rid].statement, **entry}
                for rid, entry in sorted(per_requirement.items())
                if rid in REGISTRY
            },
            "scenarios": self.records,
            "environment": {"pid": os.getpid()},
        }


def render_failure(scenario_id: str, result: ScenarioResult, failing: list[Verdict]) -> str:
    obs = result.observation
    lines = [f"scenario {scenario_id} on target {obs.target}: {len(failing)} requirement(s) broken"]
    for verdict in failing:
        lines.append(verdict.render())
    lines.append("")
    lines.append(
        f"response: status={obs.response.status} content-type={obs.response.content_type} "
        f"end={obs.response.end}" + (f" ({obs.response.error})" if obs.response.error else "")
    )
    lines.append("frames:")
    lines.append(obs.frame_log(limit=30))
    lines.append(f"model calls: {len(obs.model_calls)}")
    for call in obs.model_calls[:8]:
        what = call.error_sent or call.function_calls_sent or repr(call.text_sent[:60])
        lines.append(
            f"  #{call.index} t={call.t:.3f}s status={call.status} completed={call.completed} "
            f"closed_early={call.closed_early} sent={what}"
        )
    if obs.tool_calls:
        lines.append("tool calls: " + ", ".join(f"{c.tool}@{c.t:.3f}s" for c in obs.tool_calls))
    if obs.history is not None:
        lines.append(f"stored history: {len(obs.history)} event(s)")
    elif obs.history_error:
        lines.append(f"history: {obs.history_error}")
    if obs.target_log:
        tail = "\n".join(obs.target_log.splitlines()[-15:])
        lines.append("target output (tail):\n" + tail)
    return "\n".join(lines)
