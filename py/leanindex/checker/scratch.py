"""Scratch space of the REPLs: one folder per server process, removed by the next start when
that process is gone.

Each REPL gets a private working directory and HOME (see `isolation`); they live under
`<tmp>/leanindex-scratch-<uid>/<pid>-<start time>/`. A server that stops normally removes its
folder; one killed with SIGKILL cannot, so every process creating its folder first removes the
folders of server processes that no longer exist (the start time tells a reused pid apart).
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import re
import shutil
import tempfile
from pathlib import Path

import psutil

log = logging.getLogger("leanindex.checker")

_SERVER_FOLDER = re.compile(r"^(\d+)-(\d+)$")


def scratch_base() -> Path:
    """`<tmp>/leanindex-scratch-<uid>` (created private to the user). Raises `OSError` when it
    exists but belongs to another user or is not a folder."""
    base = Path(tempfile.gettempdir()) / f"leanindex-scratch-{os.getuid()}"
    base.mkdir(mode=0o700, exist_ok=True)
    st = os.lstat(base)
    if not os.path.isdir(base) or os.path.islink(base) or st.st_uid != os.getuid():
        raise OSError(f"{base} is not a folder of this user; remove it or set TMPDIR elsewhere")
    return base


def _started_at(pid: int) -> int | None:
    """The start time (whole seconds since the epoch) of process `pid`, None when it is gone."""
    try:
        return int(psutil.Process(pid).create_time())
    except psutil.Error:
        return None


@functools.cache
def server_scratch() -> Path:
    """This process's scratch folder, made on first use after removing the folders of server
    processes that are gone; removed again when this process exits normally."""
    base = scratch_base()
    for folder in base.iterdir():
        found = _SERVER_FOLDER.fullmatch(folder.name)
        if found is None or _started_at(int(found.group(1))) == int(found.group(2)):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        log.info("removed the scratch folder %s of a server that is gone", folder)
    own = base / f"{os.getpid()}-{_started_at(os.getpid())}"
    own.mkdir(mode=0o700, exist_ok=True)
    atexit.register(shutil.rmtree, own, True)
    return own
