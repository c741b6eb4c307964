"""``streamproof.cli`` assembles one module per subcommand, and ``--help`` stays cheap."""

from __future__ import annotations

import argparse
import subprocess
import sys

from streamproof.cli import COMMANDS, _parser


def test_the_parser_lists_each_command_module_once_in_its_order() -> None:
    sub = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == [command.NAME for command in COMMANDS]
    assert len({command.__name__ for command in COMMANDS}) == len(COMMANDS)


def test_help_imports_no_command_s_work() -> None:
    """The subcommand modules declare their options at import; what they run is imported
    inside ``run`` (docs/explanation/performance.md)."""
    code = (
        "import sys\n"
        "from streamproof.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = ('pytest', 'pydantic', 'yaml', 'aiohttp', 'streamproof.suites', "
        "'streamproof.report', 'streamproof.standalone', 'streamproof.mutants')\n"
        "print('HEAVY', [m for m in heavy if m in sys.modules])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert "HEAVY []" in done.stdout, done.stdout + done.stderr
