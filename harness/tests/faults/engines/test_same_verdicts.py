"""The seed's proxy-timeout story and a mid-stream reset give the same verdicts through every
engine as through the inline one (issue 11: the plan names the effect, the engine only
produces it).

The two scenarios are the bundled ones with their per-request matching taken out, since
toxiproxy cannot tell one request from another: the stall after 40 s and the reset after the
second event then apply to every response of the link, which changes nothing here (the
recovery's resubscribe ends long before 40 s; the model's first call has a single event).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.tests.conftest import require_engine, require_module
from streamproof.faults.engines import ENGINES, EngineUnavailable, open_engine

# Slow: runs the same scenarios through every fault engine.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[4]

Verdicts = dict[str, list[tuple[str, str]]]
Runs = dict[str, "Future[Verdicts]"]


def _without_matching(path: str) -> dict[str, Any]:
    scenario = yaml.safe_load((ROOT / path).read_text(encoding="utf-8"))
    for plan in scenario["links"].values():
        for fault in plan:
            for key in ("method", "path", "rpc", "occurrence"):
                fault.get("when", {}).pop(key, None)
    return scenario


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("same-verdicts") / "scenarios"
    folder.mkdir()
    story = _without_matching("scenarios/a2a_client/summary_survives_proxy_timeout.yaml")
    reset = _without_matching("scenarios/gateway/model_link_reset.yaml")
    (folder / "story.yaml").write_text(yaml.safe_dump(story, sort_keys=False))
    (folder / "reset.yaml").write_text(yaml.safe_dump(reset, sort_keys=False))
    # The story replays a canned stream: its fixture path is found from the scenario's folder up.
    shutil.copytree(ROOT / "fixtures", folder.parent / "fixtures")
    return folder


def _run(report_dir: Path, *args: str) -> Any:
    """``streamproof run ARGS`` into ``report_dir``, exit 0; its results.json."""
    run = subprocess.run(
        [sys.executable, "-m", "streamproof.cli", "run", *args, "--report-dir", str(report_dir)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    return json.loads((report_dir / "results.json").read_text())


def _verdicts(folder: Path, engine: str, report_dir: Path) -> Verdicts:
    report = _run(report_dir, str(folder), "--engine", engine, "-q")
    assert {s["outcome"] for s in report["scenarios"]} == {"passed"}
    return {
        s["id"]: sorted((v["requirement"], v["outcome"]) for v in s["verdicts"])
        for s in report["scenarios"]
    }


@pytest.fixture(scope="module")
def runs(scenarios: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    """Every engine's run of the scenarios, started together: each mostly waits on scripted
    time (a stall of seconds), so the three overlap instead of queueing one after another."""
    require_module("google.adk")
    require_module("a2a")
    with ThreadPoolExecutor(len(ENGINES)) as pool:
        yield {
            engine: pool.submit(_verdicts, scenarios, engine, tmp_path_factory.mktemp(engine))
            for engine in ENGINES
            if engine == "inline" or _available(engine)
        }


def _available(engine: str) -> bool:
    """Whether this machine runs ``engine`` (the test that needs it says why when it does not)."""
    try:
        open_engine(engine)
    except EngineUnavailable:
        return False
    return True


@pytest.mark.parametrize("engine", [e for e in ENGINES if e != "inline"])
def test_every_engine_gives_the_inline_engines_verdicts(engine: str, runs: Runs) -> None:
    require_engine(engine)
    verdicts = runs[engine].result()
    assert verdicts == runs["inline"].result()
    assert len(verdicts) == 3  # the story on JSON-RPC and on REST, the gateway reset


@pytest.mark.parametrize("engine", ["inline", "mitmproxy"])
def test_a_fault_naming_an_rpc_fires_on_the_rest_request_of_that_method(
    engine: str, tmp_path: Path
) -> None:
    """``when: {rpc: message/stream, occurrence: 1, after_event: 4}`` resets the REST stream
    (``POST /message:stream``) as it resets the JSON-RPC one, on every engine that matches by
    method (toxiproxy matches no request and refuses the plan for both bindings)."""
    require_module("a2a")
    require_engine(engine)
    scenarios = ROOT / "scenarios/a2a_client/on_every_binding.yaml"
    report = _run(tmp_path, str(scenarios), "-k", "wire-1-0-reset-mid-stream", "--engine", engine)
    by_id = {s["id"]: s for s in report["scenarios"]}
    assert set(by_id) == {
        "a2a_client/wire-1-0-reset-mid-stream",
        "a2a_client/wire-1-0-reset-mid-stream[rest]",
    }
    for record in by_id.values():
        assert record["outcome"] == "passed" and record["engines"] == {"a2a": engine}
        assert record["observation"]["faults_fired"] == 1, record["id"]
        judged = {v["requirement"]: v["outcome"] for v in record["verdicts"]}
        assert judged["A2A-C-RECOVERY"] == "pass", record["id"]
