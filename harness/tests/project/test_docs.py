"""The documentation: the site builds with ``mkdocs build --strict`` (a broken link, an unknown
anchor or a page left out of the nav fails, as in ``make docs``), and the README stays a short
front page whose links to docs pages all exist."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from functools import cache
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


CITING = ("harness", "scripts", "targets", "scenarios", "fixtures", "references")
"""Where code, tests, scripts and scenario files cite the docs."""

CITATION = re.compile(r"docs/((?:[\w-]+/)*[\w-]+\.md)(?:#([\w-]+))?")


def _tracked_text_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", *CITING, "Makefile", "pyproject.toml", "setup.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split("\0")
    files = []
    for name in filter(None, listed):
        path = ROOT / name
        if "node_modules" in path.parts or not path.is_file():
            continue
        try:
            path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        files.append(path)
    return files


@cache
def _anchors(page: Path) -> frozenset[str]:
    """The heading ids MkDocs gives a page (Python-Markdown's toc slugs, and explicit
    ``{#id}``s)."""
    from markdown.extensions.toc import slugify

    ids: set[str] = set()
    for line in _text(page).splitlines():
        heading = re.match(r"#{1,6}\s+(.*?)\s*$", line)
        if heading:
            explicit = re.search(r"\{[^}]*#([\w-]+)[^}]*\}\s*$", heading.group(1))
            title = re.sub(r"\s*\{[^}]*\}\s*$", "", heading.group(1))
            ids.add(explicit.group(1) if explicit else slugify(re.sub(r"[`*_]", "", title), "-"))
    return frozenset(ids)


def test_every_citation_of_a_docs_page_resolves() -> None:
    """A comment, docstring or message that says ``docs/...md#anchor`` names a page that exists
    and, with an anchor, a heading on it."""
    broken = []
    for path in _tracked_text_files():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for page, anchor in CITATION.findall(line):
                target = ROOT / "docs" / page
                if not target.is_file():
                    broken.append(f"{path.relative_to(ROOT)}:{n}: docs/{page} does not exist")
                elif anchor and anchor not in _anchors(target):
                    broken.append(f"{path.relative_to(ROOT)}:{n}: no #{anchor} in docs/{page}")
    assert not broken, "\n".join(broken)


@cache
def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def _stated(title: str, headings: frozenset[str], text: str) -> bool:
    """A heading (or the start of one), an item under a heading (``Failure modes: Runaway
    loops``), or words the page quotes (``What to do next 4``)."""
    from markdown.extensions.toc import slugify

    def heading(words: str) -> bool:
        slug = slugify(words, "-")
        return any(h == slug or h.startswith(f"{slug}-") for h in headings)

    head, _, item = title.partition(": ")
    return heading(title) or (bool(item) and heading(head) and item in text) or title in text


def _parts(section: str) -> list[str]:
    """A rule's ``section``: the sections it comes from, split at ``; `` outside brackets
    (a section's own words in brackets may hold one)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(section):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and section.startswith("; ", i):
            parts.append(section[start:i])
            start = i + 2
    return [*parts, section[start:]]


def test_the_rule_sections_the_requirements_cite_are_headings_of_their_page() -> None:
    """``streamproof list`` and the report send a reader to ``docs/...md: <section>``: the
    page exists and the section is a heading on it."""
    from streamproof.suites import REGISTRY

    missing = []
    for requirement in REGISTRY.values():
        page = requirement.source()
        if not page.startswith("docs/"):
            continue  # a protocol's own rules (AG-UI, the AI SDK stream) name the protocol
        target = ROOT / page
        if not target.is_file():
            missing.append(f"{requirement.id}: {page} does not exist")
            continue
        headings, text = _anchors(target), _text(target)
        for part in _parts(requirement.section):
            if "docs/" in part or not part[:1].isupper():
                continue  # another page (checked as a citation), or a reason, not a section
            title = re.sub(r"\s*\(.*\)$", "", part)
            if not _stated(title, headings, text):
                missing.append(f"{requirement.id}: {page}: no heading for {title!r}")
    assert not missing, "\n".join(missing)


def test_no_machine_path_in_the_repository() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in _tracked_text_files()
        if path != Path(__file__).resolve()  # this file spells the pattern out
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"(?<![\w.])/(work|root|home/\w+)/", line)
    ]
    assert not found, "absolute machine paths: " + ", ".join(found)
