"""A gateway scenario can name the engine of its model link: the gateway is restarted behind a
model link of that engine, and the next scenario on the run's engine gets it back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.tests.conftest import require_module

ROOT = Path(__file__).resolve().parents[4]


@pytest.mark.slow  # end to end on real parts (make check leaves it to make test)
def test_a_scenario_naming_its_model_engine_runs_on_it_and_the_next_one_returns(
    tmp_path: Path,
) -> None:
    require_module("google.adk")
    require_module("mitmproxy")
    source = yaml.safe_load((ROOT / "scenarios/gateway/model_link_reset.yaml").read_text())
    folder = tmp_path / "scenarios"
    folder.mkdir()
    documents = []
    for suffix, engine in (("a-inline", None), ("b-mitmproxy", "mitmproxy"), ("c-inline", None)):
        doc = {**source, "id": f"gateway/reset-{suffix}"}
        if engine is not None:
            doc["links"] = {**doc["links"], "engine": {"model": engine}}
        documents.append(doc)
    (folder / "resets.yaml").write_text(yaml.safe_dump_all(documents, sort_keys=False))
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "streamproof.cli",
            "run",
            str(folder),
            "--report-dir",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    report = json.loads((tmp_path / "results.json").read_text())
    outcomes = {s["id"]: s["outcome"] for s in report["scenarios"]}
    assert outcomes == dict.fromkeys(outcomes, "passed") and len(outcomes) == 3
    engines = [s["engines"] for s in report["scenarios"]]
    assert engines == [
        {"model": "inline", "browser": "inline"},
        {"model": "mitmproxy", "browser": "inline"},
        {"model": "inline", "browser": "inline"},
    ]
    # the same verdicts whichever engine cut the model's stream
    verdicts = [
        sorted((v["requirement"], v["outcome"]) for v in s["verdicts"]) for s in report["scenarios"]
    ]
    assert verdicts[0] == verdicts[1] == verdicts[2]
