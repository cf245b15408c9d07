"""Result rows: the fields a search result shows, stored for reading any page of rows at once.

A result page in relevance or text order lists declarations scattered over the whole catalog;
DuckDB reads each from a different compressed column segment (on the 800k synthetic catalog a
page of 10 scattered rows cost about 2.5 ms against 1 ms for 10 adjacent ones). So the index
(`catalog.index`) carries a copy of just the result fields, `RESULT_FIELDS` of each record as a
compact JSON object, in blocks of `BLOCK_ROWS` consecutive positions, each block one zstd
frame (pyarrow's codec; pyarrow is pinned, so the bytes are reproducible):

- `result_blocks.npy` (uint8): the frames, one after another;
- `result_block_starts.npy` (int64, blocks+1): where each frame starts;
- `result_block_sizes.npy` (int64, blocks): each block's size before compression (bytes).

A block decompressed is its rows' JSON objects, each followed by a newline (JSON text written
compactly holds no raw newline). Reading a row costs one block (about 30 us) and a `json.loads`.
"""

from __future__ import annotations

import json
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

#: The record fields a search result is made of (`engine.search._result`); `components` gives
#: the namespace (`names.printed_namespace`).
RESULT_FIELDS = ("name", "kind", "type", "module", "components", "range", "source_url", "doc_url")
#: Rows per block: 32 keeps a block near 20 KB (one frame read per row) while zstd still finds
#: the repeats between rows (on core v4.33: 5.7 MB for 52 MB of JSON).
BLOCK_ROWS = 32
RESULT_ARRAYS = ("result_blocks", "result_block_starts", "result_block_sizes")
_CODEC = "zstd"
_LEVEL = 3


def _codec() -> pa.Codec:
    return pa.Codec(_CODEC, compression_level=_LEVEL)


def write_result_rows(con: duckdb.DuckDBPyConnection) -> dict[str, np.ndarray]:
    """The three `RESULT_ARRAYS` from the `declarations` table of `con` (pos, record JSON line).
    A field a record lacks (a catalog from before the links) is stored as null."""
    fields = ", ".join(f"'{field}', j->'{field}'" for field in RESULT_FIELDS)
    # Each object is followed by a newline in SQL, so the Arrow string column's data buffer is
    # already the blocks' text: no Python object per row.
    column = (
        con.sql(f"SELECT json_object({fields})::VARCHAR || chr(10) AS row FROM (SELECT pos, record::JSON AS j FROM declarations) ORDER BY pos")
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
    frames = [codec.compress(data[int(a) : int(b)].tobytes(), asbytes=True) for a, b in zip(bounds[:-1], bounds[1:])]
    starts = np.zeros(len(frames) + 1, dtype=np.int64)
    np.cumsum([len(f) for f in frames], out=starts[1:])
    return {
        "result_blocks": np.frombuffer(b"".join(frames), dtype=np.uint8).copy(),
        "result_block_starts": starts,
        "result_block_sizes": np.diff(bounds).astype(np.int64),
    }


def read_result_rows(blocks: np.ndarray, block_starts: np.ndarray, block_sizes: np.ndarray, positions: np.ndarray) -> dict[int, dict[str, Any]]:
    """The result fields of each of `positions` (valid positions of the catalog whose arrays are
    given), as dicts keyed by position; each block is decompressed once."""
    codec = _codec()
    found: dict[int, dict[str, Any]] = {}
    wanted = sorted({int(p) for p in positions})
    block = -1
    lines: list[bytes] = []
    for pos in wanted:
        if pos // BLOCK_ROWS != block:
            block = pos // BLOCK_ROWS
            frame = blocks[int(block_starts[block]) : int(block_starts[block + 1])]
            lines = codec.decompress(frame, decompressed_size=int(block_sizes[block]), asbytes=True).split(b"\n")
        found[pos] = json.loads(lines[pos % BLOCK_ROWS])
    return found
