"""Handing memory a finished build stage freed back to the system.

Both allocators a build goes through keep what is freed for reuse: pyarrow's pool (mimalloc)
and glibc's `malloc` (numpy arrays, DuckDB's results, Python's larger objects). Kept, it still
counts in the process's resident set while the next stage runs beside it, and the text index's
worker processes (`catalog.text`) are the build's largest: on Mathlib's doc-gen4 import the
importing process held about 100 MB more through them without this.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

#: DuckDB's memory limit while the index reads every record from the finished database (its
#: pages would otherwise stay cached up to the connection's 1 GB). A read-only database cannot
#: spill, and 128 MB ran out now and then on Mathlib; 256 MB never did in ten runs.
READ_MEMORY_LIMIT = "256MB"


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's `malloc_trim`, or None on a C library without it (macOS, musl)."""
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None


def release_freed_memory() -> None:
    """Return the memory pyarrow's pool and glibc's `malloc` hold free to the system (a few
    milliseconds; nothing in use is touched)."""
    import pyarrow as pa  # the build's: serving loads no pyarrow

    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@contextmanager
def duckdb_memory_limit(con: duckdb.DuckDBPyConnection, limit: str = READ_MEMORY_LIMIT) -> Iterator[None]:
    """`con`'s memory limit set to `limit` (DuckDB's syntax) inside the block, restored after."""
    [(before,)] = con.execute("SELECT current_setting('memory_limit')").fetchall()
    con.execute(f"SET memory_limit = '{limit}'")
    try:
        yield
    finally:
        con.execute(f"SET memory_limit = '{before}'")
