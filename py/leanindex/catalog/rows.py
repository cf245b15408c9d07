"""Result rows: the fields a search result shows, stored for reading any page of rows at once.

A result page in relevance or text order lists declarations scattered over the whole catalog;
DuckDB reads each from a different compressed column segment (on the 800k synthetic catalog a
page of 10 scattered rows cost about 2.5 ms against 1 ms for 10 adjacent ones). So the index
(`catalog.index`) carries a copy of just the result fields, `RESULT_FIELDS` of each record as a
compact JSON object, in blocks of `BLOCK_ROWS` consecutive positions, each block one zstd
frame (pyarrow's codec; pyarrow is pinned, so the bytes are reproducible):

- `result_blocks.npy` (uint8): the frames, one after another;
- `result_block_starts.npy` (int64, blocks+1): where each frame starts;
- `result_row_offsets.npy` (int64, n+1): where each row's JSON starts in the rows' text before
  compression (all blocks' text one after another), so a row is cut out of its block directly.

Frames are written with pyarrow's codec and read with `zstandard` (any zstd reader reads them;
on Mathlib a frame takes 7 us there against 24 us through pyarrow's, mostly its per-call
buffer wrapping), rows are decoded with `orjson` (3 us a row against 21 us for `json.loads`): a
page of 20 scattered rows, the usual relevance page, costs about 0.2 ms instead of 0.4.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import zstandard

from ..records import SEARCH_RESULT_FIELDS
from .memory import duckdb_memory_limit, release_freed_memory

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

#: The record fields stored per row: a search result's (`records.SEARCH_RESULT_FIELDS`), and
#: `components`, which gives the namespace (`names.printed_namespace`).
RESULT_FIELDS = (*SEARCH_RESULT_FIELDS, "components")
#: Rows per block: a page's rows lie in different blocks in relevance order, so a block is
#: small (about 5 KB: one frame per row costs 15 us where 32 rows cost 43 us), while zstd still
#: finds the repeats between rows (Mathlib's doc-gen4 catalog: 36.9 MB of blocks and 2.5 MB of
#: row offsets for 306,807 declarations, 8% of the catalog).
BLOCK_ROWS = 8
RESULT_ARRAYS = ("result_blocks", "result_block_starts", "result_row_offsets")
#: Rows per Arrow batch read from DuckDB: one batch of result text (about 7 MB at Mathlib's
#: sizes) is held at a time, never the whole column.
BATCH_ROWS = 8192
# Each record line is parsed once (one `json_extract` of every field, where `->` per field
# would parse it once per field), and its fields are written back as one compact object. No
# ORDER BY: a sort would hold every row; the scan returns the rows in insertion order (DuckDB's
# `preserve_insertion_order`, on by default), which is position order, and that is checked.
_ROWS_SQL = "SELECT pos, json_object({fields})::VARCHAR AS row FROM (SELECT pos, json_extract(record, [{paths}]) AS v FROM declarations)".format(
    fields=", ".join(f"'{field}', v[{i}]" for i, field in enumerate(RESULT_FIELDS, start=1)),
    paths=", ".join(f"'$.{field}'" for field in RESULT_FIELDS),
)
_CODEC = "zstd"
_LEVEL = 3


def _codec() -> pa.Codec:
    # Imported here: the build writes with pyarrow's codec, serving reads with zstandard.
    import pyarrow as pa

    return pa.Codec(_CODEC, compression_level=_LEVEL)


_readers = threading.local()


def _decompressor() -> zstandard.ZstdDecompressor:
    """This thread's zstd reader (one may not serve two threads at once)."""
    found: zstandard.ZstdDecompressor | None = getattr(_readers, "decompressor", None)
    if found is None:
        found = _readers.decompressor = zstandard.ZstdDecompressor()
    return found


def _decoded(text: bytes) -> Any:
    """One row's JSON, as `json.loads` (the reference reader) gives it: read by `orjson`, and by
    `json.loads` when orjson refuses the text (a lone UTF-16 surrogate escape) or may have read
    an integer as a float. orjson reads an integer outside [-2**63, 2**64) as a float; the one
    field of a row that can hold such an integer is a name's numeric component (`components`,
    any natural number; a range's line and column are at most 2**31 - 1, `records.Position`),
    so a float there sends the row to `json.loads`."""
    try:
        row = orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
    if isinstance(row, dict) and any(type(c) is float for c in row.get("components") or ()):
        return json.loads(text)
    return row
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def write_result_rows(con: duckdb.DuckDBPyConnection) -> dict[str, np.ndarray]:
    """The three `RESULT_ARRAYS` from the `declarations` table of `con` (pos, record JSON line;
    the positions are 0..n-1 in insertion order, as the builder writes them), through
    `write_blocks`. A field a record lacks (a catalog from before the links) is stored as null.
    Raises `ValueError` as `write_blocks`."""
    blocks, starts, row_offsets = write_blocks(con, _ROWS_SQL, BLOCK_ROWS)
    return {"result_blocks": blocks, "result_block_starts": starts, "result_row_offsets": row_offsets}


def write_blocks(con: duckdb.DuckDBPyConnection, sql: str, block_rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A block store of the rows `sql` gives (columns `pos` and `row`, one row of text per
    position of the `declarations` table, in position order): (frames uint8, frame starts int64
    with blocks+1 entries, row offsets int64 with n+1 entries), `block_rows` consecutive
    positions per zstd frame (the layout the module docstring describes; `read_rows` reads it).

    Memory: one streamed batch of `BATCH_ROWS` rows at a time, plus the compressed frames and the
    row offsets (8 bytes per row); DuckDB's memory limit is `memory.READ_MEMORY_LIMIT` meanwhile,
    and restored after. Raises `ValueError` when the rows do not come in position order 0..n-1
    (the builder writes no such table)."""
    [(count,)] = con.execute("SELECT count(*) FROM declarations").fetchall()
    with duckdb_memory_limit(con):
        row_offsets, frames = _compressed_rows(con, sql, count, block_rows)
    starts = np.zeros(len(frames) + 1, dtype=np.int64)
    np.cumsum([len(f) for f in frames], out=starts[1:])
    blocks = np.frombuffer(b"".join(frames), dtype=np.uint8)
    release_freed_memory()
    return blocks, starts, row_offsets


def _compressed_rows(con: duckdb.DuckDBPyConnection, sql: str, count: int, block_rows: int) -> tuple[np.ndarray, list[bytes]]:
    """The row offsets (int64, count+1) and the zstd frame of each block of `block_rows`
    positions, from `sql` streamed in batches (which need not align with blocks)."""
    import pyarrow as pa

    codec = _codec()
    large_string = pa.large_string()
    row_offsets = np.zeros(count + 1, dtype=np.int64)
    frames: list[bytes] = []
    tail = b""  # the text of the rows after the last complete block
    done = 0  # rows read
    for batch in con.sql(sql).to_arrow_reader(BATCH_ROWS):
        size = len(batch)
        if done + size > count or not np.array_equal(batch.column("pos").to_numpy(zero_copy_only=False), np.arange(done, done + size)):
            raise ValueError(f"declarations rows do not come in position order 0..{count - 1} (at row {done})")
        # The Arrow string column's data buffer is already the rows' text and its offsets the
        # rows' offsets: no Python object per row.
        column = batch.column("row").cast(large_string)
        offsets = np.frombuffer(column.buffers()[1], dtype=np.int64)[column.offset : column.offset + size + 1]
        row_offsets[done + 1 : done + size + 1] = row_offsets[done] + (offsets[1:] - offsets[0])
        tail_start = int(row_offsets[done - done % block_rows])
        tail += memoryview(column.buffers()[2])[int(offsets[0]) : int(offsets[-1])] if size else b""
        done += size
        complete = done - done % block_rows
        bounds = row_offsets[(done - size) // block_rows * block_rows : complete + 1 : block_rows] - tail_start
        frames.extend(codec.compress(tail[int(a) : int(b)], asbytes=True) for a, b in pairwise(bounds))
        tail = tail[int(bounds[-1]) :] if len(bounds) else tail
    if done != count:
        raise ValueError(f"declarations has {done} rows in order, not {count}")
    if tail:
        frames.append(codec.compress(tail, asbytes=True))
    return row_offsets, frames


def read_result_rows(blocks: np.ndarray, block_starts: np.ndarray, row_offsets: np.ndarray, positions: np.ndarray) -> dict[int, dict[str, Any]]:
    """The result fields of each of `positions` (int array of valid positions, any order,
    repeats allowed) as `{position: {field: value}}` over `RESULT_FIELDS`, from the three
    `RESULT_ARRAYS` of one catalog (`read_rows` with `BLOCK_ROWS`)."""
    return read_rows(blocks, block_starts, row_offsets, BLOCK_ROWS, positions)


def read_rows(blocks: np.ndarray, block_starts: np.ndarray, row_offsets: np.ndarray, block_rows: int, positions: Iterable[int]) -> dict[int, dict[str, Any]]:
    """Each of `positions` (valid positions, any order, repeats allowed) decoded as
    `{position: row}` from a block store `write_blocks` wrote with `block_rows` (`blocks` uint8,
    `block_starts` and `row_offsets` int64 byte offsets); each block is decompressed once.
    Raises `zstandard.ZstdError` for a corrupt frame, `ValueError` for a frame of another size
    than its rows (a verified catalog's digests rule both out)."""
    reader = _decompressor()
    frames = memoryview(np.ascontiguousarray(blocks).data)  # sliced without a copy
    found: dict[int, dict[str, Any]] = {}
    block, text, base = -1, b"", 0
    for pos in sorted({int(p) for p in positions}):
        if pos // block_rows != block:
            block = pos // block_rows
            base = int(row_offsets[block * block_rows])
            size = int(row_offsets[min((block + 1) * block_rows, len(row_offsets) - 1)]) - base
            text = reader.decompress(frames[int(block_starts[block]) : int(block_starts[block + 1])], max_output_size=size)
            if len(text) != size:
                raise ValueError(f"block {block} holds {len(text)} bytes of rows, not {size}")
        found[pos] = _decoded(text[int(row_offsets[pos]) - base : int(row_offsets[pos + 1]) - base])
    return found
