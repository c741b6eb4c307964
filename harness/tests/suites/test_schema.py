"""The JSON Schemas describe what the loader accepts: every bundled scenario and target file
validates against them (Draft 2020-12), the short forms are in them, and what the loader
rejects for its shape they reject too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator, ValidationError

from streamproof.suites.loading import ScenarioError, parse_scenarios
from streamproof.suites.schema import DIALECT, scenario_schema, target_schema

ROOT = Path(__file__).resolve().parents[3]
SCENARIO_FILES = sorted((ROOT / "scenarios").rglob("*.yaml"))
TARGET_FILES = sorted(
    [
        *(ROOT / "harness" / "streamproof" / "suites").glob("*/reference-*.yaml"),
        *(ROOT / "harness" / "tests" / "independent").glob("*.yaml"),
    ]
)


@pytest.fixture(scope="module")
def scenarios() -> Draft202012Validator:
    schema = scenario_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@pytest.fixture(scope="module")
def targets() -> Draft202012Validator:
    schema = target_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _problems(validator: Draft202012Validator, doc: Any) -> list[str]:
    """Every error, and inside a ``oneOf``/``anyOf`` every branch's errors, as ``path: message``."""
    out: list[str] = []
    pending: list[ValidationError] = list(validator.iter_errors(doc))
    while pending:
        error = pending.pop(0)
        out.append(f"{'.'.join(map(str, error.absolute_path)) or '(document)'}: {error.message}")
        pending += error.context or []
    return out


def test_all_are_2020_12_unions_by_kind() -> None:
    for schema, members in (
        (scenario_schema(), ["GatewayScenario", "A2AClientScenario", "BrowserClientScenario"]),
        (target_schema(), ["GatewayTarget", "ClientTarget", "BrowserTarget"]),
    ):
        assert schema["$schema"] == DIALECT
        assert schema["oneOf"] == [{"$ref": f"#/$defs/{m}"} for m in members]
        gateway, *others = (schema["$defs"][m] for m in members)
        # A document without kind is a gateway one; every other kind must say so.
        assert "kind" not in gateway.get("required", [])
        assert gateway["properties"]["kind"]["const"] == "gateway"
        assert all("kind" in other["required"] for other in others)


def test_bundled_files_are_found() -> None:
    assert len(SCENARIO_FILES) >= 30
    assert {p.name for p in TARGET_FILES} >= {"reference-gateway.yaml", "reference-client.yaml"}


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_bundled_scenario_document_validates(
    path: Path, scenarios: Draft202012Validator
) -> None:
    documents = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
    assert documents
    for doc in documents:
        assert _problems(scenarios, doc) == [], doc.get("id")


@pytest.mark.parametrize("path", TARGET_FILES, ids=lambda p: p.name)
def test_every_bundled_target_file_validates(path: Path, targets: Draft202012Validator) -> None:
    assert _problems(targets, yaml.safe_load(path.read_text(encoding="utf-8"))) == []


SHORT_FORMS = """\
id: gateway/short-forms
title: every short form the loader reads
requirements: [GW-SSE-RESPONSE]
model:
  - chunks: ["a text chunk", {text: b, delay: 20ms}]
    chunk_delay: 0.05
  - {http_error: {code: 503}}
request: hello
limits: {run_timeout: 1.5m, dispose_within: 2}
links:
  browser:
    - {when: {after_event: 1}, do: rst}
    - {when: {after: 2s}, do: {stall: {for: 1s}}}
    - do: {status: 502}
    - do: {status: 503, body: "<html/>", content_type: text/html}
    - do: {delay: 250ms}
    - {when: {after_event: 1}, do: split}
    - {when: {after_event: 1}, do: {fin: null}}
expect:
  frames: (tool_call|tool_result)* delta+ message done
  history: user error?
"""

A2A_SHORT_FORMS = """\
id: a2a_client/short-forms
title: every short form of a client scenario
kind: a2a-client
requirements: [A2A-C-RECOVERY]
client: {deadline: 90s, idle: 20}
reply: Hello
server: {wire: 1.0, cancel: honor, ping_every: 15s}
expect:
  ledger: message/stream tasks/get*
"""


@pytest.mark.parametrize("text", [SHORT_FORMS, A2A_SHORT_FORMS])
def test_the_short_forms_are_in_the_schema(text: str, scenarios: Draft202012Validator) -> None:
    parse_scenarios(text, "short.yaml")  # the loader reads them ...
    assert _problems(scenarios, yaml.safe_load(text)) == []  # ... and the schema says so


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ("chunk_delay: 0.05", "chunk_delay: soon", "model.0.chunk_delay"),
        ("chunk_delay: 0.05", "chunk_delay: -1", "model.0.chunk_delay"),
        ("request: hello", "requets: hello", "(document)"),
        ("delta+ message", "delta+ mesage", "expect.frames"),
        ("user error?", "user eror?", "expect.history"),
        ("do: rst}", "do: rest}", "links.browser.0.do"),
        ("do: {delay: 250ms}", "do: {delay: 250ms, rst: true}", "links.browser.4.do"),
        ("do: {delay: 250ms}", "do: {delay: null}", "links.browser.4.do"),
        ("do: {status: 502}", "do: {status: 99}", "links.browser.2.do"),
        ("kind: a2a-client", "kind: a2a-server", "(document)"),
        ("kind: a2a-client\n", "", "(document)"),  # without kind it is a gateway document
        ("wire: 1.0", "wire: 2.0", "server.wire"),
        ("tasks/get*", "tasks/gett*", "expect.ledger"),
    ],
)
def test_invalid_documents_are_rejected_by_schema_and_loader(
    old: str, new: str, where: str, scenarios: Draft202012Validator
) -> None:
    text = SHORT_FORMS if old in SHORT_FORMS else A2A_SHORT_FORMS
    assert old in text
    bad = text.replace(old, new)
    problems = _problems(scenarios, yaml.safe_load(bad))
    assert problems, bad
    assert any(p.startswith(f"{where}:") for p in problems), problems
    with pytest.raises(ScenarioError):
        parse_scenarios(bad, "bad.yaml")


@pytest.mark.parametrize(
    ("doc", "where"),
    [
        ({"kind": "gateway", "command": ["x"], "port": "any"}, "port"),
        (
            {"kind": "gateway", "url": "http://127.0.0.1:1", "ready": {"timeout": "soon"}},
            "ready.timeout",
        ),
        ({"kind": "a2a-client", "name": "no command"}, "(document)"),
        ({"command": ["x"], "startup_grace": "2s"}, "(document)"),  # a gateway has none
        ({"kind": "a2a-client", "command": ["x"], "wires": ["0.2"]}, "wires.0"),
    ],
)
def test_invalid_target_files_are_rejected(
    doc: dict[str, Any], where: str, targets: Draft202012Validator
) -> None:
    problems = _problems(targets, doc)
    assert any(p.startswith(f"{where}:") for p in problems), problems


FIXTURE_FORMS = [
    """\
id: gateway/fixture-forms
title: model turns from canned streams
requirements: [GW-FRAME-SEQUENCE]
model:
  - fixture: fixtures/gemini/worked_example_call.sse
  - {fixture: fixtures/gemini/long_answer.sse, chunk_delay: 200ms, agent: support}
request: hello
""",
    """\
id: a2a_client/fixture-forms
title: a task timeline from a canned stream
kind: a2a-client
requirements: [A2A-C-REASSEMBLY]
client: {deadline: 30s, idle: 10s, prompt: hi, follow_up: EU only}
task:
  fixture: fixtures/a2a/1.0/input_required.sse
  chunk_delay: 1s
  follow_up: {fixture: fixtures/a2a/1.0/input_required_follow_up.sse}
server: {wire: "1.0"}
""",
]


@pytest.mark.parametrize("text", FIXTURE_FORMS)
def test_fixture_forms_are_in_the_schema(text: str, scenarios: Draft202012Validator) -> None:
    # A file in the repository's scenarios/ folder finds the top-level fixtures/.
    parse_scenarios(text, str(ROOT / "scenarios" / "forms.yaml"))
    assert _problems(scenarios, yaml.safe_load(text)) == []


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ("- fixture: fixtures/gemini/worked_example_call.sse", "- fixture: ''", "model.0.fixture"),
        ("chunk_delay: 200ms", "chunk_delay: soon", "model.1.chunk_delay"),
        ("  chunk_delay: 1s", "  chunk_dlay: 1s", "task"),
        ("  chunk_delay: 1s", "  chunk_delay: -1", "task"),
    ],
)
def test_bad_fixture_forms_are_rejected_by_schema_and_loader(
    old: str, new: str, where: str, scenarios: Draft202012Validator
) -> None:
    text = next(t for t in FIXTURE_FORMS if old in t)
    bad = text.replace(old, new)
    problems = _problems(scenarios, yaml.safe_load(bad))
    assert any(p.startswith(f"{where}") for p in problems), problems
    with pytest.raises(ScenarioError):
        parse_scenarios(bad, str(ROOT / "scenarios" / "forms.yaml"))
