"""A client behind a forward proxy: it is given the agent's own address and HTTP_PROXY, the
link is that proxy, and a client that does not declare proxy_env is not judged on it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.tests.conftest import require_module
from streamproof.suites.a2a_client.target import ClientTarget, client_environment

ROOT = Path(__file__).resolve().parents[4]
SCENARIO = ROOT / "scenarios/a2a_client/proxy_timeout_through_a_forward_proxy.yaml"


def _run(tmp_path: Path, *extra: str, status: int = 0) -> dict[str, object]:
    args = [str(SCENARIO), "--full-observations", "--report-dir", str(tmp_path), *extra]
    run = subprocess.run(
        [sys.executable, "-m", "streamproof.cli", "run", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == status, run.stdout[-4000:] + run.stderr[-2000:]
    scenarios = json.loads((tmp_path / "results.json").read_text())["scenarios"]
    # the plain id is the JSON-RPC run; a target declaring REST also has the [rest] one
    assert all(s["outcome"] == scenarios[0]["outcome"] for s in scenarios), scenarios
    scenario = scenarios[0]
    assert isinstance(scenario, dict) and not scenario["id"].endswith("]")
    return scenario


def test_the_environment_points_http_proxy_at_the_link_and_exempts_nothing() -> None:
    target = ClientTarget.model_validate({"command": ["client"]})
    env = client_environment(
        target,
        url="http://127.0.0.1:9000",
        prompt="hi",
        deadline_s=9,
        idle_s=2,
        proxy="http://127.0.0.1:9100",
    )
    assert env["STREAMPROOF_A2A_URL"] == "http://127.0.0.1:9000"  # the agent's own address
    assert env["HTTP_PROXY"] == env["http_proxy"] == "http://127.0.0.1:9100"
    assert env["NO_PROXY"] == env["no_proxy"] == ""
    plain = client_environment(target, url="u", prompt="p", deadline_s=9, idle_s=2)
    assert "HTTP_PROXY" not in plain or plain["HTTP_PROXY"] != "http://127.0.0.1:9100"


@pytest.mark.slow  # end to end on real parts (make check leaves it to make test)
def test_the_reference_client_recovers_through_the_forward_proxy(tmp_path: Path) -> None:
    require_module("a2a")
    scenario = _run(tmp_path)
    assert scenario["outcome"] == "passed"
    # every call went through the link, although the client was given the agent's address
    observation = scenario["observation"]
    assert isinstance(observation, dict)
    rpcs = [e["rpc"] for e in observation["link_events"] if e["kind"] == "request" and e["rpc"]]
    assert rpcs[:3] == ["message/stream", "tasks/get", "tasks/resubscribe"]


def test_a_client_that_does_not_declare_proxy_env_is_skipped_with_the_reason(
    tmp_path: Path,
) -> None:
    reference = yaml.safe_load(
        (ROOT / "harness/streamproof/suites/a2a_client/reference-client.yaml").read_text(
            encoding="utf-8"
        )
    )
    reference["capabilities"] = ["follow_up"]
    reference["bindings"] = ["jsonrpc"]  # one run: the JSON-RPC one
    target = tmp_path / "client.yaml"
    target.write_text(yaml.safe_dump(reference))
    # its one scenario skipped, the run judged nothing: exit 2, never a green gate
    scenario = _run(tmp_path, "--target", str(target), status=2)
    assert scenario["outcome"] == "skipped"
    assert "proxy_env" in str(scenario["error"])
