"""One import of the embedded Lean core catalog per test session, made the way a newcomer
makes it: `leanindex demo` as a real process with `LEANINDEX_ROOT` naming a fresh folder."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class DemoRun:
    """The root the demo imported into and what the first run printed."""

    root: Path
    stdout: str
    stderr: str
    returncode: int


def leanindex_command() -> list[str]:
    """The installed console script, else `python -m leanindex`."""
    script = Path(sys.executable).with_name("leanindex")
    return [str(script)] if script.exists() else [sys.executable, "-m", "leanindex"]


def run_leanindex(root: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`leanindex ARGS` with `LEANINDEX_ROOT=root` (and no `--root`)."""
    env = {**os.environ, "LEANINDEX_ROOT": str(root), "COLUMNS": "200"}
    return subprocess.run([*leanindex_command(), *args], capture_output=True, text=True, timeout=timeout, env=env)


def first_demo(root: Path) -> DemoRun:
    """Run `leanindex demo` once into the empty `root`."""
    done = run_leanindex(root, "demo")
    return DemoRun(root=root, stdout=done.stdout, stderr=done.stderr, returncode=done.returncode)
