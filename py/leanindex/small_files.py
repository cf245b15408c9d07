"""Small files a process did not write, read as hostile input (a verification record, a server
announcement): never through a link, never waiting on a FIFO, never more than a stated size.
Imports nothing of the engine, so the command line's light paths can use it."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

#: Read-only, the file itself (`O_NOFOLLOW`), without waiting for a FIFO's writer (`O_NONBLOCK`).
HOSTILE_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def read_small_json(path: Path, max_bytes: int) -> object:
    """The JSON value of `path`, read as hostile input: the file itself (a link is not followed),
    a regular file (a FIFO is refused without waiting for a writer) of at most `max_bytes`.
    Raises `FileNotFoundError` when there is none, `OSError` when it cannot be read, `ValueError`
    when it is no small regular file or not JSON (nesting too deep for the parser included)."""
    fd = os.open(path, HOSTILE_OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
            raise ValueError(f"not a regular file of at most {max_bytes} bytes")
        with open(fd, "rb", closefd=False) as handle:
            data = handle.read(max_bytes + 1)
        try:
            return json.loads(data)
        except RecursionError:
            raise ValueError("JSON nested too deeply") from None
    finally:
        os.close(fd)
