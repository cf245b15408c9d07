"""When, on what code and under what load a benchmark ran: the `run` block of every
`benchmarks/results/*.json`, which `benchmarks/figures.py` cites beside each figure.

A benchmark imports this module at its top (the import records the start: the date and the load
average, before any work) and calls `run_info()` when it writes its JSON:

    import runinfo
    ...
    report["run"] = runinfo.run_info()

`run_info()` answers a dict:
- `date`: UTC ISO 8601 of the start (`2026-12-05T06:33:39Z`), `finished`: of the call;
- `commit`: `git rev-parse --short HEAD` of this repository at the start, with `+dirty` when a
  tracked or untracked file outside `benchmarks/results/` differed from it (a results file left
  by an earlier benchmark is no change of the code measured); None when git or the repository
  is not there (the figure then says "commit not recorded");
- `load_at_start`, `load_at_end`: `os.getloadavg()` (1, 5 and 15 minute averages, rounded to
  0.01), at the start and at the call;
- `cpus`: `os.cpu_count()`.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: Where the benchmarks write; a change there is no change of the code measured.
RESULTS = "benchmarks/results"


def _utc(seconds: float) -> str:
    """`seconds` since the epoch as UTC ISO 8601 to the second, as `2026-12-05T06:33:39Z`."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _load() -> list[float]:
    """The 1, 5 and 15 minute load averages, rounded to 0.01."""
    return [round(value, 2) for value in os.getloadavg()]


def _git(*args: str) -> str | None:
    """The stripped stdout of `git ARGS` in this repository, or None when git fails or is absent."""
    try:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def commit() -> str | None:
    """`git rev-parse --short HEAD`, plus `+dirty` when `git status --porcelain` lists a file
    outside `benchmarks/results/`; None outside a git checkout."""
    head = _git("rev-parse", "--short", "HEAD")
    if head is None:
        return None
    status = _git("status", "--porcelain", "--", ".", f":(exclude){RESULTS}")
    if status is None:
        return None
    return f"{head}+dirty" if status else head


_STARTED = time.time()
_LOAD_AT_START = _load()
_COMMIT = commit()


def run_info() -> dict[str, object]:
    """The `run` block of a benchmark's JSON (keys in the module docstring): the start recorded
    when this module was first imported, the end now."""
    return {
        "date": _utc(_STARTED),
        "finished": _utc(time.time()),
        "commit": _COMMIT,
        "load_at_start": _LOAD_AT_START,
        "load_at_end": _load(),
        "cpus": os.cpu_count(),
    }
