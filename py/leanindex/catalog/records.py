"""Inspect's records: a declaration found by name and read whole from the memory-mapped index.

The result blocks (`catalog.rows`) already hold a search result's fields of every record; the
index adds what an inspect answer needs beyond them, so inspect reads no database:

- `record_blocks.npy` (uint8), `record_block_starts.npy` (int64, blocks+1) and
  `record_row_offsets.npy` (int64, n+1): the record line (the validated stream line the
  `declarations` table holds) without the keys the result blocks hold (`rows.RESULT_FIELDS`)
  and without its constant `record` key, as compact JSON, `RECORD_BLOCK_ROWS` consecutive
  positions per zstd frame, laid out as the result blocks are. A key the line lacks stays
  absent (an optional field of an older stream reads as the record model's default). On
  Mathlib's doc-gen4 catalog (306,807 declarations) 17.7 MB of frames, against 56.5 MB for
  whole lines in blocks of 8.
- `name_hashes.npy` (uint64, n, ascending) and `name_hash_positions.npy` (int32, n): the
  `name_hash` of every printed name with its position, so a name is found by one binary search
  over 8-byte keys and one comparison with the stored name (`names.npy`); equal hashes are
  tried in turn. About 5 us a name on Mathlib, where the suffix array's two binary searches
  (`SearchIndex.position_of`) take 30-50 us.
- `class_positions.npy` (int32, ascending) and `class_instance_counts.npy` (int32): the
  positions of the declarations the instance table (`catalog.instances`) names as a class, and
  how many instances it lists for each (an inspect answer's `instance_count`).

All are written by `write_records` from the serving database at build time, listed in the
manifest and digested like every index file.
"""

from __future__ import annotations

import hashlib
import json
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np

from .rows import RESULT_FIELDS, read_rows, write_blocks

if TYPE_CHECKING:
    import duckdb

RECORD_ARRAYS = (
    "record_blocks",
    "record_block_starts",
    "record_row_offsets",
    "name_hashes",
    "name_hash_positions",
    "class_positions",
    "class_instance_counts",
)
#: Rows per frame: inspect reads one row, so larger frames than the result blocks' 8 cost
#: little (about 12 us to decompress 16 rows on Mathlib) and compress better (8 rows: 22.9 MB).
RECORD_BLOCK_ROWS = 16
# A JSON merge patch (RFC 7386) whose nulls delete keys: the rest of the line stays as stored.
_DROPPED = json.dumps(dict.fromkeys(("record", *RESULT_FIELDS)))
# No ORDER BY: rows come in insertion order, which is position order (`rows.write_blocks` checks).
_ROWS_SQL = f"SELECT pos, json_merge_patch(record, '{_DROPPED}')::VARCHAR AS row FROM declarations"
_CLASSES_SQL = (
    "SELECT d.pos::INTEGER AS pos, count(*)::INTEGER AS instances FROM instances i "
    "JOIN declarations d ON d.name = i.class_name GROUP BY d.pos ORDER BY d.pos"
)
def name_hash(name: bytes) -> int:
    """The 64-bit key of a printed name's UTF-8 bytes (BLAKE2b, 8 bytes, little-endian): stable
    across processes and machines, unlike Python's `hash`."""
    return int.from_bytes(hashlib.blake2b(name, digest_size=8).digest(), "little")


def write_records(con: duckdb.DuckDBPyConnection, names: np.ndarray, name_starts: np.ndarray) -> dict[str, np.ndarray]:
    """The `RECORD_ARRAYS` from the serving database `con` (tables `declarations`: pos 0..n-1,
    record JSON line; `instances`: pos, class_name) and the index's `names` (uint8: each name
    after a NUL, a final NUL) and `name_starts` (int64, n+1). Memory: `rows.write_blocks`'s, and
    20 bytes per declaration. Raises `ValueError` when the positions are not 0..n-1 or the names
    are not n."""
    [(count,)] = con.execute("SELECT count(*) FROM declarations").fetchall()
    if len(name_starts) != count + 1:
        raise ValueError(f"declarations has {count} rows, the names {len(name_starts) - 1}")
    blocks, starts, row_offsets = write_blocks(con, _ROWS_SQL, RECORD_BLOCK_ROWS)
    arrays = {"record_blocks": blocks, "record_block_starts": starts, "record_row_offsets": row_offsets}
    arrays.update(_name_hashes(names, name_starts))
    classes = con.execute(_CLASSES_SQL).fetchnumpy()
    arrays["class_positions"] = np.asarray(classes["pos"], dtype=np.int32)
    arrays["class_instance_counts"] = np.asarray(classes["instances"], dtype=np.int32)
    return arrays


def _name_hashes(names: np.ndarray, name_starts: np.ndarray) -> dict[str, np.ndarray]:
    """`name_hashes` (ascending; equal hashes by position) and `name_hash_positions`."""
    text = names.tobytes()
    starts = name_starts.tolist()
    # Name i is text[starts[i] : starts[i + 1] - 1]: the byte before the next start is its NUL.
    keys = np.fromiter((name_hash(text[a : b - 1]) for a, b in pairwise(starts)), dtype=np.uint64, count=len(starts) - 1)
    order = np.argsort(keys, kind="stable")
    return {"name_hashes": keys[order], "name_hash_positions": order.astype(np.int32)}


def find_name(hashes: np.ndarray, positions: np.ndarray, names: np.ndarray, name_starts: np.ndarray, name: str) -> int | None:
    """The position of the declaration printed exactly `name`, or None, from `name_hashes`,
    `name_hash_positions`, `names` and `name_starts` of one catalog: each stored name with
    `name`'s hash is compared with it. A name with a NUL or without a UTF-8 form is no stored
    name."""
    if not name or "\x00" in name:
        return None
    try:
        wanted = name.encode()
    except UnicodeEncodeError:
        return None
    # A numpy key: a Python int below 2**63 would make numpy convert the whole array to compare.
    key = np.uint64(name_hash(wanted))
    place, size = int(hashes.searchsorted(key)), len(hashes)
    while place < size and hashes[place] == key:
        position = int(positions[place])
        if names[int(name_starts[position]) : int(name_starts[position + 1]) - 1].tobytes() == wanted:
            return position
        place += 1
    return None


def read_record(blocks: np.ndarray, block_starts: np.ndarray, row_offsets: np.ndarray, position: int) -> dict[str, Any]:
    """The stored fields of the record at `position` (a valid position) beyond the result
    fields, as `{field: value}`, from `record_blocks`, `record_block_starts` and
    `record_row_offsets` of one catalog (`rows.read_rows`: one frame decompressed, one row
    decoded). Raises as `rows.read_rows` for a corrupt frame (a verified catalog's digests rule
    that out)."""
    return read_rows(blocks, block_starts, row_offsets, RECORD_BLOCK_ROWS, (position,))[position]


def instance_count(class_positions: np.ndarray, counts: np.ndarray, position: int) -> int:
    """How many instances the instance table lists for the declaration at `position` as their
    class (0 when none), from `class_positions` and `class_instance_counts`."""
    place = int(class_positions.searchsorted(position))
    return int(counts[place]) if place < len(class_positions) and int(class_positions[place]) == position else 0
