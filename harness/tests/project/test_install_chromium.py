"""scripts/install-chromium: Debian's chromium for the report's browser test, installed by
bootstrap only when missing, quiet when there, bounded, and never a failed bootstrap (without
root or apt-get it says how and goes on). Run here with a stand-in ``apt-get`` and ``id``."""

from __future__ import annotations

import stat
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "install-chromium"


def _executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _machine(tmp_path: Path, *, uid: int = 0, apt: str | None = "exit 0") -> Path:
    """A bin folder with an ``id`` that answers ``uid`` and, unless ``apt`` is None, an
    ``apt-get`` that logs its arguments to apt.log and then runs ``apt`` (shell)."""
    bin_dir = tmp_path / "bin"
    _executable(bin_dir / "id", f"#!/bin/sh\necho {uid}\n")
    if apt is not None:
        _executable(
            bin_dir / "apt-get", f'#!/bin/bash\necho "$*" >> {tmp_path / "apt.log"}\n{apt}\n'
        )
    return bin_dir


def _install(
    tmp_path: Path, bin_dir: Path, *, system_tools: bool = True, timeout: str = "30"
) -> subprocess.CompletedProcess[str]:
    path = f"{bin_dir}:/usr/bin:/bin" if system_tools else str(bin_dir)
    env = {
        "PATH": path,
        "STREAMPROOF_CHROMIUM_PATH": str(tmp_path / "usr-bin" / "chromium"),
        "STREAMPROOF_APT_TIMEOUT": timeout,
        "TMPDIR": str(tmp_path),
    }
    return subprocess.run(
        ["/bin/bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def _apt_calls(tmp_path: Path) -> list[str]:
    log = tmp_path / "apt.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def test_bootstrap_and_make_install_it() -> None:
    assert "scripts/install-chromium" in (ROOT / "scripts" / "bootstrap").read_text("utf-8")
    assert "@scripts/install-chromium" in (ROOT / "Makefile").read_text("utf-8")


def test_already_installed_is_silent_and_asks_apt_nothing(tmp_path: Path) -> None:
    _executable(tmp_path / "usr-bin" / "chromium", "#!/bin/sh\n")
    run = _install(tmp_path, _machine(tmp_path))
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    assert _apt_calls(tmp_path) == []


def test_missing_as_root_installs_the_package_without_the_desktop_recommends(
    tmp_path: Path,
) -> None:
    browser = tmp_path / "usr-bin" / "chromium"
    apt = (
        'if [ "$1" = install ]; then mkdir -p '
        f"{browser.parent} && printf '#!/bin/sh\\necho Chromium 1.2.3\\n' > {browser} "
        f"&& chmod +x {browser}; fi"
    )
    run = _install(tmp_path, _machine(tmp_path, apt=apt))
    assert run.returncode == 0, run.stderr
    assert _apt_calls(tmp_path) == [
        "update -q",
        "install -y -q --no-install-recommends chromium fonts-liberation",
    ]
    assert "bootstrap: chromium: installed Chromium 1.2.3 in" in run.stdout
    assert list(tmp_path.glob("streamproof-chromium.*")) == []  # its apt log is removed
    again = _install(tmp_path, _machine(tmp_path, apt=apt))
    assert (again.returncode, again.stdout) == (0, "")
    assert len(_apt_calls(tmp_path)) == 2


def test_a_failed_install_is_a_warning_with_apts_words_not_a_failed_bootstrap(
    tmp_path: Path,
) -> None:
    apt = 'echo "E: Unable to locate package $4" >&2; exit 100'
    run = _install(tmp_path, _machine(tmp_path, apt=apt))
    assert run.returncode == 0, run.stderr
    assert "WARNING: installing chromium failed" in run.stdout
    assert "browser test of the HTML report will skip" in run.stdout
    assert "bootstrap:   E: Unable to locate package" in run.stdout


def test_apt_is_bounded(tmp_path: Path) -> None:
    started = time.monotonic()
    run = _install(tmp_path, _machine(tmp_path, apt="exec sleep 30"), timeout="1")
    assert time.monotonic() - started < 10
    assert run.returncode == 0 and "took over 1 s per step" in run.stdout
    assert _apt_calls(tmp_path) == ["update -q"]


def test_not_root_says_how_and_goes_on(tmp_path: Path) -> None:
    run = _install(tmp_path, _machine(tmp_path, uid=1000))
    assert run.returncode == 0, run.stderr
    assert "is not root" in run.stdout and "apt-get install chromium" in run.stdout
    assert _apt_calls(tmp_path) == []


def test_no_apt_get_says_how_and_goes_on(tmp_path: Path) -> None:
    run = _install(tmp_path, _machine(tmp_path, apt=None), system_tools=False)
    assert run.returncode == 0, run.stderr
    assert "there is no apt-get here" in run.stdout and "apt-get install chromium" in run.stdout
