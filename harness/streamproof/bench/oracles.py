"""The oracle differential of a target: per stream, the libraries' verdicts beside ours.

Run ``python -m streamproof.bench.oracles --target FILE [PATH ...]`` (optionally ``--bug NAME``,
``--time-scale F``): it runs ``streamproof run --target FILE --full-observations [PATH ...]``
(the bundled gateway scenarios when no PATH is given) in a process of its own, reads the run's
results.json, and for every stream of an ``ag-ui`` or ``ai-sdk-ui`` target runs the real
consumer libraries over it (``ag-ui-validate`` and ``@ag-ui/client``, or ``ai``) and prints, in
Markdown, what each says beside our structural verdicts, then every disagreement with its
reason. ``--results RESULTS.json`` reads a run made before (with ``--full-observations``)
instead of running one.

Exit status: 0 when every disagreement is a known difference, 1 when one is not (or a library
failed on a stream), 2 on bad input (no such file, a run with no results, a library not
installed). This is a tool of ours, not a subcommand of ``streamproof``: the oracles are a check
of ours, and nothing the CLI runs imports them (pyproject's import-linter contracts).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from pydantic import ValidationError

from streamproof.core.verdicts import Verdict
from streamproof.suites.gateway.observation import GatewayObservation
from streamproof.suites.gateway.oracles.differential import StreamDifferential, differential
from streamproof.suites.gateway.oracles.errors import OracleFailed, OracleUnavailable
from streamproof.suites.gateway.oracles.mapping import COMPARED
from streamproof.suites.gateway.oracles.table import differential_table
from streamproof.suites.gateway.profiles.registry import check_gateway

__all__ = ["Compared", "compare_results", "main"]

ROOT: Final = Path(__file__).resolve().parents[3]
DEFAULT_RUN_TIMEOUT_S: Final = 900.0
"""A whole suite against a target that builds its own virtualenv first (ag-ui-adk: about 40 s)
takes a few minutes at most; the run is stopped after this."""


class BadInput(Exception):
    """What the user asked for cannot be done (the message says why)."""


@dataclass(frozen=True)
class Compared:
    """What a run's results gave the differential."""

    diffs: tuple[StreamDifferential, ...]
    skipped: tuple[str, ...]
    """``scenario: why`` for each scenario with no stream to compare."""
    failed: tuple[str, ...]
    """``scenario: what`` for each stream a library gave no result on."""

    @property
    def holds(self) -> bool:
        return not self.failed and all(d.holds for d in self.diffs)


def _verdicts(record: Mapping[str, Any]) -> list[Verdict]:
    return [Verdict.model_validate(v) for v in record.get("verdicts", [])]


def compare_results(results: Mapping[str, Any], *, timeout: float = 30.0) -> Compared:
    """The differential of every ``ag-ui`` and ``ai-sdk-ui`` stream in a results.json.

    Our verdicts are the run's own; they are judged again from the observation only when the
    record has none (a results.json written by hand).
    """
    bug = results.get("environment", {}).get("bug")
    diffs: list[StreamDifferential] = []
    skipped: list[str] = []
    failed: list[str] = []
    for record in results.get("scenarios", []):
        scenario = str(record.get("id", "?"))
        if record.get("kind", "gateway") != "gateway":
            continue
        observation = record.get("observation")
        if not isinstance(observation, dict):
            why = record.get("error") or "no observation"
            skipped.append(f"{scenario}: {record.get('outcome', 'not run')} ({why})")
            continue
        if record.get("observation_detail", "full") != "full":
            skipped.append(f"{scenario}: only a summary was kept (run with --full-observations)")
            continue
        try:
            obs = GatewayObservation.model_validate(observation)
        except ValidationError as exc:
            skipped.append(f"{scenario}: the observation is not readable ({exc.error_count()})")
            continue
        if obs.profile not in COMPARED:
            skipped.append(f"{scenario}: a {obs.profile} target (no oracle reads that wire)")
            continue
        verdicts = _verdicts(record) or check_gateway(obs)
        name = f"{scenario} ({bug})" if bug else scenario
        try:
            diffs.append(differential(obs, verdicts, name=name, timeout=timeout))
        except (OracleFailed, ValueError) as exc:
            failed.append(f"{scenario}: {exc}")
    return Compared(tuple(diffs), tuple(skipped), tuple(failed))


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop the run and everything it started (its own process group)."""
    for sig, wait in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run_suite(args: argparse.Namespace, report_dir: Path) -> dict[str, Any]:
    """``streamproof run`` for the differential; its results.json as JSON."""
    streamproof = Path(sys.executable).with_name("streamproof")
    command = [str(streamproof), "run", *args.paths, "--target", args.target]
    command += ["--full-observations", "--report-dir", str(report_dir), "-q"]
    if args.bug:
        command += ["--bug", args.bug]
    if args.time_scale is not None:
        command += ["--time-scale", str(args.time_scale)]
    print(f"running: {shlex.join(command)}", file=sys.stderr, flush=True)
    proc = subprocess.Popen(command, cwd=ROOT, stdout=sys.stderr, start_new_session=True)
    try:
        proc.wait(args.run_timeout)
    except subprocess.TimeoutExpired:
        _stop(proc)
        raise BadInput(
            f"the run gave no result within {args.run_timeout:g} s; it was stopped"
        ) from None
    except BaseException:
        _stop(proc)
        raise
    return read_results(report_dir / "results.json")


def read_results(path: Path) -> dict[str, Any]:
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(f"{path}: no such file (the run wrote no results)") from None
    except (OSError, ValueError) as exc:
        raise BadInput(f"{path}: not a results.json: {exc}") from None
    if not isinstance(results, dict) or not isinstance(results.get("scenarios"), list):
        raise BadInput(f"{path}: not a results.json (no 'scenarios' list)")
    error = results.get("summary", {}).get("error")
    if error and not results["scenarios"]:
        raise BadInput(f"{path}: the run failed before any scenario: {error}")
    return results


def render(compared: Compared, source: str) -> str:
    lines = [f"Oracle differential of {source}", ""]
    if compared.diffs:
        lines.append(differential_table(compared.diffs))
    else:
        lines.append("No ag-ui or ai-sdk-ui stream to compare.")
    if compared.skipped:
        lines += ["", "Not compared:", "", *(f"- {s}" for s in compared.skipped)]
    if compared.failed:
        lines += ["", "A library gave no result:", "", *(f"- {s}" for s in compared.failed)]
    streams = len(compared.diffs)
    unexplained = sum(len(d.unexplained) for d in compared.diffs)
    known = sum(len(d.disagreements) for d in compared.diffs) - unexplained
    lines += [
        "",
        f"{streams} stream(s): {known} known difference(s), {unexplained} unexplained; "
        + ("the differential holds." if compared.holds else "the differential does NOT hold."),
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m streamproof.bench.oracles", description=__doc__
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--target", metavar="FILE", help="run the suite against this target")
    source.add_argument("--results", metavar="RESULTS.json", help="read a run made before")
    parser.add_argument("paths", nargs="*", metavar="PATH", help="scenario files or folders")
    parser.add_argument("--bug", metavar="NAME", help="switch a reference's mutant on")
    parser.add_argument("--time-scale", metavar="F", type=float, default=None)
    parser.add_argument("--run-timeout", metavar="S", type=float, default=DEFAULT_RUN_TIMEOUT_S)
    parser.add_argument("--out", metavar="DIR", type=Path, default=None, help="the run's report")
    args = parser.parse_args(argv)
    if args.results and (args.paths or args.bug or args.time_scale is not None):
        parser.error("--results reads a run made before: PATH, --bug and --time-scale run one")
    try:
        if args.results:
            results = read_results(Path(args.results))
            source_name = args.results
        else:
            if not Path(args.target).is_file():
                raise BadInput(f"{args.target}: no such target file")
            out = args.out or Path(tempfile.mkdtemp(prefix="streamproof-oracles-"))
            results = run_suite(args, out)
            source_name = shlex.join(["--target", args.target, *args.paths])
            if args.bug:
                source_name += f" --bug {args.bug}"
        compared = compare_results(results)
    except (BadInput, OracleUnavailable) as exc:
        print(f"python -m streamproof.bench.oracles: {exc}", file=sys.stderr)
        return 2
    print(render(compared, source_name))
    return 0 if compared.holds else 1


if __name__ == "__main__":
    sys.exit(main())
