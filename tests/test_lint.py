"""The package passes the project's linter (ruff, configured in pyproject.toml: pyflakes,
pycodestyle, import order, bugbear, pyupgrade): an unused import or variable, a `zip` that
would silently drop a tail, a shadowed loop variable fails the suite, naming file and line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing_in_the_package() -> None:
    found = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "py"],
        cwd=REPOSITORY, capture_output=True, text=True, timeout=300,
    )
    assert found.returncode == 0, found.stdout + found.stderr
