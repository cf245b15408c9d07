"""Removing what killed builds leave under a root: their folders under `catalog/.builds/` and
half-made link files in `catalog/`.

A build folder is stale when the builder made it (its name is `<profile>-<time>-<8 hex>`) and
no `catalog/<profile>` link points at it, provided no build is running: a running build's folder
is not linked yet. Builds hold an exclusive `flock` on `catalog/.builds/` for their whole run,
so a build cleans under its own lock and `catalog verify` cleans only when it can take the lock
without waiting (else it says why it skipped).
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel

from ..storage import tree_bytes

log = logging.getLogger("leanindex.catalog")

BUILD_FOLDER = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}-\d{8}T\d{6}-[0-9a-f]{8}$")
STAGED_LINK = re.compile(r"^\.[a-z0-9][a-z0-9_-]{0,63}\.link-[0-9a-f]{8}$")


class StaleBuilds(BaseModel):
    """What a cleanup removed: build folder names, the bytes their files held, and why it was
    skipped (`skipped`, e.g. a build is running) or null."""

    removed: list[str]
    reclaimed_bytes: int
    skipped: str | None = None

    def summary(self) -> str:
        """One line for people, e.g. `removed 2 stale build folders, reclaimed 1,024 bytes`."""
        if self.skipped:
            return f"stale build folders not checked: {self.skipped}"
        plural = "" if len(self.removed) == 1 else "s"
        return f"removed {len(self.removed)} stale build folder{plural}, reclaimed {self.reclaimed_bytes:,} bytes"


@contextmanager
def builds_lock(builds_dir: Path, wait: bool = True) -> Iterator[bool]:
    """Hold the exclusive lock on `builds_dir` for the block; yields False (holding nothing)
    when `wait` is False and another process holds it."""
    fd = os.open(builds_dir, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def remove_stale_builds(root: Path) -> StaleBuilds:
    """Remove every stale build folder and half-made link under `root`; the caller holds the
    builds lock. Folders the builder did not make (a catalog set aside, anything put there by
    hand) are left alone; a folder that cannot be removed is logged and left for next time."""
    catalog = root / "catalog"
    builds = catalog / ".builds"
    linked = {entry.resolve() for entry in catalog.iterdir() if entry.is_symlink()} if catalog.is_dir() else set()
    removed: list[str] = []
    reclaimed = 0
    for folder in sorted(builds.iterdir()) if builds.is_dir() else []:
        if folder.is_symlink() or not folder.is_dir() or not BUILD_FOLDER.fullmatch(folder.name) or folder.resolve() in linked:
            continue
        size = tree_bytes(folder)
        try:
            shutil.rmtree(folder)
        except OSError as error:
            # A folder that cannot be removed now is tried again by the next cleanup; it must
            # not fail a build that has already been published.
            log.warning("could not remove stale build folder %s: %s", folder, error)
            continue
        removed.append(folder.name)
        reclaimed += size
    for staged in catalog.iterdir() if catalog.is_dir() else []:
        if staged.is_symlink() and STAGED_LINK.fullmatch(staged.name):
            staged.unlink(missing_ok=True)
    report = StaleBuilds(removed=removed, reclaimed_bytes=reclaimed)
    if removed:
        log.info(report.summary())
    return report


def clean_unless_building(root: Path) -> StaleBuilds:
    """`remove_stale_builds` when no build is running under `root` (for `catalog verify`);
    otherwise nothing is removed and `skipped` says why."""
    builds = root / "catalog" / ".builds"
    if not builds.is_dir():
        return StaleBuilds(removed=[], reclaimed_bytes=0)
    with builds_lock(builds, wait=False) as held:
        if not held:
            return StaleBuilds(removed=[], reclaimed_bytes=0, skipped="a build is running under this root")
        return remove_stale_builds(root)
