"""REPL scratch folders do not outlive a killed server (issue 10, item 9).

A process starts a checker (two stand-in REPLs, each with its private scratch folder) and is
killed with SIGKILL, which runs no cleanup. The next process that starts a checker with the
same temporary folder must remove the dead one's scratch folders, and leave those of a checker
that is still running alone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent

SCRIPT = """
import asyncio, sys
sys.path.insert(0, {tests!r})
from pathlib import Path
from checker_support import standin_config
from leanindex.checker import Checker
async def main():
    config, _ = standin_config(Path({layout!r}), instant=True, workers=2)
    checker = Checker(config)
    await checker.start()
    print("started", flush=True)
    if {stay!r}:
        await asyncio.sleep(600)
    await checker.close()
asyncio.run(main())
"""


def start_checker(tmp: Path, layout: Path, stay: bool) -> subprocess.Popen:
    script = SCRIPT.format(tests=str(TESTS), layout=str(layout), stay=stay)
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(tmp)}
    )
    assert child.stdout.readline().strip() == "started"
    return child


def repl_folders(tmp: Path) -> set[Path]:
    return {path for path in tmp.rglob("leanindex-repl-*") if path.is_dir()}


def test_the_next_start_removes_a_killed_servers_scratch(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    killed = start_checker(scratch, tmp_path / "a", stay=True)
    left = repl_folders(scratch)
    assert len(left) >= 2
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    time.sleep(0.5)  # the REPLs die with their parent (parent-death signal)
    assert repl_folders(scratch) == left  # SIGKILL ran no cleanup

    running = start_checker(scratch, tmp_path / "b", stay=True)
    try:
        mine = repl_folders(scratch) - left
        assert len(mine) >= 2
        assert not (repl_folders(scratch) & left), "the killed server's scratch folders are still there"
        restarted = start_checker(scratch, tmp_path / "c", stay=False)
        restarted.wait(timeout=60)
        assert mine <= repl_folders(scratch), "a running server's scratch folders were removed"
    finally:
        running.send_signal(signal.SIGTERM)
        running.wait(timeout=60)


def test_scratch_folders_sit_under_one_folder_per_server(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    child = start_checker(scratch, tmp_path / "a", stay=True)
    try:
        parents = {path.parent for path in repl_folders(scratch)}
        assert len(parents) == 1
        (parent,) = parents
        assert parent.name.startswith(f"{child.pid}-")
    finally:
        child.send_signal(signal.SIGTERM)
        child.wait(timeout=60)
