"""The instance table of a catalog: which class each instance is an instance of.

A record's `instance_class` (doc-gen4's instance table, `records.DeclarationRecord`) is stored in
`declarations.parquet` like every field; the build writes it to the serving database as the
table `instances (pos INTEGER, class_name VARCHAR)` (one row per instance declaration, the
`instance` flag, `class_name` null where the producer did not record the class), and from that
table, by `write_instances`, to index arrays that serving reads instead (memory-mapped, listed
in the manifest and digested like every index file, `catalog.index`):

- `instance_classes.npy` (uint8) and `instance_class_starts.npy` (int64, k+1): the k class
  names with at least one recorded instance, in code-point order (their UTF-8 bytes sorted),
  laid out as the index's `names`/`name_starts` (each name after a NUL, a final NUL).
- `instance_offsets.npy` (int64, k+1) and `instance_positions.npy` (int32): class i's instances
  are `instance_positions[instance_offsets[i]:instance_offsets[i + 1]]`, ascending.
- `instance_unrecorded.npy` (int32, ascending): the instances whose class was not recorded;
  empty when the catalog records every instance's class (`instances_recorded`).

The functions below are the one reading of those arrays; each takes the catalog's
`index.SearchIndex` (or anything with the five arrays as attributes).
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    import duckdb

INSTANCE_ARRAYS = (
    "instance_classes",
    "instance_class_starts",
    "instance_offsets",
    "instance_positions",
    "instance_unrecorded",
)


class InstanceArrays(Protocol):
    """The `INSTANCE_ARRAYS` of one catalog, as attributes (`index.SearchIndex` has them)."""

    instance_classes: np.ndarray
    instance_class_starts: np.ndarray
    instance_offsets: np.ndarray
    instance_positions: np.ndarray
    instance_unrecorded: np.ndarray


def write_instances(con: duckdb.DuckDBPyConnection) -> dict[str, np.ndarray]:
    """The `INSTANCE_ARRAYS` from the `instances` table of the serving database `con`. Memory:
    the table's rows as Python objects (one per instance declaration)."""
    rows = con.execute("SELECT class_name, list(pos ORDER BY pos) FROM instances WHERE class_name IS NOT NULL GROUP BY class_name").fetchall()
    # Sorted by UTF-8 bytes, which is code-point order (DuckDB's collation is not assumed).
    rows.sort(key=lambda row: row[0].encode())
    # The index's layout of names is written by its one writer (imported here: it imports this).
    from .index import _joined

    text, starts = _joined([name.encode() for name, _ in rows], lead=True)
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(found) for _, found in rows], out=offsets[1:])
    positions = np.fromiter((pos for _, found in rows for pos in found), dtype=np.int32, count=int(offsets[-1]))
    unrecorded = con.execute("SELECT pos FROM instances WHERE class_name IS NULL ORDER BY pos").fetchnumpy()["pos"]
    return {
        "instance_classes": text,
        "instance_class_starts": starts,
        "instance_offsets": offsets,
        "instance_positions": positions,
        "instance_unrecorded": np.asarray(unrecorded, dtype=np.int32),
    }


def instances_recorded(index: InstanceArrays) -> bool:
    """True when every instance of the catalog has its class recorded (vacuously true without
    instances): then `instance_positions` is exact, and an instance search may answer from it."""
    return len(index.instance_unrecorded) == 0


def _class_name(index: InstanceArrays, i: int) -> bytes:
    """The UTF-8 bytes of class `i`'s name (without its NUL)."""
    starts = index.instance_class_starts
    return index.instance_classes[int(starts[i]) : int(starts[i + 1]) - 1].tobytes()


def _class_id(index: InstanceArrays, class_name: str) -> int | None:
    """The place of `class_name` among the table's classes (one binary search), or None."""
    try:
        wanted = class_name.encode()
    except UnicodeEncodeError:
        return None
    count = len(index.instance_class_starts) - 1
    place = bisect.bisect_left(range(count), wanted, key=lambda i: _class_name(index, i))
    return place if place < count and _class_name(index, place) == wanted else None


def instance_positions(index: InstanceArrays, class_name: str) -> np.ndarray:
    """The positions (int64, ascending) of the instances of exactly `class_name` (a printed
    class name, e.g. `Decidable`); empty when it has none."""
    found = _class_id(index, class_name)
    if found is None:
        return np.empty(0, dtype=np.int64)
    offsets = index.instance_offsets
    return np.asarray(index.instance_positions[int(offsets[found]) : int(offsets[found + 1])], dtype=np.int64)


def instance_counts(index: InstanceArrays) -> dict[str, int]:
    """Class name -> how many instances the catalog records for it (classes without a recorded
    instance are absent), sorted by class name (code points)."""
    counts = np.diff(np.asarray(index.instance_offsets)).tolist()
    return {_class_name(index, i).decode(): count for i, count in enumerate(counts)}
