"""Write failures as coded errors: a full disk is `storage_full`, any other I/O failure
`io_error`, each naming the path, the free space there and (for a full disk) the space needed.

Writers (the catalog builder, the pinned manifest, `api export`) and the CLI's error handler
pass the exceptions they catch to `storage_failure`; DuckDB reports a failed write as its own
exception whose message carries the OS error text and the file, so both kinds are read here.
"""

from __future__ import annotations

import errno
import os
import re
import sys
from pathlib import Path

from .errors import ErrorCode, LeanIndexError

_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
_FULL_TEXT = os.strerror(errno.ENOSPC)  # "No space left on device"
_DUCKDB_FILE = re.compile(r'file "([^"]+)"')


def free_bytes(path: Path) -> int:
    """Bytes available to this user on the filesystem holding `path` (or its nearest existing
    parent); 0 when none can be stat'ed."""
    for folder in (path, *path.parents):
        try:
            st = os.statvfs(folder)
        except OSError:
            continue
        return st.f_bavail * st.f_frsize
    return 0


def tree_bytes(folder: Path) -> int:
    """Bytes in the regular files under `folder` (0 when it is gone)."""
    total = 0
    for parent, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(parent, name)).st_size
            except OSError:
                continue
    return total


def storage_failure(
    error: BaseException, *, path: Path | None = None, fallback: Path | None = None, needed_bytes: int | None = None
) -> LeanIndexError | None:
    """The coded error for a failed write, or None when `error` is not an I/O failure.

    The path reported is `path` when given (the file being written, rather than a temporary
    name), else the file the error names, else `fallback`; `needed_bytes` is the caller's lower
    bound on the space the operation needs (for a build: more than was free when it started).
    Returns `storage_full` (details: `path`, `free_bytes`, `needed_bytes`) for ENOSPC/EDQUOT,
    `io_error` (details: `path`, `errno`, `reason`) for any other OSError or DuckDB I/O error.
    """
    if isinstance(error, OSError):
        full = error.errno in _FULL_ERRNOS
        named = error.filename
        reason = error.strerror or str(error)
        number = error.errno
    # A DuckDB error comes from a loaded DuckDB: a process that never imported it (serving, a
    # search) does not import it here.
    elif (duckdb := sys.modules.get("duckdb")) is not None and isinstance(error, duckdb.Error) and (
        _FULL_TEXT in str(error) or isinstance(error, duckdb.IOException) or "Could not write file" in str(error)
    ):
        full = _FULL_TEXT in str(error)
        found = _DUCKDB_FILE.search(str(error))
        named = found.group(1) if found else None
        reason = str(error)
        number = errno.ENOSPC if full else None
    else:
        return None
    where = path if path is not None else Path(os.fsdecode(named)) if named is not None else fallback
    shown = str(where) if where is not None else "(unknown path)"
    if full:
        free = free_bytes(where) if where is not None else 0
        needed = max(needed_bytes or 0, 1)
        return LeanIndexError(
            ErrorCode.STORAGE_FULL,
            f"no space left on the disk holding {shown}: it needs at least {needed:,} bytes, "
            f"{free:,} are free there; free some space and run the command again",
            {"path": shown, "free_bytes": free, "needed_bytes": needed},
        )
    return LeanIndexError(
        ErrorCode.IO_ERROR,
        f"cannot read or write {shown}: {reason}",
        {"path": shown, "errno": number, "reason": reason},
    )
