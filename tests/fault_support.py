"""Fault injection helpers: small tmpfs mounts (a full disk) and builds killed at a chosen step.

A tmpfs can be mounted only as root on a system that allows it; `small_tmpfs` skips the test,
saying why, where it cannot. Its size is in bytes; `fill` then leaves it with no free block.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@contextmanager
def small_tmpfs(at: Path, size_bytes: int) -> Iterator[Path]:
    """Mount a tmpfs of `size_bytes` at `at` (created if missing) for the block; skip the test
    when mounting is not permitted here."""
    at.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_bytes}", "tmpfs", str(at)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip() or mounted.returncode}")
    try:
        yield at
    finally:
        subprocess.run(["umount", "-l", str(at)], check=True)


def fill(folder: Path) -> Path:
    """Write a filler file in `folder` until its filesystem is full; return the filler's path."""
    filler = folder / f"filler-{uuid.uuid4().hex[:8]}"
    chunk = b"\0" * 4096
    with open(filler, "wb", buffering=0) as handle:
        while True:
            try:
                handle.write(chunk)
            except OSError as error:
                assert error.errno == errno.ENOSPC
                break
    return filler


def build_killed_at(root: Path, profile: str, input_path: Path, patch: str) -> int:
    """Run `catalog build --input` in a child process after executing `patch` (Python source
    with `builder` = `leanindex.catalog.builder` and `kill()` = SIGKILL of the child in scope);
    return the child's exit status (negative signal number when killed)."""
    script = textwrap.dedent(
        """
        import os, signal, sys
        from leanindex.catalog import builder
        def kill():
            os.kill(os.getpid(), signal.SIGKILL)
        {patch}
        from leanindex.cli import main
        sys.exit(main(["catalog", "build", "--profile", sys.argv[1], "--input", sys.argv[2], "--root", sys.argv[3]]))
        """
    ).format(patch=textwrap.dedent(patch).strip())
    child = subprocess.run(
        [sys.executable, "-c", script, profile, str(input_path), str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO / "py")},
    )
    return child.returncode
