"""The column layout of `declarations.parquet`, the canonical table of a catalog.

One row per constant in `Name.lt` order; `pos` is the row's position (0-based). Writer options
are fixed here because the file's sha256 is part of the manifest: the same records written with
the same pinned pyarrow give the same bytes (row groups are always `ROW_GROUP_ROWS` rows).
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson

from ..records import FLAG_FIELDS

ROW_GROUP_ROWS = 65_536

_STRINGS = pa.list_(pa.string())

# The record fields stored as they come, in both the Parquet file and the JSON reading.
_RECORD_FIELDS = [
    ("name", pa.string()),
    ("kind", pa.string()),
    ("module", pa.string()),
    ("type", pa.string()),
    ("type_constants", _STRINGS),
    ("level_params", _STRINGS),
    ("doc", pa.string()),
]
_FLAG_FIELDS = [(flag, pa.bool_()) for flag in FLAG_FIELDS]

SCHEMA = pa.schema(
    [
        ("pos", pa.int64()),
        *_RECORD_FIELDS,
        ("range_start_line", pa.int32()),
        ("range_start_column", pa.int32()),
        ("range_end_line", pa.int32()),
        ("range_end_column", pa.int32()),
        *_FLAG_FIELDS,
        ("value_constants", _STRINGS),
    ]
)

PARQUET_OPTIONS: dict[str, Any] = {
    "version": "2.6",
    "compression": "zstd",
    "compression_level": 3,
    "use_dictionary": ["kind", "module"],
    "write_statistics": True,
    "data_page_size": 1 << 20,
    "data_page_version": "1.0",
    "store_schema": True,
    "write_page_index": False,
}


_POSITION = pa.struct([("line", pa.int32()), ("column", pa.int32())])

# How pyarrow reads a validated declaration line. `components` is left out: the stored record
# line keeps them (some printed names do not read back to their components), and the serving
# tables hold their namespace key.
_JSON_SCHEMA = pa.schema(
    [
        *_RECORD_FIELDS,
        ("range", pa.struct([("start", _POSITION), ("end", _POSITION)])),
        *_FLAG_FIELDS,
        ("value_constants", _STRINGS),
    ]
)


def table_from_lines(lines: list[bytes], start_pos: int) -> pa.Table:
    """The canonical rows of already validated declaration lines, positions from `start_pos`.

    Parsing is pyarrow's JSON reader (C++), which is what keeps the builder fast; it only ever
    sees lines that `DeclarationRecord` accepted, so types cannot disagree. An absent optional
    flag (`type_fallback`) is false, as in the record model.
    """
    data = b"\n".join(lines)
    parsed = pajson.read_json(
        io.BytesIO(data),
        read_options=pajson.ReadOptions(use_threads=True, block_size=max(len(data) + 1, 1 << 20)),
        parse_options=pajson.ParseOptions(explicit_schema=_JSON_SCHEMA, unexpected_field_behavior="ignore"),
    ).combine_chunks()
    ranges = parsed.column("range")
    columns = {
        "pos": pa.array(np.arange(start_pos, start_pos + parsed.num_rows, dtype=np.int64)),
        **{name: parsed.column(name) for name in ("name", "kind", "module", "type", "type_constants", "level_params", "doc")},
        "range_start_line": pc.struct_field(ranges, ["start", "line"]),
        "range_start_column": pc.struct_field(ranges, ["start", "column"]),
        "range_end_line": pc.struct_field(ranges, ["end", "line"]),
        "range_end_column": pc.struct_field(ranges, ["end", "column"]),
        **{flag: pc.fill_null(parsed.column(flag), False) for flag in FLAG_FIELDS},
        "value_constants": parsed.column("value_constants"),
    }
    return pa.Table.from_pydict(columns, schema=SCHEMA).combine_chunks()
