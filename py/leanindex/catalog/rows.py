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

Reading a row costs one small frame (about 15 us) and a `json.loads`.
"""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from ..records import SEARCH_RESULT_FIELDS

#: The record fields stored per row: a search result's (`records.SEARCH_RESULT_FIELDS`), and
#: `components`, which gives the namespace (`names.printed_namespace`).
RESULT_FIELDS = (*SEARCH_RESULT_FIELDS, "components")
#: Rows per block: a page's rows lie in different blocks in relevance order, so a block is
#: small (about 5 KB: one frame per row costs 15 us where 32 rows cost 43 us), while zstd still
#: finds the repeats between rows (Mathlib's doc-gen4 catalog: 36.9 MB of blocks and 2.5 MB of
#: row offsets for 306,807 declarations, 8% of the catalog).
BLOCK_ROWS = 8
RESULT_ARRAYS = ("result_blocks", "result_block_starts", "result_row_offsets")
_CODEC = "zstd"
_LEVEL = 3


def _codec() -> pa.Codec:
    return pa.Codec(_CODEC, compression_level=_LEVEL)


def write_result_rows(con: duckdb.DuckDBPyConnection) -> dict[str, np.ndarray]:
    """The three `RESULT_ARRAYS` from the `declarations` table of `con` (pos, record JSON line).
    A field a record lacks (a catalog from before the links) is stored as null."""
    fields = ", ".join(f"'{field}', j->'{field}'" for field in RESULT_FIELDS)
    # The Arrow string column's data buffer is already the rows' text and its offsets the rows'
    # offsets: no Python object per row.
    column = (
        con.sql(f"SELECT json_object({fields})::VARCHAR AS row FROM (SELECT pos, record::JSON AS j FROM declarations) ORDER BY pos")
        .to_arrow_table()
        .column("row")
        .combine_chunks()
        .cast(pa.large_string())
    )
    count = len(column)
    offsets = np.frombuffer(column.buffers()[1], dtype=np.int64)[column.offset : column.offset + count + 1]
    data = np.frombuffer(column.buffers()[2], dtype=np.uint8) if count else np.empty(0, dtype=np.uint8)
    bounds = offsets[np.append(np.arange(0, count, BLOCK_ROWS), count)] if count else np.zeros(1, dtype=np.int64)
    codec = _codec()
    frames = [codec.compress(data[int(a) : int(b)].tobytes(), asbytes=True) for a, b in pairwise(bounds)]
    starts = np.zeros(len(frames) + 1, dtype=np.int64)
    np.cumsum([len(f) for f in frames], out=starts[1:])
    return {
        "result_blocks": np.frombuffer(b"".join(frames), dtype=np.uint8).copy(),
        "result_block_starts": starts,
        "result_row_offsets": (offsets - offsets[0]).astype(np.int64) if count else np.zeros(1, dtype=np.int64),
    }


def read_result_rows(blocks: np.ndarray, block_starts: np.ndarray, row_offsets: np.ndarray, positions: np.ndarray) -> dict[int, dict[str, Any]]:
    """The result fields of each of `positions` (int array of valid positions, any order,
    repeats allowed) as `{position: {field: value}}` over `RESULT_FIELDS`, from the three
    `RESULT_ARRAYS` of one catalog (`blocks` uint8, `block_starts` and `row_offsets` int64 byte
    offsets); each block is decompressed once. Raises `pyarrow.lib.ArrowIOError` for a corrupt
    frame (a verified catalog's digests rule that out)."""
    codec = _codec()
    found: dict[int, dict[str, Any]] = {}
    block, text, base = -1, b"", 0
    for pos in sorted({int(p) for p in positions}):
        if pos // BLOCK_ROWS != block:
            block = pos // BLOCK_ROWS
            base = int(row_offsets[block * BLOCK_ROWS])
            size = int(row_offsets[min((block + 1) * BLOCK_ROWS, len(row_offsets) - 1)]) - base
            text = codec.decompress(blocks[int(block_starts[block]) : int(block_starts[block + 1])], decompressed_size=size, asbytes=True)
        found[pos] = json.loads(text[int(row_offsets[pos]) - base : int(row_offsets[pos + 1]) - base])
    return found
