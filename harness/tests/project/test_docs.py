"""The documentation: the site builds with ``mkdocs build --strict`` (a broken link, an unknown
anchor or a page left out of the nav fails, as in ``make docs``), and the README stays a short
front page whose links to docs pages all exist."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"


def test_the_site_builds_strict_with_no_warning(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    warnings = [line for line in output.splitlines() if line.startswith(("WARNING", "ERROR"))]
    assert not warnings, "\n".join(warnings)
    assert (tmp_path / "index.html").is_file()


def test_the_readme_is_at_most_250_lines() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines: move content to docs/"


def test_every_readme_link_to_a_file_exists() -> None:
    text = README.read_text(encoding="utf-8")
    targets = [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t]
    assert any(t.startswith("docs/") for t in targets), "the README links to no docs page"
    missing = [t for t in targets if not (ROOT / t.split("#", 1)[0]).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


def test_nothing_in_the_docs_points_outside_the_repository() -> None:
    """The docs state the design notes and wire facts in their own words: no machine path."""
    pages = [*sorted((ROOT / "docs").rglob("*.md")), README, ROOT / "mkdocs.yml"]
    found = [
        f"{page.relative_to(ROOT)}:{n}: {line.strip()}"
        for page in pages
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"/work/|shared/seeds|research/[a-z]|DESIGN\.md", line)
    ]
    assert not found, "\n".join(found)
