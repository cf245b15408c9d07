"""The column layout of `declarations.parquet`, the canonical table of a catalog.

One row per constant in `Name.lt` order; `pos` is the row's position (0-based). Writer options
are fixed here because the file's sha256 is part of the manifest: the same records written with
the same pinned pyarrow give the same bytes (row groups are always `ROW_GROUP_ROWS` rows).
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from ..records import FLAG_FIELDS, DeclarationRecord

ROW_GROUP_ROWS = 65_536

_STRINGS = pa.list_(pa.string())

SCHEMA = pa.schema(
    [
        ("pos", pa.int64()),
        ("name", pa.string()),
        ("components", pa.string()),
        ("kind", pa.string()),
        ("module", pa.string()),
        ("type", pa.string()),
        ("type_constants", _STRINGS),
        ("level_params", _STRINGS),
        ("doc", pa.string()),
        ("range_start_line", pa.int32()),
        ("range_start_column", pa.int32()),
        ("range_end_line", pa.int32()),
        ("range_end_column", pa.int32()),
        *[(flag, pa.bool_()) for flag in FLAG_FIELDS],
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


class ColumnBuffer:
    """Accumulates records column by column until a row group is full."""

    def __init__(self) -> None:
        self.columns: dict[str, list[Any]] = {name: [] for name in SCHEMA.names}

    def __len__(self) -> int:
        return len(self.columns["pos"])

    def add(self, pos: int, record: DeclarationRecord) -> None:
        """Append one record at position `pos`."""
        c = self.columns
        c["pos"].append(pos)
        c["name"].append(record.name)
        c["components"].append(json.dumps(record.components, ensure_ascii=False, separators=(",", ":")))
        c["kind"].append(record.kind.value)
        c["module"].append(record.module)
        c["type"].append(record.type)
        c["type_constants"].append(record.type_constants)
        c["level_params"].append(record.level_params)
        c["doc"].append(record.doc)
        r = record.range
        c["range_start_line"].append(r.start.line if r else None)
        c["range_start_column"].append(r.start.column if r else None)
        c["range_end_line"].append(r.end.line if r else None)
        c["range_end_column"].append(r.end.column if r else None)
        for flag in FLAG_FIELDS:
            c[flag].append(getattr(record, flag))
        c["value_constants"].append(record.value_constants)

    def take(self) -> pa.Table:
        """The buffered rows as a table; the buffer is emptied."""
        table = pa.Table.from_pydict(self.columns, schema=SCHEMA)
        self.columns = {name: [] for name in SCHEMA.names}
        return table
