"""Shared pieces of the batch tests: requests for the instant stand-in with known outcomes, and
the local checker's answers to compare a batch's with."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from checker_support import STANDIN

from leanindex.checker import Checker, CheckerConfig, CheckResponse
from leanindex.checker.models import BatchItem, BatchResult
from leanindex.errors import LeanIndexError

#: A command the stand-in answers by SIGKILLing the process that hosts its REPL.
KILL_HOST = "-- standin: kill-host"


def mixed_code(number: int) -> str:
    """A distinct file per number: every 7th imports Mathlib (outside profile TEST:
    `header_mismatch`), every 3rd has a `sorry`, the rest are plain theorems."""
    if number % 7 == 0:
        return f"import Mathlib\ntheorem t{number} : True := trivial"
    if number % 3 == 0:
        return f"theorem t{number} : True := sorry"
    return f"theorem t{number} : True := trivial"


def mixed_items(count: int, environment: str = "TEST") -> list[BatchItem]:
    return [BatchItem(id=f"r{n}", environment=environment, code=mixed_code(n)) for n in range(count)]


def outcome_label(outcome: CheckResponse | LeanIndexError | BatchResult) -> str:
    """The verdict, or `error:<code>`."""
    if isinstance(outcome, BatchResult):
        return outcome.response.verdict.value if outcome.response is not None else f"error:{outcome.error.code}"
    if isinstance(outcome, LeanIndexError):
        return f"error:{outcome.code.value}"
    return outcome.verdict.value


def local_labels(config: CheckerConfig, items: Iterable[BatchItem]) -> dict[str, str]:
    """Each item's outcome from the local checker (2 REPLs), through plain `check` calls, 4 at
    a time (no batch code)."""
    import asyncio

    async def single_checks() -> dict[str, str]:
        labels: dict[str, str] = {}
        room = asyncio.Semaphore(4)

        async def one(checker: Checker, item: BatchItem) -> None:
            async with room:
                try:
                    labels[item.id] = outcome_label(await checker.check(item.request()))
                except LeanIndexError as error:
                    labels[item.id] = outcome_label(error)

        async with Checker(config.model_copy(update={"workers": 2})) as checker:
            await asyncio.gather(*(one(checker, item) for item in items))
        return labels

    return asyncio.run(single_checks())


def write_requests(path: Path, items: Iterable[BatchItem]) -> Path:
    """`items` as the JSON lines `leanindex check-batch` reads."""
    with open(path, "w", encoding="utf-8") as handle:
        for item in items:
            handle.write(item.model_dump_json(exclude_none=True) + "\n")
    return path


def read_results(path: Path) -> list[BatchResult]:
    """Every result line of a `check-batch` output file."""
    return [BatchResult.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def cli_args(tmp: Path, source: Path, out: Path, *extra: str) -> list[str]:
    """`leanindex check-batch` on the stand-in laid out under `tmp` (profile TEST, no manifest)."""
    return [
        "check-batch", str(source), "--out", str(out), "-e", "TEST", "--import", "Lean", "--root", str(tmp / "root"),
        "--project", str(tmp / "project"), "--repl", str(tmp / "repl"), "--lake", str(STANDIN / "lake"), *extra,
    ]


def run_until_killed(args: list[str], out: Path, lines: int, timeout_s: float = 120) -> int:
    """Run `leanindex ARGS` as a child, SIGKILL it (and its REPLs' group leader) once `out` has
    `lines` lines; return how many it had when the kill landed."""
    child = subprocess.Popen([sys.executable, "-m", "leanindex", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + timeout_s
    try:
        while not (out.exists() and out.read_bytes().count(b"\n") >= lines):
            assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
            assert time.monotonic() < deadline, "the batch did not get far enough"
            time.sleep(0.05)
        os.killpg(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    return out.read_bytes().count(b"\n")
